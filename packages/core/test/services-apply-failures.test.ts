/** vigil.apply: what it refuses before writing, resources whose type changes, and steps that fail part-way; plugin types. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import {
  AlertChannel,
  CheckGroup,
  Dashboard,
  HeartbeatCheck,
  MaintenanceWindow,
  PluginAlertChannel,
  PluginCheck,
  TcpCheck,
} from '../src/constructs/index.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { ApplyError } from '../src/services/apply.js';
import * as v from 'valibot';
import { defineCheckType } from '../src/model/check-type.js';
import { FakeTransport } from '../src/testing/fake-transport.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { ACCOUNT_A, ACCOUNT_B } from './helpers.js';
import { setup, ready, shop, failNextInsert, actions, failure, counts } from './services-apply-support.js';

describe('vigil.apply: checks as code', () => {
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
      new PluginCheck('smtp', 'SMTP', { name: 'SMTP' }),
    ]));
    const issues = (err as ConstructValidationError).constructIssues.map((i) => `${i.construct} | ${i.path} | ${i.message}`);
    expect(issues).toEqual([
      'TcpCheck "a" | alertChannelSubscriptions.0.alertChannelId | is not an alert channel of this account',
      'TcpCheck "a" | groupId | is not a check group of this account',
      'PluginCheck "smtp" | checkType | SMTP is not a check type this Vigil serves (TCP, API, BROWSER, HEARTBEAT, DNS, URL, ICMP, MULTI_STEP, PLAYWRIGHT)',
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
    const smtp = defineCheckType({ checkType: 'SMTP', entries: { probe: v.object({ host: v.string(), tls: v.picklist(['NONE', 'STARTTLS']) }) } });
    const ntfy = new FakeTransport('NTFY', v.object({ topic: v.pipe(v.string(), v.minLength(3, 'must be at least 3 characters')) }));
    const vigil = createVigil({ storage: memoryStorage(), secretKey: randomBytes(32), checkTypes: [smtp], transports: [ntfy] });
    await vigil.accounts.ensure(ACCOUNT_A);
    const push = new PluginAlertChannel('push', { type: 'NTFY', config: { topic: 'ops-alerts' } });
    const lookup = new PluginCheck('shop-smtp', 'SMTP', { name: 'Shop mail', probe: { host: 'mail.example.com', tls: 'STARTTLS' }, alertChannels: [push] });
    const plan = await vigil.apply(ACCOUNT_A, [lookup]);
    expect(actions(plan)).toEqual(['create AlertChannel push', 'create Check shop-smtp']);
    expect(plan.entries[1]).toMatchObject({ type: 'SMTP', name: 'Shop mail' });
    expect((await vigil.apply(ACCOUNT_A, [lookup])).summary.unchanged).toBe(2);
    const err = await failure(vigil.apply(ACCOUNT_A, [
      new PluginAlertChannel('bad-push', { type: 'NTFY', config: { topic: 'x' } }),
      new PluginAlertChannel('unknown', { type: 'CARRIER_PIGEON', config: {} }),
      new PluginCheck('bad-smtp', 'SMTP', { name: 'Bad mail', probe: { host: 'x', tls: 'SSL' } }),
    ]));
    expect((err as ConstructValidationError).constructIssues.map((i) => `${i.construct} | ${i.path} | ${i.message}`)).toEqual([
      'PluginAlertChannel "bad-push" | config.topic | must be at least 3 characters',
      'PluginAlertChannel "unknown" | type | must be one of EMAIL, WEBHOOK, SMS, CALL, CHAT, CHAT_APP, PAGING_A, PAGING_B, NTFY',
      expect.stringMatching(/^PluginCheck "bad-smtp" \| probe.tls \| /),
    ]);
  });

  it('needs an existing account', async () => {
    const { vigil } = setup();
    expect(await failure(vigil.apply('0c6c1f2e-3333-4c1b-8c1d-000000000003', []))).toMatchObject({ code: 'NOT_FOUND' });
  });
});
