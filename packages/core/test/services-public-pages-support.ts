/** The public-page service on an in-memory store with two accounts, and what its tests read of a dashboard view. */
import { randomBytes } from 'node:crypto';
import { createVigil, type Vigil } from '../src/container.js';
import type { CheckGroup } from '../src/model/check-group.js';
import type { CheckResult } from '../src/model/check-result.js';
import type { CheckStatus } from '../src/model/check-status.js';
import type { TcpCheck } from '../src/model/check.js';
import type { Dashboard } from '../src/model/dashboard.js';
import type { NewRecord, StoredRecord } from '../src/ports/storage.js';
import type { DashboardView, PublicPageOptions } from '../src/services/public-pages.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import {
  checkGroupFixture,
  checkResultFixture,
  checkStatusFixture,
  dashboardFixture,
  tcpCheckFixture,
} from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';

export const HOUR = 3_600_000;

export async function setup(start = '2026-05-01T12:00:00.000Z', publicPages?: PublicPageOptions) {
  const storage = memoryStorage();
  const clock = new FakeClock(start);
  const vigil: Vigil = createVigil({ storage, secretKey: randomBytes(32), clock, publicPages });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  return {
    vigil,
    storage,
    clock,
    a,
    b,
    addCheck: (account: string, overrides: Partial<NewRecord<TcpCheck>> = {}) => storage.checks.insert(account, tcpCheckFixture(overrides)),
    addGroup: (account: string, overrides: Partial<NewRecord<CheckGroup>> = {}) => storage.checkGroups.insert(account, checkGroupFixture(overrides)),
    setStatus: (account: string, checkId: string, overrides: Partial<StoredRecord<CheckStatus>> = {}) =>
      storage.checkStatuses.upsert(account, checkStatusFixture(checkId, overrides)),
    addDashboard: (account: string, overrides: Partial<NewRecord<Dashboard>> = {}) => storage.dashboards.insert(account, dashboardFixture(overrides)),
    /** Final results (unless said otherwise) of a check, each started at its time. */
    addResults: (account: string, checkId: string, rows: (Partial<NewRecord<CheckResult>> & { startedAt: string })[]) =>
      storage.checkResults.insertMany(account, rows.map((r) => checkResultFixture(checkId, r))),
  };
}

export const namesOf = (view: DashboardView) => view.checks.map((c) => c.name);
export const sortedNames = (view: DashboardView) => namesOf(view).sort();
export const byName = (view: DashboardView) => Object.fromEntries(view.checks.map((c) => [c.name, c]));
