/** The public pages' dashboards: which checks a dashboard shows, their states and numbers, and the run links. */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CheckGroup } from '../src/model/check-group.js';
import type { CheckStatus } from '../src/model/check-status.js';
import type { TcpCheck } from '../src/model/check.js';
import type { StoredRecord } from '../src/ports/storage.js';
import { dashboardShows } from '../src/services/public-pages.js';
import { checkGroupFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { HOUR, setup, namesOf, sortedNames, byName } from './services-public-pages-support.js';

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

  it('a page of a dashboard that paginates: its checks in order, every check counted, the figures of that page alone', async () => {
    const { vigil, storage, a, addCheck, setStatus, addResults, addDashboard } = await setup();
    const names = ['e-fail', 'a-pass', 'b-pass', 'c-pass', 'd-degraded'];
    const ids = new Map<string, string>();
    for (const name of names) {
      const check = await addCheck(a, { name });
      ids.set(name, check.id);
      await setStatus(a, check.id, { hasFailures: name.endsWith('fail'), isDegraded: name.endsWith('degraded') });
      await addResults(a, check.id, [{ startedAt: '2026-05-01T11:00:00.000Z', responseTime: 100 }]);
    }
    const d = await addDashboard(a, { paginate: true, checksPerPage: 2 });
    const asked: string[][] = [];
    const aggregate = storage.checkResults.aggregate.bind(storage.checkResults);
    storage.checkResults.aggregate = (accountId, query) => (asked.push([...query.checkIds]), aggregate(accountId, query));
    const second = await vigil.publicPages.dashboardView(d, { page: 2 });
    expect(second.checks.map((c) => [c.name, c.runs24h])).toEqual([['a-pass', 1], ['b-pass', 1]]);
    expect([second.page, second.pages]).toEqual([2, 3]);
    expect(second.counts).toEqual({ FAILING: 1, DEGRADED: 1, PENDING: 0, PASSING: 3, PAUSED: 0 });
    expect(asked.flat().sort()).toEqual([ids.get('a-pass'), ids.get('b-pass')].sort());
    // Past the last page: the last; without a page, or where the dashboard does not paginate, every check.
    expect((await vigil.publicPages.dashboardView(d, { page: 99 })).checks.map((c) => c.name)).toEqual(['c-pass']);
    expect((await vigil.publicPages.dashboardView(d, { page: 0 })).page).toBe(1);
    const all = await vigil.publicPages.dashboardView(d);
    expect([all.checks.length, all.page, all.pages]).toEqual([5, 1, 1]);
    const flat = await vigil.publicPages.dashboardView(await addDashboard(a, { paginate: false, checksPerPage: 2 }), { page: 2 });
    expect([flat.checks.map((c) => c.name), flat.page, flat.pages]).toEqual([['e-fail', 'd-degraded', 'a-pass', 'b-pass', 'c-pass'], 1, 1]);
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
      { startedAt: '2026-04-30T13:10:00.000Z', responseTime: 80 },
      { startedAt: '2026-05-01T02:05:00.000Z', responseTime: 120, hasFailures: true },
      { startedAt: '2026-05-01T02:35:00.000Z', responseTime: 181 },
      { startedAt: '2026-05-01T11:59:59.000Z', responseTime: 30_000, hasErrors: true },
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
    expect(hours[0]).toEqual({ start: '2026-04-30T13:00:00.000Z', runs: 1, failures: 0, p50: 80 });
    // 02:00 today is 13 hours after the first hour; its median is between 120 and 181 (150.5, rounded).
    expect(hours[13]).toEqual({ start: '2026-05-01T02:00:00.000Z', runs: 2, failures: 1, p50: 151 });
    // A failed run's time counts too: a timeout is what a viewer waited.
    expect(hours[22]).toEqual({ start: '2026-05-01T11:00:00.000Z', runs: 1, failures: 1, p50: 30_000 });
    // An hour without runs has no point (a gap in the sparkline, not a zero).
    expect(hours[23]).toEqual({ start: '2026-05-01T12:00:00.000Z', runs: 0, failures: 0, p50: null });
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
    expect(check!.hours[23]).toEqual({ start: '2026-05-01T12:00:00.000Z', runs: 1, failures: 0, p50: 50 });
    expect(check!.hours[22]).toEqual({ start: '2026-05-01T11:00:00.000Z', runs: 1, failures: 0, p50: 150 });
    // (50 + 150) / 2
    expect(check).toMatchObject({ runs24h: 2, avg: 100 });
  });

  // A store with `listCurrentByDashboard` leaves out the incidents stopped before the days shown
  // (the view then reads no other incident); without it, the view reads every incident of the dashboard.
  it.each([['finds the current incidents', true], ['reads every incident', false]])('a dashboard\'s incidents from a store that %s', async (_how, current) => {
    const { vigil, a, clock, storage, addDashboard } = await setup();
    const d = await addDashboard(a, { enableIncidents: true });
    for (let n = 0; n < 5; n++) {
      const i = await vigil.incidents.create(a, { name: `old ${n}`, dashboardId: d.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }] });
      await vigil.incidents.addUpdate(a, i.id, { status: 'RESOLVED', description: 'fixed' });
    }
    clock.set('2026-05-20T12:00:00.000Z');
    await vigil.incidents.create(a, { name: 'now', dashboardId: d.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }] });
    if (current) storage.incidents.listByDashboard = () => Promise.reject(new Error('every incident of the dashboard was read'));
    else delete storage.incidents.listCurrentByDashboard;
    expect((await vigil.publicPages.dashboardView(d)).incidents.map((i) => i.name)).toEqual(['now']);
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
