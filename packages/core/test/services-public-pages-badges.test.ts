/** The public badges of a check and of a group. */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setup } from './services-public-pages-support.js';

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

  it('reads the statuses of a badge\'s own checks, not every status of the account', async () => {
    const { vigil, storage, a, addGroup, addCheck, setStatus } = await setupPublished();
    const g = await addGroup(a, { name: 'G' });
    const inGroup = await addCheck(a, { name: 'in group', groupId: g.id });
    const alone = await addCheck(a, { name: 'alone' });
    await setStatus(a, inGroup.id, { isDegraded: true });
    await setStatus(a, alone.id, { hasFailures: true });
    for (let i = 0; i < 20; i++) await setStatus(a, (await addCheck(a, { name: `other-${i}` })).id);
    // A badge is asked for often (an image in a README); the account may have thousands of checks.
    storage.checkStatuses.list = () => Promise.reject(new Error('every status of the account was read'));
    expect(await vigil.publicPages.checkBadge(alone.id)).toEqual({ state: 'FAILING', responseTime: null });
    expect(await vigil.publicPages.groupBadge(g.id)).toEqual({ state: 'DEGRADED', responseTime: null });
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
