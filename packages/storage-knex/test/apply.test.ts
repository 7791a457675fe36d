import { randomBytes } from 'node:crypto';
import { createVigil, type Vigil } from '@vigil/core';
import { AlertChannel, BrowserCheck, CheckGroup, Dashboard, HeartbeatCheck, MaintenanceWindow, TcpCheck } from '@vigil/core/constructs';
import { afterAll, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-0000000000aa';

function constructs(port = 5432) {
  const hook = new AlertChannel('hook', {
    type: 'WEBHOOK',
    config: { name: 'Hook ✓', url: 'https://hooks.example.com/x', headers: [{ key: 'X-Team', value: 'shop' }], webhookSecret: 'whsec-1' },
  });
  const group = new CheckGroup('shop', {
    name: 'Shop',
    tags: ['shop'],
    environmentVariables: [{ key: 'SERVICE_SECRET_TOKEN', value: 'tok-1' }],
    alertChannels: [hook],
  });
  return [
    hook,
    group,
    new TcpCheck('db', { name: 'Shop DB 監視', request: { hostname: 'db.internal', port }, group, alertChannels: ['hook'], retryStrategy: { type: 'LINEAR' } }),
    new BrowserCheck('login', { name: 'Login', script: 'await page.goto("https://shop.example.com")', environmentVariables: [{ key: 'PASSWORD', value: 'pw', secret: true }] }),
    new HeartbeatCheck('nightly-job', { name: 'Nightly job', heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' } }),
    new MaintenanceWindow('deploys', { name: 'Deploys', startsAt: '2026-05-01T22:00:00+02:00', endsAt: '2026-05-01T23:00:00+02:00', repeatUnit: 'WEEK', timezone: 'Europe/Berlin', tags: ['shop'] }),
    new Dashboard('status', { header: 'Shop status', tags: ['shop'], customUrl: `shop-${randomBytes(3).toString('hex')}` }),
  ];
}

describe.each(STORES)('vigil.apply on %s', (kind) => {
  const open: Vigil[] = [];
  afterAll(async () => {
    for (const v of open) await v.close();
  });

  async function vigilOn(): Promise<Vigil> {
    const vigil = createVigil({ storage: await freshStore(kind, 'vigil_apply'), secretKey: randomBytes(32) });
    open.push(vigil);
    await vigil.accounts.ensure(ACCOUNT);
    return vigil;
  }

  it('creates, finds everything unchanged after the round trip through the database, updates and prunes', async () => {
    const vigil = await vigilOn();
    const set = constructs();
    const first = await vigil.apply(ACCOUNT, set);
    expect(first.summary).toEqual({ create: 7, update: 0, delete: 0, unchanged: 0 });
    // Secrets are sealed at rest, yet compare equal to the construct's values.
    const raw = JSON.stringify(await (vigil.storage as KnexStorage).raw.dump('checks')) + JSON.stringify(await (vigil.storage as KnexStorage).raw.dump('alert_channels'));
    expect(raw).not.toMatch(/whsec-1|"pw"/);
    const again = await vigil.apply(ACCOUNT, constructs().map((c) => (c.kind === 'Dashboard' ? set[6]! : c)));
    expect(again.summary).toEqual({ create: 0, update: 0, delete: 0, unchanged: 7 });

    const moved = constructs(6432).map((c) => (c.kind === 'Dashboard' ? set[6]! : c));
    const update = await vigil.apply(ACCOUNT, moved);
    expect(update.entries.filter((e) => e.action === 'update').map((e) => [e.logicalId, e.changes!.map((c) => c.field)])).toEqual([['db', ['request']]]);

    const rows = await vigil.storage.managedResources.list(ACCOUNT, 'default');
    expect(rows.map((r) => `${r.kind} ${r.logicalId}`)).toEqual([
      'AlertChannel hook', 'CheckGroup shop', 'Check db', 'Check login', 'Check nightly-job', 'MaintenanceWindow deploys', 'Dashboard status',
    ]);
    const pruned = await vigil.apply(ACCOUNT, moved.filter((c) => c.logicalId === 'hook' || c.logicalId === 'login'), { prune: true });
    expect(pruned.summary).toEqual({ create: 0, update: 0, delete: 5, unchanged: 2 });
    expect((await vigil.storage.checks.listAll(ACCOUNT)).map((c) => c.name)).toEqual(['Login']);
    expect((await vigil.storage.managedResources.list(ACCOUNT, 'default')).map((r) => r.logicalId)).toEqual(['hook', 'login']);
  });

  it('replaces a check whose type changes: the new one made first, the record moved to it, the old one deleted', async () => {
    const vigil = await vigilOn();
    const first = await vigil.apply(ACCOUNT, [new TcpCheck('svc', { name: 'Svc', request: { hostname: 'svc.internal', port: 1 } })]);
    const oldId = String(first.entries[0]!.id);
    const heartbeat = new HeartbeatCheck('svc', { name: 'Svc', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } });
    const replaced = await vigil.apply(ACCOUNT, [heartbeat]);
    expect(replaced.entries.map((e) => `${e.action} ${e.logicalId}`)).toEqual(['create svc', 'delete svc']);
    const newId = String(replaced.entries[0]!.id);
    expect((await vigil.storage.checks.listAll(ACCOUNT)).map((c) => [c.id, c.checkType])).toEqual([[newId, 'HEARTBEAT']]);
    expect((await vigil.storage.managedResources.list(ACCOUNT, 'default')).map((r) => [r.logicalId, r.resourceId])).toEqual([['svc', newId]]);
    expect((await vigil.apply(ACCOUNT, [heartbeat])).summary.unchanged).toBe(1);
    expect(oldId).not.toBe(newId);
  });

  it('writes nothing on a dry run or when a construct is invalid', async () => {
    const vigil = await vigilOn();
    expect((await vigil.plan(ACCOUNT, constructs())).summary.create).toBe(7);
    await expect(vigil.apply(ACCOUNT, [...constructs(), new TcpCheck('bad', { name: 'Bad', request: { hostname: 'x', port: 0 } })]))
      .rejects.toMatchObject({ name: 'ConstructValidationError' });
    expect(await vigil.storage.checks.listAll(ACCOUNT)).toEqual([]);
    expect(await vigil.storage.managedResources.list(ACCOUNT, 'default')).toEqual([]);
  });
});
