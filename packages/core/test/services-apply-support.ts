/** An in-memory Vigil with two accounts for the apply tests, a small set of constructs, and what the tests read of a plan. */
import { randomBytes } from 'node:crypto';
import { createVigil, type Vigil } from '../src/container.js';
import { AlertChannel, CheckGroup, Dashboard, MaintenanceWindow, TcpCheck } from '../src/constructs/index.js';
import type { ApplyPlan } from '../src/services/apply.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import type { VigilStorage } from '../src/ports/storage.js';
import { ACCOUNT_A, ACCOUNT_B } from './helpers.js';

export function setup(storage: VigilStorage = memoryStorage()) {
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock: new FakeClock('2026-05-01T12:00:00.000Z') });
  return { vigil, storage };
}

export async function ready(storage?: VigilStorage) {
  const s = setup(storage);
  await s.vigil.accounts.ensure(ACCOUNT_A);
  await s.vigil.accounts.ensure(ACCOUNT_B);
  return s;
}

/** A small monitoring setup: a channel, a group, two checks (one in the group), a window and a dashboard. */
export function shop(overrides: { dbPort?: number; muted?: boolean } = {}) {
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
export function failNextInsert(repository: { insert: (...args: never[]) => Promise<unknown> }): void {
  const insert = repository.insert.bind(repository);
  let failed = false;
  repository.insert = (async (...args: never[]) => {
    if (failed) return insert(...args);
    failed = true;
    throw new Error('disk full');
  }) as typeof repository.insert;
}

export const actions = (plan: ApplyPlan) => plan.entries.map((e) => `${e.action} ${e.kind} ${e.logicalId}`);

export async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error('expected a rejection');
  return err;
}

export async function counts(vigil: Vigil) {
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
