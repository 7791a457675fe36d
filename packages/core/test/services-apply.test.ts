import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import {
  AlertChannel,
  BrowserCheck,
  CheckGroup,
  Dashboard,
  HeartbeatCheck,
  MaintenanceWindow,
  PluginAlertChannel,
  PluginCheck,
  TcpCheck,
} from '../src/constructs/index.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { ApplyError, type ApplyPlan, type ApplyProgress } from '../src/services/apply.js';
import * as v from 'valibot';
import { defineCheckType } from '../src/model/check-type.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { FakeTransport } from '../src/testing/fake-transport.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import type { VigilStorage } from '../src/ports/storage.js';
import { ACCOUNT_A, ACCOUNT_B } from './helpers.js';

function setup(storage: VigilStorage = memoryStorage()) {
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock: new FakeClock('2026-05-01T12:00:00.000Z') });
  return { vigil, storage };
}

async function ready(storage?: VigilStorage) {
  const s = setup(storage);
  await s.vigil.accounts.ensure(ACCOUNT_A);
  await s.vigil.accounts.ensure(ACCOUNT_B);
  return s;
}

/** A small monitoring setup: a channel, a group, two checks (one in the group), a window and a dashboard. */
function shop(overrides: { dbPort?: number; muted?: boolean } = {}) {
  const oncall = new AlertChannel('oncall', { type: 'WEBHOOK', config: { name: 'On-call', url: 'https://hooks.example.com/oncall' } });
  const orders = new CheckGroup('orders', { name: 'Orders', tags: ['orders'], concurrency: 2, alertChannels: [oncall] });
  const db = new TcpCheck('orders-db', {
    name: 'Orders DB',
    request: { hostname: 'db.internal', port: overrides.dbPort ?? 5432 },
    frequency: 5,
    tags: ['db'],
    group: orders,
    alertChannels: ['oncall'],
    ...(overrides.muted === undefined ? {} : { muted: overrides.muted }),
  });
  const cache = new TcpCheck('cache', { name: 'Cache', request: { hostname: 'cache.internal', port: 6379 }, tags: ['cache'] });
  const window = new MaintenanceWindow('nightly', {
    name: 'Nightly backup', startsAt: '2026-05-01T02:00:00Z', endsAt: '2026-05-01T03:00:00Z', repeatUnit: 'DAY', tags: ['db'],
  });
  const board = new Dashboard('ops', { header: 'Operations', tags: ['orders', 'cache'], customUrl: 'ops-board' });
  return { oncall, orders, db, cache, window, board, all: [oncall, orders, db, cache, window, board] };
}

/** The store's next insert into `repository` fails as a full disk would; later ones go through. */
function failNextInsert(repository: { insert: (...args: never[]) => Promise<unknown> }): void {
  const insert = repository.insert.bind(repository);
  let failed = false;
  repository.insert = (async (...args: never[]) => {
    if (failed) return insert(...args);
    failed = true;
    throw new Error('disk full');
  }) as typeof repository.insert;
}

const actions = (plan: ApplyPlan) => plan.entries.map((e) => `${e.action} ${e.kind} ${e.logicalId}`);

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error('expected a rejection');
  return err;
}

async function counts(vigil: Vigil) {
  const s = vigil.storage;
  return {
    checks: (await s.checks.listAll(ACCOUNT_A)).length,
    groups: (await s.checkGroups.listAll(ACCOUNT_A)).length,
    channels: (await s.alertChannels.listAll(ACCOUNT_A)).length,
    windows: (await s.maintenanceWindows.listAll(ACCOUNT_A)).length,
    dashboards: (await s.dashboards.list(ACCOUNT_A)).total,
    managed: (await s.managedResources.list(ACCOUNT_A, 'default')).length,
  };
}

describe('vigil.apply: checks as code', () => {
  it('creates every resource in order, references resolved, and answers the plan it carried out', async () => {
    const { vigil } = await ready();
    const { all } = shop();
    const plan = await vigil.apply(ACCOUNT_A, all);
    expect(actions(plan)).toEqual([
      'create AlertChannel oncall',
      'create CheckGroup orders',
      'create Check orders-db',
      'create Check cache',
      'create MaintenanceWindow nightly',
      'create Dashboard ops',
    ]);
    expect(plan.summary).toEqual({ create: 6, update: 0, delete: 0, unchanged: 0 });
    expect(plan.dryRun).toBe(false);
    const byId = Object.fromEntries(plan.entries.map((e) => [e.logicalId, e.id]));
    const channel = await vigil.alertChannels.get(ACCOUNT_A, byId.oncall);
    const group = await vigil.checkGroups.get(ACCOUNT_A, byId.orders);
    const db = await vigil.checks.get(ACCOUNT_A, byId['orders-db']);
    expect(group.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
    expect(db).toMatchObject({ name: 'Orders DB', checkType: 'TCP', groupId: group.id, frequency: 5, alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }] });
    // A check that names no channels is not subscribed to every channel (autoAssignAlerts is off for code).
    expect((await vigil.checks.get(ACCOUNT_A, byId.cache)).alertChannelSubscriptions).toEqual([]);
    expect((await vigil.dashboards.get(ACCOUNT_A, byId.ops)).customUrl).toBe('ops-board');
    expect(await vigil.storage.managedResources.list(ACCOUNT_A, 'default')).toHaveLength(6);
  });

  it('is idempotent: the same constructs again are all unchanged, and nothing is written', async () => {
    const { vigil } = await ready();
    await vigil.apply(ACCOUNT_A, shop().all);
    const before = await vigil.storage.checks.listAll(ACCOUNT_A);
    // New construct objects with the same content, as a second run of a config file makes them.
    const again = await vigil.apply(ACCOUNT_A, shop().all);
    expect(again.summary).toEqual({ create: 0, update: 0, delete: 0, unchanged: 6 });
    expect(again.entries.every((e) => e.id !== undefined)).toBe(true);
    expect(await vigil.storage.checks.listAll(ACCOUNT_A)).toEqual(before);
  });

  it('updates only what differs, naming each changed field with its stored and desired value', async () => {
    const { vigil } = await ready();
    const first = await vigil.apply(ACCOUNT_A, shop().all);
    const dbId = first.entries.find((e) => e.logicalId === 'orders-db')!.id!;
    // A field the construct does not set, changed by hand, is left alone.
    await vigil.checks.update(ACCOUNT_A, dbId, { description: 'edited in the UI' });
    const plan = await vigil.apply(ACCOUNT_A, shop({ dbPort: 6432 }).all);
    expect(plan.summary).toEqual({ create: 0, update: 1, delete: 0, unchanged: 5 });
    const update = plan.entries.find((e) => e.action === 'update')!;
    expect(update).toMatchObject({ kind: 'Check', logicalId: 'orders-db', id: dbId, type: 'TCP', name: 'Orders DB' });
    expect(update.changes).toEqual([
      { field: 'request', from: expect.objectContaining({ port: 5432 }), to: expect.objectContaining({ port: 6432 }) },
    ]);
    const stored = await vigil.checks.get(ACCOUNT_A, dbId);
    expect(stored.checkType === 'TCP' && stored.request.port).toBe(6432);
    expect(stored.description).toBe('edited in the UI');
  });

  it('puts a field the construct set back when it is changed by hand, and to its default when the construct drops it', async () => {
    const { vigil } = await ready();
    const first = await vigil.apply(ACCOUNT_A, shop({ muted: true }).all);
    const dbId = first.entries.find((e) => e.logicalId === 'orders-db')!.id!;
    await vigil.checks.update(ACCOUNT_A, dbId, { frequency: 60 });
    const reverted = await vigil.apply(ACCOUNT_A, shop({ muted: true }).all);
    expect(reverted.entries.find((e) => e.logicalId === 'orders-db')!.changes).toEqual([{ field: 'frequency', from: 60, to: 5 }]);
    const dropped = await vigil.apply(ACCOUNT_A, shop().all);
    expect(dropped.entries.find((e) => e.logicalId === 'orders-db')!.changes).toEqual([{ field: 'muted', from: true, to: false }]);
    expect((await vigil.checks.get(ACCOUNT_A, dbId)).muted).toBe(false);
    expect((await vigil.apply(ACCOUNT_A, shop().all)).summary.unchanged).toBe(6);
  });

  it('in a dry run answers the plan and writes nothing', async () => {
    const { vigil } = await ready();
    const dry = await vigil.apply(ACCOUNT_A, shop().all, { dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.summary.create).toBe(6);
    expect(dry.entries.every((e) => e.id === undefined)).toBe(true);
    expect(await counts(vigil)).toEqual({ checks: 0, groups: 0, channels: 0, windows: 0, dashboards: 0, managed: 0 });
    // plan() is the same dry run; references to resources yet to be made show as such.
    await vigil.apply(ACCOUNT_A, [new TcpCheck('cache', { name: 'Cache', request: { hostname: 'cache', port: 1 } })]);
    const planned = await vigil.plan(ACCOUNT_A, [
      new AlertChannel('mail', { type: 'EMAIL', config: { address: 'ops@example.com' } }),
      new TcpCheck('cache', { name: 'Cache', request: { hostname: 'cache', port: 1 }, alertChannels: ['mail'] }),
    ]);
    expect(planned.entries.find((e) => e.logicalId === 'cache')!.changes).toEqual([
      { field: 'alertChannelSubscriptions', from: [], to: [{ alertChannelId: '(new AlertChannel "mail")', activated: true }] },
    ]);
    expect((await counts(vigil)).channels).toBe(0);
  });

  it('prunes, with prune only, what the project made and no longer defines, last made first; never what was made by hand', async () => {
    const { vigil } = await ready();
    const s = shop();
    await vigil.apply(ACCOUNT_A, s.all);
    const byHand = await vigil.checks.create(ACCOUNT_A, 'TCP', { name: 'By hand', request: { hostname: 'h', port: 1 } });
    const kept = await vigil.apply(ACCOUNT_A, [s.oncall, s.cache]);
    expect(kept.summary).toEqual({ create: 0, update: 0, delete: 0, unchanged: 2 });
    expect(kept.orphans.map((o) => `${o.kind} ${o.logicalId}`)).toEqual(['Dashboard ops', 'MaintenanceWindow nightly', 'Check orders-db', 'CheckGroup orders']);
    expect((await counts(vigil)).checks).toBe(3);

    const pruned = await vigil.apply(ACCOUNT_A, [s.oncall, s.cache], { prune: true });
    expect(actions(pruned)).toEqual([
      'unchanged AlertChannel oncall',
      'unchanged Check cache',
      'delete Dashboard ops',
      'delete MaintenanceWindow nightly',
      'delete Check orders-db',
      'delete CheckGroup orders',
    ]);
    expect(pruned.orphans).toEqual([]);
    expect(await counts(vigil)).toEqual({ checks: 2, groups: 0, channels: 1, windows: 0, dashboards: 0, managed: 2 });
    expect(await vigil.storage.checks.get(ACCOUNT_A, byHand.id)).not.toBeNull();
    // Everything gone, with prune: the hand-made check stays.
    await vigil.apply(ACCOUNT_A, [], { prune: true });
    expect((await vigil.storage.checks.listAll(ACCOUNT_A)).map((c) => c.name)).toEqual(['By hand']);
  });

  it('refuses to prune a group that still holds a check made by hand, before writing anything', async () => {
    const { vigil } = await ready();
    const s = shop();
    const first = await vigil.apply(ACCOUNT_A, s.all);
    const groupId = first.entries.find((e) => e.logicalId === 'orders')!.id as number;
    await vigil.checks.create(ACCOUNT_A, 'TCP', { name: 'Hand-made member', request: { hostname: 'h', port: 1 }, groupId });
    const err = await failure(vigil.apply(ACCOUNT_A, [s.oncall, s.cache], { prune: true }));
    expect(err).toBeInstanceOf(ConstructValidationError);
    expect(err.message).toContain('CheckGroup "orders": cannot be deleted: it still holds "Hand-made member"');
    expect((await counts(vigil)).dashboards).toBe(1);
  });

  it('keeps projects apart: each prunes only its own', async () => {
    const { vigil } = await ready();
    await vigil.apply(ACCOUNT_A, [new TcpCheck('api', { name: 'API of shop', request: { hostname: 'a', port: 1 } })], { project: 'shop' });
    await vigil.apply(ACCOUNT_A, [new TcpCheck('api', { name: 'API of billing', request: { hostname: 'b', port: 1 } })], { project: 'billing' });
    expect((await vigil.storage.checks.listAll(ACCOUNT_A)).map((c) => c.name)).toEqual(['API of shop', 'API of billing']);
    await vigil.apply(ACCOUNT_A, [], { project: 'billing', prune: true });
    expect((await vigil.storage.checks.listAll(ACCOUNT_A)).map((c) => c.name)).toEqual(['API of shop']);
    // And accounts apart: the same logical id in another account is another resource.
    const b = await vigil.apply(ACCOUNT_B, [new TcpCheck('api', { name: 'API of shop', request: { hostname: 'a', port: 1 } })], { project: 'shop' });
    expect(b.summary.create).toBe(1);
    expect(await failure(vigil.apply(ACCOUNT_A, [], { project: 'no spaces' }))).toMatchObject({ code: 'VALIDATION' });
  });

  it('resolves references by construct or logical id, and takes in constructs referred to as objects', async () => {
    const { vigil } = await ready();
    const pager = new AlertChannel('pager', { type: 'PAGING_A', config: { serviceKey: 'pd-secret-key' } });
    const group = new CheckGroup('edge', { name: 'Edge' });
    // Only the check is passed: its group and channel come along.
    const plan = await vigil.apply(ACCOUNT_A, [
      new TcpCheck('lb', { name: 'LB', request: { hostname: 'lb', port: 443 }, group, alertChannels: [{ channel: pager, activated: false }] }),
    ]);
    expect(actions(plan)).toEqual(['create AlertChannel pager', 'create CheckGroup edge', 'create Check lb']);
    const ids = Object.fromEntries(plan.entries.map((e) => [e.logicalId, e.id]));
    expect(await vigil.checks.get(ACCOUNT_A, ids.lb)).toMatchObject({ groupId: ids.edge, alertChannelSubscriptions: [{ alertChannelId: ids.pager, activated: false }] });
    // The channel's secret is sealed at rest and compares equal when applied again.
    expect(JSON.stringify(await vigil.storage.alertChannels.get(ACCOUNT_A, ids.pager as number))).not.toContain('pd-secret-key');
    const again = await vigil.apply(ACCOUNT_A, [pager, group, new TcpCheck('lb', { name: 'LB', request: { hostname: 'lb', port: 443 }, group: 'edge', alertChannels: [{ channel: 'pager', activated: false }] })]);
    expect(again.summary.unchanged).toBe(3);
    // A changed secret shows masked, with a note.
    const rotated = await vigil.plan(ACCOUNT_A, [new AlertChannel('pager', { type: 'PAGING_A', config: { serviceKey: 'rotated' } })]);
    expect(rotated.entries[0]!.changes).toEqual([
      { field: 'config', from: { serviceKey: '********', account: null, serviceName: null }, to: { serviceKey: '********', account: null, serviceName: null }, note: 'a secret value changes' },
    ]);
    expect(JSON.stringify(rotated)).not.toContain('rotated');
  });

  it('shows a webhook\'s locked headers and query parameters masked in a plan, before and after', async () => {
    const { vigil } = await ready();
    const hook = (token: string) => new AlertChannel('hook', {
      type: 'WEBHOOK',
      config: {
        name: 'Hook', url: 'https://hooks.example.com/in',
        headers: [{ key: 'Authorization', value: `Bearer ${token}`, locked: true }, { key: 'X-Team', value: 'payments', locked: false }],
        queryParameters: [{ key: 'token', value: `q-${token}`, locked: true }],
      },
    });
    await vigil.apply(ACCOUNT_A, [hook('OLDSECRET123')]);
    const plan = await vigil.plan(ACCOUNT_A, [hook('NEWSECRET456')]);
    const text = JSON.stringify(plan);
    expect(text).not.toContain('OLDSECRET123');
    expect(text).not.toContain('NEWSECRET456');
    expect(plan.entries[0]!.changes).toMatchObject([{ field: 'config', note: 'a secret value changes' }]);
    const shown = plan.entries[0]!.changes![0]!.to as { headers: unknown[] };
    expect(shown.headers).toEqual([
      { key: 'Authorization', value: '********', locked: true },
      { key: 'X-Team', value: 'payments', locked: false },
    ]);
  });

  it('names a channel that subscribes new checks itself (autoSubscribe) only when the construct lists it', async () => {
    const { vigil } = await ready();
    const everyone = new AlertChannel('everyone', { type: 'EMAIL', config: { address: 'all@example.com' }, autoSubscribe: true });
    const team = new AlertChannel('team', { type: 'EMAIL', config: { address: 'team@example.com' } });
    const plan = await vigil.apply(ACCOUNT_A, [everyone, team, new TcpCheck('svc', { name: 'Svc', request: { hostname: 's', port: 1 }, alertChannels: [team] })]);
    const ids = Object.fromEntries(plan.entries.map((e) => [e.logicalId, e.id]));
    expect((await vigil.checks.get(ACCOUNT_A, ids.svc)).alertChannelSubscriptions).toEqual([{ alertChannelId: ids.team, activated: true }]);
    expect((await vigil.apply(ACCOUNT_A, [everyone, team, new TcpCheck('svc', { name: 'Svc', request: { hostname: 's', port: 1 }, alertChannels: [team] })])).summary.unchanged).toBe(3);
  });

  it('validates every construct first: one error names each construct and field, and nothing is written', async () => {
    const { vigil } = await ready();
    const err = await failure(vigil.apply(ACCOUNT_A, [
      ...shop().all,
      new TcpCheck('bad-port', { name: 'Bad', request: { hostname: 'x', port: 70000 } }),
      new Dashboard('no-header', {} as never),
      new TcpCheck('typo', { name: 'Typo', request: { hostname: 'x', port: 1 }, frequncy: 5 } as never),
      new TcpCheck('lost', { name: 'Lost', request: { hostname: 'x', port: 1 }, group: 'nowhere', alertChannels: ['oncall', 'oncall'] }),
      new MaintenanceWindow('backwards', { name: 'W', startsAt: '2026-05-02T00:00:00Z', endsAt: '2026-05-01T00:00:00Z', repeatUnit: 'DAY' }),
      new TcpCheck('Bad id!', { name: 'Id', request: { hostname: 'x', port: 1 } }),
      new TcpCheck('cache', { name: 'Second cache', request: { hostname: 'x', port: 1 } }),
      { name: 'not a construct' },
    ]));
    expect(err).toBeInstanceOf(ConstructValidationError);
    const issues = (err as ConstructValidationError).constructIssues.map((i) => `${i.construct} | ${i.path} | ${i.message}`);
    expect(issues).toEqual(expect.arrayContaining([
      'TcpCheck "bad-port" | request.port | must be between 1 and 65535',
      'Dashboard "no-header" | header | is required',
      'TcpCheck "typo" | frequncy | is not a field of TcpCheck',
      'TcpCheck "lost" | group | names "nowhere", which is no CheckGroup construct of this set',
      'TcpCheck "lost" | alertChannels.1 | names the alert channel "oncall" a second time',
      'MaintenanceWindow "backwards" | endsAt | must be after startsAt',
      'TcpCheck "Bad id!" | logicalId | must start with a letter or digit and hold only letters, digits and _ . : @ / -',
      'TcpCheck "cache" | logicalId | is taken by another Check construct (TcpCheck "cache"); logical ids are unique per kind',
      'constructs[13] |  | is not a construct (TcpCheck, CheckGroup, AlertChannel, ...) but object',
    ]));
    expect(err.message).toMatch(/^8 constructs are invalid; nothing was applied:\n/);
    expect(err.message).toContain('\n  TcpCheck "bad-port": request.port must be between 1 and 65535\n');
    expect(await counts(vigil)).toEqual({ checks: 0, groups: 0, channels: 0, windows: 0, dashboards: 0, managed: 0 });
  });

  it('checks what the store must confirm before writing: ids of hand-made groups and channels, free dashboard URLs, served check types', async () => {
    const { vigil } = await ready();
    await vigil.dashboards.create(ACCOUNT_B, { header: 'Theirs', customUrl: 'taken' });
    const err = await failure(vigil.apply(ACCOUNT_A, [
      new TcpCheck('a', { name: 'A', request: { hostname: 'x', port: 1 }, groupId: 999, alertChannelSubscriptions: [{ alertChannelId: 42 }] }),
      new Dashboard('d', { header: 'Mine', customUrl: 'taken' }),
      new PluginCheck('dns', 'DNS', { name: 'DNS' }),
    ]));
    const issues = (err as ConstructValidationError).constructIssues.map((i) => `${i.construct} | ${i.path} | ${i.message}`);
    expect(issues).toEqual([
      'TcpCheck "a" | alertChannelSubscriptions.0.alertChannelId | is not an alert channel of this account',
      'TcpCheck "a" | groupId | is not a check group of this account',
      'PluginCheck "dns" | checkType | DNS is not a check type this Vigil serves (TCP, API, BROWSER, HEARTBEAT)',
      'Dashboard "d" | customUrl | "taken" is already taken by another dashboard',
    ]);
    expect((await counts(vigil)).checks).toBe(0);
  });

  it('replaces a check whose type changes, and makes again a resource deleted by hand', async () => {
    const { vigil } = await ready();
    const first = await vigil.apply(ACCOUNT_A, [new TcpCheck('svc', { name: 'Svc', request: { hostname: 's', port: 1 } })]);
    const oldId = first.entries[0]!.id;
    const replaced = await vigil.apply(ACCOUNT_A, [
      new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } }),
    ]);
    // The new one is made first; the old one goes after it.
    expect(actions(replaced)).toEqual(['create Check svc', 'delete Check svc']);
    expect(replaced.entries[1]).toMatchObject({ id: oldId, type: 'TCP', reason: 'its checkType changes from TCP to HEARTBEAT, which needs a new resource' });
    const newId = replaced.entries[0]!.id!;
    expect(await vigil.storage.checks.get(ACCOUNT_A, oldId as string)).toBeNull();
    expect((await vigil.checks.get(ACCOUNT_A, newId)).checkType).toBe('HEARTBEAT');
    // The heartbeat's ping token is the store's, not the construct's: applying again changes nothing.
    expect((await vigil.apply(ACCOUNT_A, [new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } })])).summary.unchanged).toBe(1);

    await vigil.checks.delete(ACCOUNT_A, newId);
    const again = await vigil.apply(ACCOUNT_A, [new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } })]);
    expect(again.entries[0]).toMatchObject({ action: 'create', reason: 'the resource it made before is gone' });
  });

  it('keeps the old resource when the new one of another type cannot be made; applying again replaces it', async () => {
    const storage = memoryStorage();
    const { vigil } = await ready(storage);
    const first = await vigil.apply(ACCOUNT_A, [new TcpCheck('svc', { name: 'Svc', request: { hostname: 's', port: 1 } })]);
    const oldId = first.entries[0]!.id as string;
    failNextInsert(storage.checks);
    const heartbeat = () => new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } });
    const err = await failure(vigil.apply(ACCOUNT_A, [heartbeat()]));
    expect(err).toBeInstanceOf(ApplyError);
    expect(err.message).toBe('Could not create Check "svc": disk full');
    // Nothing was deleted: the TCP check still runs, and its record still names it.
    expect((await vigil.checks.get(ACCOUNT_A, oldId)).checkType).toBe('TCP');
    expect((await storage.managedResources.list(ACCOUNT_A, 'default')).map((r) => r.resourceId)).toEqual([oldId]);

    const again = await vigil.apply(ACCOUNT_A, [heartbeat()]);
    expect(actions(again)).toEqual(['create Check svc', 'delete Check svc']);
    expect(await vigil.storage.checks.get(ACCOUNT_A, oldId)).toBeNull();
    expect((await storage.managedResources.list(ACCOUNT_A, 'default')).map((r) => r.resourceId)).toEqual([String(again.entries[0]!.id)]);
  });

  it('names a replaced resource it could not delete when a later step fails, which still exists for you to delete', async () => {
    const storage = memoryStorage();
    const { vigil } = await ready(storage);
    const first = await vigil.apply(ACCOUNT_A, [new TcpCheck('svc', { name: 'Svc', request: { hostname: 's', port: 1 } })]);
    const oldId = first.entries[0]!.id as string;
    storage.dashboards.insert = async () => {
      throw new Error('disk full');
    };
    const err = await failure(vigil.apply(ACCOUNT_A, [
      new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } }),
      new Dashboard('ops', { header: 'Operations', customUrl: 'ops-left-behind' }),
    ]));
    expect(err).toBeInstanceOf(ApplyError);
    expect((err as ApplyError).leftBehind).toEqual([expect.objectContaining({ action: 'delete', kind: 'Check', logicalId: 'svc', id: oldId })]);
    expect(err.message).toBe(`Could not create Dashboard "ops": disk full. Replaced but not deleted, delete by hand: Check "svc" (${oldId})`);
    expect((await vigil.checks.get(ACCOUNT_A, oldId)).checkType).toBe('TCP');
  });

  it('moves the checks subscribed to a channel whose type changes to its successor before the old channel goes', async () => {
    const { vigil } = await ready();
    const setupWith = (channel: AlertChannel) => [channel, new TcpCheck('db', { name: 'DB', request: { hostname: 'db', port: 1 }, alertChannels: ['oncall'] })];
    const first = await vigil.apply(ACCOUNT_A, setupWith(new AlertChannel('oncall', { type: 'WEBHOOK', config: { name: 'On-call', url: 'https://hooks.example.com/oncall' } })));
    const oldChannel = first.entries[0]!.id!;
    const replaced = await vigil.apply(ACCOUNT_A, setupWith(new AlertChannel('oncall', { type: 'EMAIL', config: { address: 'oncall@example.com' } })));
    expect(actions(replaced)).toEqual(['create AlertChannel oncall', 'update Check db', 'delete AlertChannel oncall']);
    const newChannel = replaced.entries[0]!.id!;
    expect(newChannel).not.toBe(oldChannel);
    const db = await vigil.checks.get(ACCOUNT_A, first.entries[1]!.id!);
    expect(db.alertChannelSubscriptions).toEqual([{ alertChannelId: newChannel, activated: true }]);
    expect((await vigil.storage.alertChannels.listAll(ACCOUNT_A)).map((c) => [c.id, c.type])).toEqual([[newChannel, 'EMAIL']]);
    expect((await vigil.apply(ACCOUNT_A, setupWith(new AlertChannel('oncall', { type: 'EMAIL', config: { address: 'oncall@example.com' } })))).summary.unchanged).toBe(2);
  });

  it('compares secret environment variables by their value, stores them sealed, and shows them masked', async () => {
    const { vigil } = await ready();
    const check = (token: string) => new BrowserCheck('login', {
      name: 'Login',
      script: 'await page.goto(process.env.BASE_URL)',
      environmentVariables: [{ key: 'BASE_URL', value: 'https://shop.example.com' }, { key: 'TOKEN', value: token, secret: true }],
    });
    const first = await vigil.apply(ACCOUNT_A, [check('s3cr3t-one')]);
    expect(JSON.stringify(await vigil.storage.checks.listAll(ACCOUNT_A))).not.toContain('s3cr3t-one');
    expect((await vigil.apply(ACCOUNT_A, [check('s3cr3t-one')])).summary.unchanged).toBe(1);
    const rotated = await vigil.apply(ACCOUNT_A, [check('s3cr3t-two')]);
    expect(rotated.entries[0]!.changes).toEqual([{
      field: 'environmentVariables',
      from: [{ key: 'BASE_URL', value: 'https://shop.example.com', locked: false, secret: false }, { key: 'TOKEN', value: '********', locked: false, secret: true }],
      to: [{ key: 'BASE_URL', value: 'https://shop.example.com', locked: false, secret: false }, { key: 'TOKEN', value: '********', locked: false, secret: true }],
      note: 'a secret value changes',
    }]);
    expect(JSON.stringify(rotated)).not.toContain('s3cr3t');
    const forRun = await vigil.checks.getForRun(ACCOUNT_A, first.entries[0]!.id as string);
    expect(forRun.environment.TOKEN).toBe('s3cr3t-two');
  });

  it('reports progress for each step that writes', async () => {
    const { vigil } = await ready();
    const events: ApplyProgress[] = [];
    await vigil.apply(ACCOUNT_A, shop().all.slice(0, 3), { onProgress: (p) => events.push(structuredClone(p)) });
    expect(events.map((e) => `${e.phase} ${e.done}/${e.total} ${e.entry.logicalId}`)).toEqual([
      'start 0/3 oncall', 'done 1/3 oncall', 'start 1/3 orders', 'done 2/3 orders', 'start 2/3 orders-db', 'done 3/3 orders-db',
    ]);
  });

  it('stops at a failed step with what was done before it; applying again finishes the work', async () => {
    const storage = memoryStorage();
    failNextInsert(storage.dashboards);
    const { vigil } = await ready(storage);
    const err = await failure(vigil.apply(ACCOUNT_A, shop().all));
    expect(err).toBeInstanceOf(ApplyError);
    expect(err.message).toBe('Could not create Dashboard "ops": disk full');
    expect((err as ApplyError).completed.map((e) => e.logicalId)).toEqual(['oncall', 'orders', 'orders-db', 'cache', 'nightly']);
    const again = await vigil.apply(ACCOUNT_A, shop().all);
    expect(actions(again).filter((a) => !a.startsWith('unchanged'))).toEqual(['create Dashboard ops']);
  });

  it('applies check types and channel types that plugins add, validated by their schemas', async () => {
    const dns = defineCheckType({ checkType: 'DNS', entries: { query: v.object({ name: v.string(), recordType: v.picklist(['A', 'AAAA']) }) } });
    const ntfy = new FakeTransport('NTFY', v.object({ topic: v.pipe(v.string(), v.minLength(3, 'must be at least 3 characters')) }));
    const vigil = createVigil({ storage: memoryStorage(), secretKey: randomBytes(32), checkTypes: [dns], transports: [ntfy] });
    await vigil.accounts.ensure(ACCOUNT_A);
    const push = new PluginAlertChannel('push', { type: 'NTFY', config: { topic: 'ops-alerts' } });
    const lookup = new PluginCheck('shop-dns', 'DNS', { name: 'Shop DNS', query: { name: 'shop.example.com', recordType: 'A' }, alertChannels: [push] });
    const plan = await vigil.apply(ACCOUNT_A, [lookup]);
    expect(actions(plan)).toEqual(['create AlertChannel push', 'create Check shop-dns']);
    expect(plan.entries[1]).toMatchObject({ type: 'DNS', name: 'Shop DNS' });
    expect((await vigil.apply(ACCOUNT_A, [lookup])).summary.unchanged).toBe(2);
    const err = await failure(vigil.apply(ACCOUNT_A, [
      new PluginAlertChannel('bad-push', { type: 'NTFY', config: { topic: 'x' } }),
      new PluginAlertChannel('unknown', { type: 'CARRIER_PIGEON', config: {} }),
      new PluginCheck('bad-dns', 'DNS', { name: 'Bad DNS', query: { name: 'x', recordType: 'MX' } }),
    ]));
    expect((err as ConstructValidationError).constructIssues.map((i) => `${i.construct} | ${i.path} | ${i.message}`)).toEqual([
      'PluginAlertChannel "bad-push" | config.topic | must be at least 3 characters',
      'PluginAlertChannel "unknown" | type | must be one of EMAIL, WEBHOOK, SMS, CALL, CHAT, CHAT_APP, PAGING_A, PAGING_B, NTFY',
      expect.stringMatching(/^PluginCheck "bad-dns" \| query.recordType \| /),
    ]);
  });

  it('needs an existing account', async () => {
    const { vigil } = setup();
    expect(await failure(vigil.apply('0c6c1f2e-3333-4c1b-8c1d-000000000003', []))).toMatchObject({ code: 'NOT_FOUND' });
  });
});
