/** vigil.apply: the plan it works out and carries out, idempotence, dry runs, pruning, projects, references, secrets and progress. */
import { describe, expect, it } from 'vitest';
import { AlertChannel, BrowserCheck, CheckGroup, Dashboard, MaintenanceWindow, TcpCheck } from '../src/constructs/index.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import type { ApplyProgress } from '../src/services/apply.js';
import { ACCOUNT_A, ACCOUNT_B } from './helpers.js';
import { ready, shop, actions, failure, counts } from './services-apply-support.js';

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

});
