import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import type { CheckGroup } from '../src/model/check-group.js';
import type { CheckResult } from '../src/model/check-result.js';
import type { CheckStatus } from '../src/model/check-status.js';
import type { TcpCheck } from '../src/model/check.js';
import type { Dashboard } from '../src/model/dashboard.js';
import type { NewRecord, StoredRecord } from '../src/ports/storage.js';
import { dashboardShows, type DashboardView, type PublicPageOptions, type StatusPageView } from '../src/services/public-pages.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import {
  checkGroupFixture,
  checkResultFixture,
  checkStatusFixture,
  dashboardFixture,
  statusPageIncidentFixture,
  tcpCheckFixture,
} from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';

const HOUR = 3_600_000;

async function setup(start = '2026-05-01T12:00:00.000Z', publicPages?: PublicPageOptions) {
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

const namesOf = (view: DashboardView) => view.checks.map((c) => c.name);
const sortedNames = (view: DashboardView) => namesOf(view).sort();
const byName = (view: DashboardView) => Object.fromEntries(view.checks.map((c) => [c.name, c]));

describe('dashboardShows', () => {
  const check = (tags: string[]) => tcpCheckFixture({ tags }) as unknown as TcpCheck;
  const group = (tags: string[]) => ({ ...checkGroupFixture({ tags }), id: 1, accountId: 'x' }) as CheckGroup;

  it('no tags shows every check; otherwise any tag (OR) or all tags (AND), the group\'s tags counting too', () => {
    expect(dashboardShows({ tags: [], useTagsAndOperator: false }, check([]), undefined)).toBe(true);
    expect(dashboardShows({ tags: [], useTagsAndOperator: true }, check([]), undefined)).toBe(true);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: false }, check(['api']), undefined)).toBe(true);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: false }, check(['web']), undefined)).toBe(false);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: true }, check(['api']), undefined)).toBe(false);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: true }, check(['api', 'prod', 'x']), undefined)).toBe(true);
    expect(dashboardShows({ tags: ['prod'], useTagsAndOperator: false }, check([]), group(['prod']))).toBe(true);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: true }, check(['api']), group(['prod']))).toBe(true);
    expect(dashboardShows({ tags: ['prod', 'api'], useTagsAndOperator: true }, check([]), group(['prod']))).toBe(false);
  });
});

describe('PublicPageService.dashboardView', () => {
  async function tagged() {
    const s = await setup();
    const edge = await s.addGroup(s.a, { name: 'Edge', tags: ['prod'] });
    await s.addCheck(s.a, { name: 'api-prod', tags: ['prod', 'api'] });
    await s.addCheck(s.a, { name: 'web-prod', tags: ['prod', 'web'] });
    await s.addCheck(s.a, { name: 'api-staging', tags: ['api', 'staging'] });
    await s.addCheck(s.a, { name: 'untagged', tags: [] });
    await s.addCheck(s.a, { name: 'grouped', tags: [], groupId: edge.id });
    await s.addCheck(s.a, { name: 'grouped-api', tags: ['api'], groupId: edge.id });
    // Another account, with the same tags and a group holding them.
    const theirGroup = await s.addGroup(s.b, { name: 'Theirs', tags: ['prod', 'api'] });
    await s.addCheck(s.b, { name: 'their-api-prod', tags: ['prod', 'api'] });
    await s.addCheck(s.b, { name: 'their-grouped', tags: [], groupId: theirGroup.id });
    return { ...s, edge };
  }

  it('without tags shows every check of the account', async () => {
    const { vigil, a, addDashboard } = await tagged();
    const view = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: [] }));
    expect(sortedNames(view)).toEqual(['api-prod', 'api-staging', 'grouped', 'grouped-api', 'untagged', 'web-prod']);
  });

  it('with tags shows checks carrying any of them, a group\'s tags counting for its checks', async () => {
    const { vigil, a, addDashboard } = await tagged();
    const prod = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: ['prod'] }));
    expect(sortedNames(prod)).toEqual(['api-prod', 'grouped', 'grouped-api', 'web-prod']);
    const prodOrApi = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: ['prod', 'api'] }));
    expect(sortedNames(prodOrApi)).toEqual(['api-prod', 'api-staging', 'grouped', 'grouped-api', 'web-prod']);
  });

  it('with useTagsAndOperator shows only checks carrying all the tags (own and group\'s together)', async () => {
    const { vigil, a, addDashboard } = await tagged();
    const both = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: ['prod', 'api'], useTagsAndOperator: true }));
    expect(sortedNames(both)).toEqual(['api-prod', 'grouped-api']);
    const staging = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: ['staging'], useTagsAndOperator: true }));
    expect(sortedNames(staging)).toEqual(['api-staging']);
  });

  it('names the group of a grouped check and answers the dashboard without accountId and keys', async () => {
    const { vigil, a, addDashboard } = await tagged();
    const d = await addDashboard(a, { header: 'Ops', tags: ['prod'] });
    const view = await vigil.publicPages.dashboardView(d);
    expect(byName(view)['grouped']!.groupName).toBe('Edge');
    expect(byName(view)['api-prod']!.groupName).toBeNull();
    expect(byName(view)['api-prod']!.tags).toEqual(['prod', 'api']);
    expect(view.dashboard).toMatchObject({ id: d.id, header: 'Ops', customUrl: d.customUrl, tags: ['prod'] });
    expect(view.dashboard).not.toHaveProperty('accountId');
    expect(view.dashboard).not.toHaveProperty('keys');
    expect(view.generatedAt).toBe('2026-05-01T12:00:00.000Z');
  });

  it('gives each check its state and orders failing, degraded, pending, passing, paused, then by name', async () => {
    const { vigil, a, addCheck, setStatus, addDashboard } = await setup();
    const make = async (name: string, status: Partial<StoredRecord<CheckStatus>> | null, activated = true) => {
      const c = await addCheck(a, { name, activated });
      if (status) await setStatus(a, c.id, status);
    };
    // Inserted out of order on purpose.
    await make('b-passing', {});
    await make('a-paused', { hasFailures: true }, false);
    await make('pending-norun', { lastCheckRunId: null });
    await make('zeta-failing', { hasFailures: true });
    await make('beta-degraded', { isDegraded: true });
    await make('a-passing', {});
    await make('pending-none', null);
    await make('mid-failing-degraded', { hasFailures: true, isDegraded: true });
    await make('alpha-erroring', { hasErrors: true });

    const view = await vigil.publicPages.dashboardView(await addDashboard(a));
    expect(view.checks.map((c) => [c.name, c.state])).toEqual([
      ['alpha-erroring', 'FAILING'],
      ['mid-failing-degraded', 'FAILING'],
      ['zeta-failing', 'FAILING'],
      ['beta-degraded', 'DEGRADED'],
      ['pending-none', 'PENDING'],
      ['pending-norun', 'PENDING'],
      ['a-passing', 'PASSING'],
      ['b-passing', 'PASSING'],
      ['a-paused', 'PAUSED'],
    ]);
    expect(view.counts).toEqual({ FAILING: 3, DEGRADED: 1, PENDING: 2, PASSING: 2, PAUSED: 1 });
  });

  it('counts every state, 0 for states no check is in', async () => {
    const { vigil, a, addCheck, setStatus, addDashboard } = await setup();
    await setStatus(a, (await addCheck(a, { name: 'p1' })).id);
    await setStatus(a, (await addCheck(a, { name: 'p2' })).id);
    await addCheck(a, { name: 'off', activated: false });
    const view = await vigil.publicPages.dashboardView(await addDashboard(a));
    expect(view.counts).toEqual({ FAILING: 0, DEGRADED: 0, PENDING: 0, PASSING: 2, PAUSED: 1 });
    const empty = await vigil.publicPages.dashboardView(await addDashboard(a, { tags: ['nothing-has-this'] }));
    expect(empty.checks).toEqual([]);
    expect(empty.counts).toEqual({ FAILING: 0, DEGRADED: 0, PENDING: 0, PASSING: 0, PAUSED: 0 });
  });

  it('gives the last run time and location from the status, null before any run', async () => {
    const { vigil, a, addCheck, setStatus, addDashboard } = await setup();
    const ran = await addCheck(a, { name: 'ran' });
    await setStatus(a, ran.id, { lastRunLocation: 'eu-west-1', created_at: '2026-04-01T00:00:00.000Z', updated_at: '2026-05-01T11:59:00.000Z' });
    const never = await addCheck(a, { name: 'never' });
    await setStatus(a, never.id, { lastCheckRunId: null, lastRunLocation: null });
    const view = byName(await vigil.publicPages.dashboardView(await addDashboard(a)));
    expect(view['ran']).toMatchObject({ lastRunAt: '2026-05-01T11:59:00.000Z', lastRunLocation: 'eu-west-1' });
    expect(view['never']).toMatchObject({ lastRunAt: null, lastRunLocation: null });
  });

  it('avg, p95, p99 and successRatio cover the final runs of the last 24 hours only', async () => {
    // now: 2026-05-01T12:00Z
    const { vigil, a, addCheck, addResults, addDashboard } = await setup();
    const api = await addCheck(a, { name: 'api' });
    await addCheck(a, { name: 'idle' });
    await addResults(a, api.id, [
      { startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 },
      { startedAt: '2026-05-01T02:00:00.000Z', responseTime: 200, hasFailures: true },
      { startedAt: '2026-04-30T13:00:00.000Z', responseTime: 601 }, // 23 h ago
      { startedAt: '2026-04-30T11:59:00.000Z', responseTime: 10_000, hasFailures: true }, // 24 h 1 min ago: out
      { startedAt: '2026-05-01T11:30:00.000Z', responseTime: 5_000, hasErrors: true, resultType: 'ATTEMPT' }, // not final: out
    ]);
    const view = byName(await vigil.publicPages.dashboardView(await addDashboard(a)));
    // Runs 100, 200, 601:
    //   avg = 901 / 3 = 300.33 -> 300
    //   p95 (linear between ranks): position 0.95 * 2 = 1.9 -> 200 + 0.9 * (601 - 200) = 560.9 -> 561
    //   p99: position 1.98 -> 200 + 0.98 * 401 = 592.98 -> 593
    //   successRatio: 2 of 3 passed = 66.666… -> 66.67
    expect(view['api']).toMatchObject({ avg: 300, p95: 561, p99: 593, successRatio: 66.67, runs24h: 3 });
    expect(view['idle']).toMatchObject({ avg: null, p95: null, p99: null, successRatio: null, runs24h: 0 });
  });

  it('hours holds the last 24 hours by the hour (oldest first) only when expandChecks (or asked for)', async () => {
    const { vigil, a, addCheck, addResults, addDashboard } = await setup();
    const api = await addCheck(a, { name: 'api' });
    await addResults(a, api.id, [
      { startedAt: '2026-04-30T13:10:00.000Z' },
      { startedAt: '2026-05-01T02:05:00.000Z', hasFailures: true },
      { startedAt: '2026-05-01T02:35:00.000Z' },
      { startedAt: '2026-05-01T11:59:59.000Z', hasErrors: true },
    ]);
    const flat = await vigil.publicPages.dashboardView(await addDashboard(a, { expandChecks: false }));
    expect(flat.checks[0]!.hours).toEqual([]);

    const expanded = await vigil.publicPages.dashboardView(await addDashboard(a, { expandChecks: true }));
    const hours = expanded.checks[0]!.hours;
    expect(hours).toHaveLength(24);
    // The 24 clock hours up to the current one: now is 12:00 sharp, so 13:00 yesterday to 12:00 today.
    expect(hours[0]!.start).toBe('2026-04-30T13:00:00.000Z');
    expect(hours[23]!.start).toBe('2026-05-01T12:00:00.000Z');
    expect(hours.every((h, i) => h.start === new Date(Date.parse('2026-04-30T13:00:00.000Z') + i * HOUR).toISOString())).toBe(true);
    expect(hours[0]).toEqual({ start: '2026-04-30T13:00:00.000Z', runs: 1, failures: 0 });
    // 02:00 today is 13 hours after the first hour.
    expect(hours[13]).toEqual({ start: '2026-05-01T02:00:00.000Z', runs: 2, failures: 1 });
    expect(hours[22]).toEqual({ start: '2026-05-01T11:00:00.000Z', runs: 1, failures: 1 });
    expect(hours[23]).toEqual({ start: '2026-05-01T12:00:00.000Z', runs: 0, failures: 0 });
    expect(hours.filter((h) => h.runs > 0).map((h) => h.start)).toEqual([
      '2026-04-30T13:00:00.000Z', '2026-05-01T02:00:00.000Z', '2026-05-01T11:00:00.000Z',
    ]);

    const asked = await vigil.publicPages.dashboardView(await addDashboard(a, { expandChecks: false }), { hours: true });
    expect(asked.checks[0]!.hours).toHaveLength(24);
  });

  it('between whole hours, the last of the 24 hours is the current one and its runs count', async () => {
    const { vigil, a, clock, addCheck, addResults, addDashboard } = await setup();
    const api = await addCheck(a, { name: 'api' });
    await addResults(a, api.id, [
      { startedAt: '2026-05-01T12:10:00.000Z', responseTime: 50 },
      { startedAt: '2026-05-01T11:10:00.000Z', responseTime: 150 },
    ]);
    clock.set('2026-05-01T12:30:00.000Z');
    const [check] = (await vigil.publicPages.dashboardView(await addDashboard(a, { expandChecks: true }))).checks;
    expect(check!.hours[0]!.start).toBe('2026-04-30T13:00:00.000Z');
    expect(check!.hours[23]).toEqual({ start: '2026-05-01T12:00:00.000Z', runs: 1, failures: 0 });
    expect(check!.hours[22]).toEqual({ start: '2026-05-01T11:00:00.000Z', runs: 1, failures: 0 });
    // (50 + 150) / 2
    expect(check).toMatchObject({ runs24h: 2, avg: 100 });
  });

  it('lists incidents only when enableIncidents: active first, newest first within; a resolved one older than 7 days is left out', async () => {
    const { vigil, a, clock, addDashboard } = await setup();
    const d = await addDashboard(a, { enableIncidents: true });
    const other = await addDashboard(a, { enableIncidents: true });
    const off = await addDashboard(a, { enableIncidents: false });
    const open = (dashboardId: number, name: string, status = 'INVESTIGATING') =>
      vigil.incidents.create(a, { name, dashboardId, incidentUpdates: [{ status, description: `${name} opened` }] });
    const update = (id: string, status: string) => vigil.incidents.addUpdate(a, id, { status, description: status });

    const old = await open(d.id, 'old'); // 2026-05-01T12:00Z
    clock.advance(30 * 60_000);
    await open(d.id, 'lingering'); // 12:30, never resolved
    clock.advance(30 * 60_000);
    await update(old.id, 'RESOLVED'); // stoppedAt 2026-05-01T13:00Z
    clock.set('2026-05-05T12:00:00.000Z');
    const recent = await open(d.id, 'recent', 'IDENTIFIED');
    clock.advance(HOUR);
    await update(recent.id, 'RESOLVED'); // stoppedAt 2026-05-05T13:00Z
    clock.set('2026-05-08T09:00:00.000Z');
    // A stop the client sets in the future: active until then.
    await vigil.incidents.create(a, {
      name: 'scheduled', dashboardId: d.id, impact: 'MAINTENANCE', stoppedAt: '2026-05-08T14:00:00.000Z',
      incidentUpdates: [{ status: 'MAINTENANCE', description: 'planned until 14:00' }],
    });
    clock.set('2026-05-08T10:00:00.000Z');
    const active = await open(d.id, 'active');
    await open(other.id, 'on another dashboard');
    await open(off.id, 'on a dashboard without incidents');
    clock.advance(HOUR);
    await update(active.id, 'MONITORING'); // 11:00

    clock.set('2026-05-08T13:00:00.000Z'); // old was resolved exactly 7 days ago: still listed
    const view = await vigil.publicPages.dashboardView(d);
    expect(view.incidents.map((i) => [i.name, i.active])).toEqual([
      ['active', true], ['scheduled', true], ['lingering', true], ['recent', false], ['old', false],
    ]);
    const first = view.incidents[0]!;
    expect(first).toMatchObject({ id: active.id, status: 'MONITORING', impact: 'MINOR', stoppedAt: null, created_at: '2026-05-08T10:00:00.000Z' });
    expect(first.updates.map((u) => [u.status, u.created_at])).toEqual([
      ['MONITORING', '2026-05-08T11:00:00.000Z'], ['INVESTIGATING', '2026-05-08T10:00:00.000Z'],
    ]);
    expect(view.incidents[3]).toMatchObject({ name: 'recent', status: 'RESOLVED', stoppedAt: '2026-05-05T13:00:00.000Z' });

    clock.advance(60_000); // old: resolved 7 days and a minute ago
    expect((await vigil.publicPages.dashboardView(d)).incidents.map((i) => i.name)).toEqual(['active', 'scheduled', 'lingering', 'recent']);
    clock.set('2026-05-08T14:01:00.000Z'); // scheduled has stopped: now among the resolved ones, newest first
    expect((await vigil.publicPages.dashboardView(d)).incidents.map((i) => [i.name, i.active])).toEqual([
      ['active', true], ['lingering', true], ['scheduled', false], ['recent', false],
    ]);
    expect((await vigil.publicPages.dashboardView(off)).incidents).toEqual([]);
    expect((await vigil.publicPages.dashboardView(other)).incidents.map((i) => i.name)).toEqual(['on another dashboard']);
  });

  it('shows nothing of another account: checks, statuses, results or incidents', async () => {
    const { vigil, a, b, storage, addCheck, setStatus, addResults, addDashboard, addGroup } = await setup();
    const mine = await addCheck(a, { name: 'mine', tags: ['prod'] });
    await setStatus(a, mine.id);
    await addResults(a, mine.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 }]);
    const theirGroup = await addGroup(b, { tags: ['prod'] });
    const theirs = await addCheck(b, { name: 'theirs', tags: ['prod'] });
    await addCheck(b, { name: 'their grouped', groupId: theirGroup.id });
    await setStatus(b, theirs.id, { hasFailures: true });
    // Rows of account B that name account A's check: they must not bleed into A's view.
    await setStatus(b, mine.id, { hasFailures: true });
    await addResults(b, mine.id, [{ startedAt: '2026-05-01T10:00:00.000Z', responseTime: 9_900, hasFailures: true }]);

    const d = await addDashboard(a, { tags: ['prod'], enableIncidents: true });
    await storage.incidents.insert(b, { id: randomUUID(), name: 'theirs', impact: 'MAJOR', dashboardId: d.id, startedAt: null, stoppedAt: null, created_at: '2026-05-01T11:00:00.000Z', updated_at: null });

    const view = await vigil.publicPages.dashboardView(d, { hours: true });
    expect(namesOf(view)).toEqual(['mine']);
    expect(view.checks[0]).toMatchObject({ state: 'PASSING', avg: 100, runs24h: 1, successRatio: 100 });
    expect(view.counts.FAILING).toBe(0);
    expect(view.checks[0]!.hours.reduce((n, h) => n + h.runs, 0)).toBe(1);
    expect(view.incidents).toEqual([]);
  });
});

describe('PublicPageService.dashboardCheckRuns', () => {
  async function linked() {
    const s = await setup();
    const edge = await s.addGroup(s.a, { name: 'Edge', tags: ['prod'] });
    const api = await s.addCheck(s.a, { name: 'api', tags: ['prod'] });
    const grouped = await s.addCheck(s.a, { name: 'grouped', groupId: edge.id });
    const untagged = await s.addCheck(s.a, { name: 'untagged' });
    const theirs = await s.addCheck(s.b, { name: 'theirs', tags: ['prod'] });
    const links = await s.addDashboard(s.a, { tags: ['prod'], showCheckRunLinks: true });
    return { ...s, api, grouped, untagged, theirs, links };
  }

  it('is null when the dashboard has no run links, does not show the check, or the check is of another account', async () => {
    const { vigil, a, b, addDashboard, api, untagged, theirs, links } = await linked();
    const noLinks = await addDashboard(a, { tags: [], showCheckRunLinks: false });
    expect(await vigil.publicPages.dashboardCheckRuns(noLinks, api.id)).toBeNull();
    expect(await vigil.publicPages.dashboardCheckRuns(links, untagged.id)).toBeNull();
    expect(await vigil.publicPages.dashboardCheckRuns(links, theirs.id)).toBeNull();
    expect(await vigil.publicPages.dashboardCheckRuns(links, randomUUID())).toBeNull();
    // A dashboard of B with links does not reach A's check either.
    const theirBoard = await addDashboard(b, { tags: [], showCheckRunLinks: true });
    expect(await vigil.publicPages.dashboardCheckRuns(theirBoard, api.id)).toBeNull();
  });

  it('answers the check and its newest final results; a check shown through its group\'s tags too', async () => {
    const { vigil, a, b, addResults, setStatus, api, grouped, links } = await linked();
    await setStatus(a, api.id, { isDegraded: true });
    await addResults(a, api.id, [
      { startedAt: '2026-05-01T09:00:00.000Z', responseTime: 90 },
      { startedAt: '2026-05-01T11:00:00.000Z', responseTime: 110 },
      { startedAt: '2026-05-01T10:00:00.000Z', responseTime: 100 },
      { startedAt: '2026-05-01T11:30:00.000Z', responseTime: 999, resultType: 'ATTEMPT' },
    ]);
    await addResults(b, api.id, [{ startedAt: '2026-05-01T11:45:00.000Z', responseTime: 1 }]);

    const all = await vigil.publicPages.dashboardCheckRuns(links, api.id);
    expect(all!.check).toMatchObject({ id: api.id, name: 'api', state: 'DEGRADED', runs24h: 3, avg: 100 });
    expect(all!.results.map((r) => r.startedAt)).toEqual([
      '2026-05-01T11:00:00.000Z', '2026-05-01T10:00:00.000Z', '2026-05-01T09:00:00.000Z',
    ]);
    expect(all!.results.every((r) => r.resultType === 'FINAL' && r.checkId === api.id)).toBe(true);

    const two = await vigil.publicPages.dashboardCheckRuns(links, api.id, 2);
    expect(two!.results.map((r) => r.responseTime)).toEqual([110, 100]);

    const viaGroup = await vigil.publicPages.dashboardCheckRuns(links, grouped.id);
    expect(viaGroup!.check).toMatchObject({ id: grouped.id, groupName: 'Edge', state: 'PENDING', runs24h: 0 });
    expect(viaGroup!.results).toEqual([]);
  });
});

describe('PublicPageService.findStatusPage', () => {
  it('finds a page of any account by its url (any case) or by its id; null for neither', async () => {
    const { vigil, b } = await setup();
    const page = await vigil.statusPages.create(b, { name: 'Acme', url: 'acme-status' });
    expect(await vigil.publicPages.findStatusPage('acme-status')).toMatchObject({ id: page.id, accountId: b, url: 'acme-status' });
    expect((await vigil.publicPages.findStatusPage('ACME-Status'))?.id).toBe(page.id);
    expect((await vigil.publicPages.findStatusPage(page.id))?.id).toBe(page.id);
    expect(await vigil.publicPages.findStatusPage('nobody')).toBeNull();
    expect(await vigil.publicPages.findStatusPage(randomUUID())).toBeNull();
  });
});

describe('PublicPageService.statusPageView', () => {
  it('an incident resolved with a public date before an earlier update\'s is closed all the same', async () => {
    const { vigil, a, clock } = await setup('2026-05-01T00:00:00.000Z', { uptimeDays: 3 });
    const api = await vigil.services.create(a, { name: 'API' });
    const page = await vigil.statusPages.create(a, { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id] }] });
    clock.set('2026-05-01T12:00:00.000Z');
    const i = await vigil.statusPageIncidents.create(a, { name: 'Down', serviceIds: [api.id], incidentUpdate: { description: 'x', publicIncidentUpdateDate: '2026-05-01T09:00:00Z' } });
    await vigil.statusPageIncidents.addUpdate(a, i.id, { description: 'watching', status: 'MONITORING', publicIncidentUpdateDate: '2026-05-01T11:00:00Z' });
    await vigil.statusPageIncidents.addUpdate(a, i.id, { description: 'fixed', status: 'RESOLVED', publicIncidentUpdateDate: '2026-05-01T10:30:00Z' });
    clock.set('2026-05-03T12:00:00.000Z');
    const view = await vigil.publicPages.statusPageView((await vigil.storage.statusPages.get(a, page.id))!);
    const days = view.cards[0]!.services[0]!.days;
    // Down 09:00-10:30 on May 1, a day observed from 00:00 (created) to its end: 1.5 h of 24 h down.
    expect(days.map((d) => [d.date, d.uptime])).toEqual([['2026-05-01', 93.75], ['2026-05-02', 100], ['2026-05-03', 100]]);
    expect(view.cards[0]!.services[0]!.state).toBe('OPERATIONAL');
  });

  it('an incident opened long ago and still open counts, behind any number of newer ones', async () => {
    const { vigil, a, clock } = await setup('2026-01-01T00:00:00.000Z');
    const api = await vigil.services.create(a, { name: 'API' });
    const page = await vigil.statusPages.create(a, { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id] }] });
    await vigil.statusPageIncidents.create(a, { name: 'Long open', serviceIds: [api.id], incidentUpdate: { description: 'x', status: 'IDENTIFIED' } });
    // A full batch of newer ones, all resolved before the 90 days shown.
    clock.set('2026-01-02T00:00:00.000Z');
    for (let n = 0; n < 120; n++) {
      const i = await vigil.statusPageIncidents.create(a, { name: `short ${n}`, serviceIds: [api.id], incidentUpdate: { description: 'x' } });
      await vigil.statusPageIncidents.addUpdate(a, i.id, { description: 'y', status: 'RESOLVED' });
    }
    clock.set('2026-04-20T00:00:00.000Z');
    const view = await vigil.publicPages.statusPageView((await vigil.storage.statusPages.get(a, page.id))!);
    expect(view.activeIncidents.map((e) => e.name)).toEqual(['Long open']);
    expect(view.state).toBe('DISRUPTED');
  });

  /**
   * A history from 2026-05-01T00:00Z (when the services are created) to now, 2026-05-03T12:00Z,
   * shown over 4 days (2026-04-30 .. 2026-05-03):
   * - API: down 06:00-08:00 on May 1 (INVESTIGATING, IDENTIFIED, RESOLVED).
   * - DB: a planned maintenance 10:00-12:00 on May 2 (resolved), another one open since 10:00 on May 3.
   * - Web: down since 09:00 on May 3, still open.
   * - Extra (not on the page) has an open incident of its own.
   */
  async function history(options: PublicPageOptions = { uptimeDays: 4 }) {
    const s = await setup('2026-05-01T00:00:00.000Z', options);
    const { vigil, a, b, clock } = s;
    const api = await vigil.services.create(a, { name: 'API' });
    const web = await vigil.services.create(a, { name: 'Web' });
    const db = await vigil.services.create(a, { name: 'DB' });
    const extra = await vigil.services.create(a, { name: 'Extra' });
    const theirs = await vigil.services.create(b, { name: 'Theirs' });
    await vigil.statusPages.create(a, {
      name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id, web.id] }, { name: 'Data', serviceIds: [db.id] }],
    });
    const open = (serviceIds: string[], name: string, status?: string, account = a) =>
      vigil.statusPageIncidents.create(account, { name, serviceIds, incidentUpdate: { description: `${name} opened`, ...(status ? { status } : {}) } });
    const update = (id: string, status: string) => vigil.statusPageIncidents.addUpdate(a, id, { description: status, status });

    clock.set('2026-05-01T06:00:00.000Z');
    const apiOutage = await open([api.id], 'API outage');
    clock.set('2026-05-01T07:00:00.000Z');
    await update(apiOutage.id, 'IDENTIFIED');
    clock.set('2026-05-01T08:00:00.000Z');
    await update(apiOutage.id, 'RESOLVED');

    clock.set('2026-05-02T10:00:00.000Z');
    const upgrade = await open([db.id], 'DB upgrade', 'MAINTENANCE');
    clock.set('2026-05-02T12:00:00.000Z');
    await update(upgrade.id, 'RESOLVED');

    clock.set('2026-05-03T09:00:00.000Z');
    await open([web.id], 'Web errors', 'INVESTIGATING');
    clock.set('2026-05-03T10:00:00.000Z');
    await open([db.id], 'DB failover', 'MAINTENANCE');
    clock.set('2026-05-03T10:30:00.000Z');
    await open([extra.id], 'Extra outage');
    await open([theirs.id], 'Their outage', 'INVESTIGATING', b);
    // A row of account B naming A's API service: it must not reach A's page.
    await s.storage.statusPageIncidents.insert(b, {
      ...statusPageIncidentFixture({ name: 'Foreign', serviceIds: [api.id], created_at: '2026-05-03T10:45:00.000Z' }),
      status: 'INVESTIGATING',
      stoppedAt: null,
    });
    clock.set('2026-05-03T12:00:00.000Z');
    const page = (await vigil.publicPages.findStatusPage('acme'))!;
    return { ...s, api, web, db, extra, page };
  }

  const serviceOf = (view: StatusPageView, name: string) => view.cards.flatMap((c) => c.services).find((s) => s.name === name)!;

  it('keeps the cards and their services in order and leaves out accountId', async () => {
    const { vigil, page } = await history();
    const view = await vigil.publicPages.statusPageView(page);
    expect(view.cards.map((c) => [c.name, c.services.map((s) => s.name)])).toEqual([['Core', ['API', 'Web']], ['Data', ['DB']]]);
    expect(view.page).toMatchObject({ id: page.id, name: 'Acme', url: 'acme' });
    expect(view.page).not.toHaveProperty('accountId');
    expect(view.page).not.toHaveProperty('cards');
    expect(view.generatedAt).toBe('2026-05-03T12:00:00.000Z');
  });

  it('a service is DISRUPTED with an open incident, MAINTENANCE with an open maintenance, OPERATIONAL once resolved; the page is the worst', async () => {
    const { vigil, page } = await history();
    const view = await vigil.publicPages.statusPageView(page);
    expect(serviceOf(view, 'API').state).toBe('OPERATIONAL');
    expect(serviceOf(view, 'Web').state).toBe('DISRUPTED');
    expect(serviceOf(view, 'DB').state).toBe('MAINTENANCE');
    expect(view.state).toBe('DISRUPTED');
  });

  it('the page state is MAINTENANCE when that is the worst, OPERATIONAL when all are', async () => {
    const { vigil, a, api, db } = await history();
    const maintained = await vigil.statusPages.create(a, { name: 'M', url: 'm', cards: [{ name: 'c', serviceIds: [api.id, db.id] }] });
    const fine = await vigil.statusPages.create(a, { name: 'F', url: 'f', cards: [{ name: 'c', serviceIds: [api.id] }] });
    expect((await vigil.publicPages.statusPageView((await vigil.publicPages.findStatusPage(maintained.id))!)).state).toBe('MAINTENANCE');
    expect((await vigil.publicPages.statusPageView((await vigil.publicPages.findStatusPage(fine.id))!)).state).toBe('OPERATIONAL');
  });

  it('an open incident that moves to MAINTENANCE makes the service MAINTENANCE; open ones of both kinds make it DISRUPTED', async () => {
    const { vigil, a, clock, api, db, page } = await history();
    const incident = await vigil.statusPageIncidents.create(a, { name: 'API slow', serviceIds: [api.id], incidentUpdate: { description: 'slow' } });
    expect(serviceOf(await vigil.publicPages.statusPageView(page), 'API').state).toBe('DISRUPTED');
    clock.advance(HOUR);
    await vigil.statusPageIncidents.addUpdate(a, incident.id, { description: 'planned fix', status: 'MAINTENANCE' });
    expect(serviceOf(await vigil.publicPages.statusPageView(page), 'API').state).toBe('MAINTENANCE');
    // DB already has an open maintenance; an open outage on top makes it DISRUPTED.
    await vigil.statusPageIncidents.create(a, { name: 'DB down', serviceIds: [db.id], incidentUpdate: { description: 'down', status: 'IDENTIFIED' } });
    expect(serviceOf(await vigil.publicPages.statusPageView(page), 'DB').state).toBe('DISRUPTED');
  });

  it('daily uptime comes from the incidents\' spans; a maintenance is not downtime; days before the service are null', async () => {
    const { vigil, page } = await history();
    const view = await vigil.publicPages.statusPageView(page);
    const api = serviceOf(view, 'API');
    expect(api.days).toEqual([
      { date: '2026-04-30', uptime: null, downMs: 0 }, // before the service was created
      { date: '2026-05-01', uptime: 91.67, downMs: 2 * HOUR }, // 06:00-08:00: 22/24
      { date: '2026-05-02', uptime: 100, downMs: 0 },
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ]);
    // 2 h down of 24 + 24 + 12 = 60 h observed -> 1 - 2/60 = 96.667
    expect(api.uptime).toBe(96.667);

    const web = serviceOf(view, 'Web');
    expect(web.days.map((d) => d.uptime)).toEqual([null, 100, 100, 75]); // 09:00-12:00 of 12 h today: 9/12
    expect(web.days[3]!.downMs).toBe(3 * HOUR);
    // 3 h down of 60 h -> 95
    expect(web.uptime).toBe(95);

    // Both DB incidents were opened as MAINTENANCE: no downtime at all.
    const db = serviceOf(view, 'DB');
    expect(db.days.map((d) => d.uptime)).toEqual([null, 100, 100, 100]);
    expect(db.days.every((d) => d.downMs === 0)).toBe(true);
    expect(db.uptime).toBe(100);
  });

  it('an incident opened as an outage counts as downtime even after it moves to MAINTENANCE', async () => {
    const { vigil, a, clock, api, page } = await history();
    const incident = await vigil.statusPageIncidents.create(a, { name: 'API slow', serviceIds: [api.id], incidentUpdate: { description: 'slow' } });
    clock.set('2026-05-03T13:00:00.000Z');
    await vigil.statusPageIncidents.addUpdate(a, incident.id, { description: 'planned fix', status: 'MAINTENANCE' });
    clock.set('2026-05-03T18:00:00.000Z');
    const api2 = serviceOf(await vigil.publicPages.statusPageView(page), 'API');
    // open since 12:00 today, now 18:00: 6 h of 18 h -> 12/18 = 66.67
    expect(api2.days[3]).toEqual({ date: '2026-05-03', uptime: 66.67, downMs: 6 * HOUR });
    expect(api2.state).toBe('MAINTENANCE');
  });

  it('a resolved incident that is reopened is down only while open, not in between', async () => {
    // Fails against the current code: a span runs from the incident's first update to its stoppedAt (or now),
    // so the resolved gap May 1 08:00 - May 3 12:00 counts as downtime too (May 2 comes out 0 instead of 100).
    const { vigil, a, clock, page } = await history();
    // API outage: open 06:00-08:00 on May 1, resolved, then reopened at 12:00 on May 3; now 15:00.
    const outage = (await vigil.publicPages.statusPageView(page)).pastIncidents.find((i) => i.name === 'API outage')!;
    await vigil.statusPageIncidents.addUpdate(a, outage.id, { description: 'it is back', status: 'INVESTIGATING' });
    clock.set('2026-05-03T15:00:00.000Z');
    const api = serviceOf(await vigil.publicPages.statusPageView(page), 'API');
    expect(api.state).toBe('DISRUPTED');
    expect(api.days).toEqual([
      { date: '2026-04-30', uptime: null, downMs: 0 },
      { date: '2026-05-01', uptime: 91.67, downMs: 2 * HOUR }, // 06:00-08:00 only: 22/24
      { date: '2026-05-02', uptime: 100, downMs: 0 }, // resolved all day
      { date: '2026-05-03', uptime: 80, downMs: 3 * HOUR }, // 12:00-15:00 of 15 h: 12/15
    ]);
  });

  it('a backdated first update (publicIncidentUpdateDate) starts the downtime at that time', async () => {
    const { vigil, a, api, page } = await history();
    await vigil.statusPageIncidents.create(a, {
      name: 'Late report', serviceIds: [api.id], incidentUpdate: { description: 'since 10:00', publicIncidentUpdateDate: '2026-05-03T10:00:00.000Z' },
    });
    const day = serviceOf(await vigil.publicPages.statusPageView(page), 'API').days[3];
    // 10:00-12:00 (not from 12:00, when it was written) of 12 h -> 10/12 = 83.33
    expect(day).toEqual({ date: '2026-05-03', uptime: 83.33, downMs: 2 * HOUR });
  });

  it('lists open incidents as active and resolved ones as past, newest first; others\' and off-page ones are left out', async () => {
    const { vigil, page } = await history();
    const view = await vigil.publicPages.statusPageView(page);
    expect(view.activeIncidents.map((i) => i.name)).toEqual(['DB failover', 'Web errors']);
    expect(view.activeIncidents.every((i) => i.status !== 'RESOLVED' && i.stoppedAt === null)).toBe(true);
    expect(view.pastIncidents.map((i) => [i.name, i.stoppedAt])).toEqual([
      ['DB upgrade', '2026-05-02T12:00:00.000Z'],
      ['API outage', '2026-05-01T08:00:00.000Z'],
    ]);
    expect(view.pastIncidents[1]!.incidentUpdates.map((u) => u.status)).toEqual(['RESOLVED', 'IDENTIFIED', 'INVESTIGATING']);
  });

  it('past incidents are those of the days shown, at most pastIncidents of them', async () => {
    const { vigil, clock, page } = await history();
    // 4 days before 2026-05-05T08:01Z is 2026-05-01T08:01Z: API outage (resolved at 08:00) falls out.
    clock.set('2026-05-05T08:01:00.000Z');
    expect((await vigil.publicPages.statusPageView(page)).pastIncidents.map((i) => i.name)).toEqual(['DB upgrade']);

    const limited = await history({ uptimeDays: 4, pastIncidents: 1 });
    expect((await limited.vigil.publicPages.statusPageView(limited.page)).pastIncidents.map((i) => i.name)).toEqual(['DB upgrade']);
  });

  it('shows 90 days by default', async () => {
    const { vigil, page } = await history({});
    const view = await vigil.publicPages.statusPageView(page);
    const days = serviceOf(view, 'API').days;
    expect(vigil.publicPages.uptimeDays).toBe(90);
    expect(days).toHaveLength(90);
    // 2026-05-03 minus 89 days
    expect(days[0]!.date).toBe('2026-02-03');
    expect(days.at(-1)!.date).toBe('2026-05-03');
    expect(days.filter((d) => d.uptime !== null)).toHaveLength(3);
    expect(serviceOf(view, 'API').uptime).toBe(96.667);
  });
});

describe('PublicPageService badges', () => {
  /** Badges show only what a public dashboard shows: here one of every check, in both accounts. */
  async function setupPublished() {
    const s = await setup();
    await s.addDashboard(s.a, { tags: [], isPrivate: false });
    await s.addDashboard(s.b, { tags: [], isPrivate: false });
    return s;
  }

  it('checkBadge: the check\'s state and its average response time over the last 24 hours; null for an unknown id', async () => {
    // now: 2026-05-01T12:00Z
    const { vigil, a, b, addCheck, setStatus, addResults } = await setupPublished();
    const api = await addCheck(a, { name: 'api' });
    await setStatus(a, api.id);
    await addResults(a, api.id, [
      { startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 },
      { startedAt: '2026-05-01T10:00:00.000Z', responseTime: 200 },
      { startedAt: '2026-05-01T01:00:00.000Z', responseTime: 301 },
      { startedAt: '2026-04-30T11:00:00.000Z', responseTime: 9_000 }, // 25 h ago: out
      { startedAt: '2026-05-01T11:30:00.000Z', responseTime: 5_000, resultType: 'ATTEMPT' }, // not final: out
    ]);
    // (100 + 200 + 301) / 3 = 200.33 -> 200
    expect(await vigil.publicPages.checkBadge(api.id)).toEqual({ state: 'PASSING', responseTime: 200 });

    const failing = await addCheck(a, { name: 'failing' });
    await setStatus(a, failing.id, { hasErrors: true });
    expect(await vigil.publicPages.checkBadge(failing.id)).toEqual({ state: 'FAILING', responseTime: null });

    const fresh = await addCheck(a, { name: 'fresh' });
    expect(await vigil.publicPages.checkBadge(fresh.id)).toEqual({ state: 'PENDING', responseTime: null });

    const off = await addCheck(a, { name: 'off', activated: false });
    await setStatus(a, off.id);
    await addResults(a, off.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 }]);
    expect(await vigil.publicPages.checkBadge(off.id)).toEqual({ state: 'PAUSED', responseTime: null });

    // A check of another account is addressed by its id alone, with that account's status and results.
    const theirs = await addCheck(b, { name: 'theirs' });
    await setStatus(b, theirs.id, { isDegraded: true });
    await addResults(b, theirs.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 40 }]);
    expect(await vigil.publicPages.checkBadge(theirs.id)).toEqual({ state: 'DEGRADED', responseTime: 40 });

    expect(await vigil.publicPages.checkBadge(randomUUID())).toBeNull();
  });

  it('groupBadge: the worst state of the group\'s active checks and the average response time of their runs', async () => {
    const { vigil, a, addGroup, addCheck, setStatus, addResults } = await setupPublished();
    const g = await addGroup(a, { name: 'G' });
    const passing = await addCheck(a, { name: 'passing', groupId: g.id });
    const degraded = await addCheck(a, { name: 'degraded', groupId: g.id });
    const off = await addCheck(a, { name: 'off', groupId: g.id, activated: false });
    const outside = await addCheck(a, { name: 'outside' });
    await setStatus(a, passing.id);
    await setStatus(a, degraded.id, { isDegraded: true });
    await setStatus(a, off.id, { hasFailures: true });
    await setStatus(a, outside.id, { hasFailures: true });
    await addResults(a, passing.id, [
      { startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 },
      { startedAt: '2026-05-01T10:00:00.000Z', responseTime: 300 },
    ]);
    await addResults(a, degraded.id, [
      { startedAt: '2026-05-01T11:00:00.000Z', responseTime: 500 },
      { startedAt: '2026-04-30T11:00:00.000Z', responseTime: 7_000 }, // older than 24 h
    ]);
    await addResults(a, off.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 10_000 }]);
    await addResults(a, outside.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 20_000 }]);
    // The deactivated check's failure and the check outside the group do not count:
    // state DEGRADED; response time over the active checks' runs (100 + 300 + 500) / 3 = 300
    // (not the mean of the checks' means, (200 + 500) / 2 = 350).
    expect(await vigil.publicPages.groupBadge(g.id)).toEqual({ state: 'DEGRADED', responseTime: 300 });

    const h = await addGroup(a, { name: 'H' });
    await setStatus(a, (await addCheck(a, { name: 'h-pass', groupId: h.id })).id);
    await setStatus(a, (await addCheck(a, { name: 'h-fail', groupId: h.id })).id, { hasFailures: true });
    expect(await vigil.publicPages.groupBadge(h.id)).toEqual({ state: 'FAILING', responseTime: null });

    const p = await addGroup(a, { name: 'P' });
    await setStatus(a, (await addCheck(a, { name: 'p-pass', groupId: p.id })).id);
    await addCheck(a, { name: 'p-new', groupId: p.id });
    expect((await vigil.publicPages.groupBadge(p.id))!.state).toBe('PENDING');
  });

  it('groupBadge is PAUSED for a deactivated group or one whose checks are all deactivated; null for an unknown id', async () => {
    const { vigil, a, addGroup, addCheck, setStatus, addResults } = await setupPublished();
    const paused = await addGroup(a, { name: 'paused', activated: false });
    const c = await addCheck(a, { groupId: paused.id });
    await setStatus(a, c.id, { hasFailures: true });
    await addResults(a, c.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 }]);
    expect(await vigil.publicPages.groupBadge(paused.id)).toEqual({ state: 'PAUSED', responseTime: null });

    const allOff = await addGroup(a, { name: 'all off' });
    const d = await addCheck(a, { groupId: allOff.id, activated: false });
    await addCheck(a, { groupId: allOff.id, activated: false });
    await setStatus(a, d.id, { hasFailures: true });
    await addResults(a, d.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 }]);
    expect(await vigil.publicPages.groupBadge(allOff.id)).toEqual({ state: 'PAUSED', responseTime: null });

    expect(await vigil.publicPages.groupBadge(999_999)).toBeNull();
  });

  it('a check of a deactivated group is PAUSED on dashboards and on its own badge, whatever its last status', async () => {
    const { vigil, a, addGroup, addCheck, setStatus, addDashboard } = await setupPublished();
    const paused = await addGroup(a, { name: 'paused', activated: false });
    const c = await addCheck(a, { name: 'in paused group', groupId: paused.id });
    await setStatus(a, c.id, { hasFailures: true });
    expect((await vigil.publicPages.checkBadge(c.id))?.state).toBe('PAUSED');
    const d = await addDashboard(a, { tags: [] });
    const view = await vigil.publicPages.dashboardView((await vigil.storage.dashboards.get(a, d.id))!);
    expect(view.checks.map((x) => [x.name, x.state])).toEqual([['in paused group', 'PAUSED']]);
  });
});
