import type { ErrorGroup, TestSessionErrorGroup } from '../model/error-group.js';
import {
  alertStateFixture,
  checkSessionFixture,
  checkStatusFixture,
  errorGroupFixture,
  outboxMessageFixture,
  testSessionErrorGroupFixture,
} from './fixtures.js';
import { repositoryCases } from './storage-suite-repository.js';
import { UNICODE_TEXT } from './storage-suite-resources.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkRawCount,
  checkRejects,
  checkSame,
  isoAt,
  rawMatching,
  rawRows,
  type StorageCase,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

const T0 = '2026-05-01T12:00:00.000Z';

/** A row as a writer passes it back to the store: without its account (the call carries it). */
const withoutAccount = <T extends { accountId: string }>({ accountId: _a, ...rest }: T) => rest;

/**
 * Starts `writers` read-then-compare-and-set loops at once; each runs `step` until it answers true
 * (its write went in). Answers the attempt each writer won with.
 */
async function race(writers: number, step: (writer: number, attempt: number) => Promise<boolean>): Promise<number[]> {
  return Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let attempt = 0; attempt < 100; attempt++) if (await step(writer, attempt)) return attempt;
      throw new Error(`Conformance: writer ${writer} never got its compare-and-set in`);
    }),
  );
}

/** A UUID-shaped id numbered n (outbox messages, sequences). */
const numberedId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const message = (n: number, accountId = ACCOUNT_A) =>
  outboxMessageFixture(accountId, { id: numberedId(n), checkId: 'check-1', created_at: isoAt(T0, n), nextAttemptAt: T0 });

export function runCases(c: StorageCase) {
  repositoryCases<ErrorGroup>(c, {
    label: 'error groups',
    table: 'error_groups',
    repo: (s) => s.errorGroups,
    make: (marker) => errorGroupFixture('check-1', { cleanedErrorMessage: `connect ECONNREFUSED ${marker}` }),
    change: (row, marker) => ({ ...row, cleanedErrorMessage: `timeout ${marker}`, archivedUntilNextEvent: true }),
    rich: (record) => ({
      ...record,
      rawErrorMessage: null,
      cleanedErrorMessage: `${record.cleanedErrorMessage} ${UNICODE_TEXT}`,
      rootCauseAnalyses: [{ summary: UNICODE_TEXT, steps: [], nested: { a: null, b: [1, 2.5] } }],
    }),
  });
  repositoryCases<TestSessionErrorGroup>(c, {
    label: 'test-session error groups',
    table: 'test_session_error_groups',
    repo: (s) => s.testSessionErrorGroups,
    make: (marker) => testSessionErrorGroupFixture('project-1', { cleanedErrorMessage: `expect failed ${marker}` }),
    change: (row, marker) => ({ ...row, cleanedErrorMessage: `expect failed ${marker}`, environments: ['staging'] }),
    rich: (record) => ({
      ...record,
      projectId: null,
      environments: null,
      pwtMetadata: [{ projectName: UNICODE_TEXT, testFile: 'tests/a.spec.ts', testTitle: 'logs in', suitePath: [] }],
    }),
  });

  c('error groups: findByHash and listByCheck stay in one account and one check', async (f) => {
    const groups = f.storage.errorGroups;
    const g1 = await groups.insert(ACCOUNT_A, errorGroupFixture('check-1', { errorHash: 'a'.repeat(64) }));
    const g2 = await groups.insert(ACCOUNT_A, errorGroupFixture('check-1', { errorHash: 'b'.repeat(64) }));
    await groups.insert(ACCOUNT_A, errorGroupFixture('check-2', { errorHash: 'a'.repeat(64) }));
    await groups.insert(ACCOUNT_B, errorGroupFixture('check-1', { errorHash: 'c'.repeat(64) }));
    checkSame(await groups.findByHash(ACCOUNT_A, 'check-1', 'a'.repeat(64)), g1, 'findByHash answers the group of that check');
    check((await groups.findByHash(ACCOUNT_A, 'check-1', 'c'.repeat(64))) === null, 'another account\'s hash is not found');
    const page = await groups.listByCheck(ACCOUNT_A, 'check-1', { limit: 1, offset: 1 });
    checkSame(page.items.map((g) => g.id), [g2.id], 'listByCheck pages in creation order');
    check(page.total === 2, 'listByCheck counts this check\'s groups');
    const tsg = f.storage.testSessionErrorGroups;
    const t1 = await tsg.insert(ACCOUNT_A, testSessionErrorGroupFixture('project-1', { errorHash: 'd'.repeat(64) }));
    const t2 = await tsg.insert(ACCOUNT_A, testSessionErrorGroupFixture(null, { errorHash: 'd'.repeat(64) }));
    await tsg.insert(ACCOUNT_B, testSessionErrorGroupFixture('project-1', { errorHash: 'e'.repeat(64) }));
    checkSame(await tsg.findByHash(ACCOUNT_A, 'project-1', 'd'.repeat(64)), t1, 'findByHash with a project');
    checkSame(await tsg.findByHash(ACCOUNT_A, null, 'd'.repeat(64)), t2, 'findByHash without a project');
    check((await tsg.findByHash(ACCOUNT_A, 'project-1', 'e'.repeat(64))) === null, 'another account\'s hash is not found');
    checkSame((await tsg.listByProject(ACCOUNT_A, 'project-1')).map((g) => g.id), [t1.id], 'listByProject');
  });

  c('check sessions: insert, get, update; another account sees nothing', async (f) => {
    const sessions = f.storage.checkSessions;
    const record = checkSessionFixture('check-1', { projectId: UNICODE_TEXT });
    checkSame(await sessions.insert(ACCOUNT_A, record), { ...record, accountId: ACCOUNT_A }, 'insert answers the session');
    await checkRejects(() => sessions.insert(ACCOUNT_A, record), 'CONFLICT', 'a second insert of a session id');
    checkSame(await sessions.get(ACCOUNT_A, record.checkSessionId), { ...record, accountId: ACCOUNT_A }, 'get answers it');
    check((await sessions.get(ACCOUNT_B, record.checkSessionId)) === null, 'another account cannot read it');
    const done = {
      ...record,
      status: 'PASSED' as const,
      stoppedAt: isoAt(T0, 1500),
      timeElapsed: 1500,
      sequences: record.sequences.map((s) => ({ ...s, status: 'PASSED' as const })),
    };
    const before = await rawRows(f.raw, 'check_sessions');
    check((await sessions.update(ACCOUNT_B, done)) === null, 'another account cannot update it');
    checkSame(await rawRows(f.raw, 'check_sessions'), before, 'the raw row is unchanged');
    checkSame(await sessions.update(ACCOUNT_A, done), { ...done, accountId: ACCOUNT_A }, 'update answers the new session');
    checkSame(await sessions.get(ACCOUNT_A, record.checkSessionId), { ...done, accountId: ACCOUNT_A }, 'get answers the update');
    check((await rawMatching(f.raw, 'check_sessions', record.checkSessionId, 'PASSED')).length === 1, 'the raw row holds the new status');
  });

  c('check statuses: upsert, get, list, delete per account', async (f) => {
    const statuses = f.storage.checkStatuses;
    const s1 = checkStatusFixture('check-1');
    checkSame(await statuses.upsert(ACCOUNT_A, s1), { ...s1, accountId: ACCOUNT_A }, 'upsert answers the status');
    const s1b = { ...s1, hasFailures: true, longestRun: null, updated_at: isoAt(T0, 1000) };
    checkSame(await statuses.upsert(ACCOUNT_A, s1b), { ...s1b, accountId: ACCOUNT_A }, 'a second upsert replaces it');
    await statuses.upsert(ACCOUNT_A, checkStatusFixture('check-2'));
    await statuses.upsert(ACCOUNT_B, checkStatusFixture('check-1', { name: 'theirs' }));
    await checkRawCount(f.raw, 'check_statuses', 3, 'one row per account and check');
    checkSame(await statuses.get(ACCOUNT_A, 'check-1'), { ...s1b, accountId: ACCOUNT_A }, 'get answers this account\'s status');
    checkSame((await statuses.list(ACCOUNT_A)).map((s) => s.checkId).sort(), ['check-1', 'check-2'], 'list answers this account\'s statuses');
    check((await statuses.delete(ACCOUNT_A, 'check-1')) === true, 'delete answers true');
    check((await statuses.delete(ACCOUNT_A, 'check-1')) === false, 'a second delete answers false');
    check((await statuses.get(ACCOUNT_B, 'check-1'))?.name === 'theirs', 'the other account\'s status of the same check stays');
  });

  c('alert states: put, get, delete per account and check', async (f) => {
    const states = f.storage.alertStates;
    const failing = alertStateFixture({ status: 'FAILING', consecutiveFailures: 3, failingSince: T0, alerted: 'FAILURE', lastAlertAt: T0, incidentId: 'incident-1' });
    check((await states.get(ACCOUNT_A, 'check-1')) === null, 'no state yet');
    await states.put(ACCOUNT_A, 'check-1', alertStateFixture());
    await states.put(ACCOUNT_A, 'check-1', failing);
    await states.put(ACCOUNT_B, 'check-1', alertStateFixture());
    checkSame(await states.get(ACCOUNT_A, 'check-1'), failing, 'put replaces, get answers it exactly');
    await checkRawCount(f.raw, 'alert_states', 2, 'one row per account and check');
    await states.delete(ACCOUNT_B, 'check-1');
    checkSame(await states.get(ACCOUNT_A, 'check-1'), failing, 'deleting another account\'s state leaves this one');
    await states.delete(ACCOUNT_A, 'check-1');
    check((await states.get(ACCOUNT_A, 'check-1')) === null, 'deleted');
    await checkRawCount(f.raw, 'alert_states', 0, 'the raw table is empty');
  });

  c('heartbeats: recordPing, lastPing, listPings in a range', async (f) => {
    const hb = f.storage.heartbeats;
    check((await hb.lastPing(ACCOUNT_A, 'beat-1')) === null, 'no ping yet');
    const ping = (ms: number, source: string | null = null) => ({ checkId: 'beat-1', at: isoAt(T0, ms), source });
    for (const p of [ping(2000, '10.0.0.1'), ping(0), ping(1000, UNICODE_TEXT), ping(3000)]) await hb.recordPing(ACCOUNT_A, p);
    await hb.recordPing(ACCOUNT_B, ping(5000));
    await hb.recordPing(ACCOUNT_A, { ...ping(4000), checkId: 'beat-2' });
    checkSame(await hb.lastPing(ACCOUNT_A, 'beat-1'), ping(3000), 'lastPing answers the latest by time');
    checkSame(
      await hb.listPings(ACCOUNT_A, 'beat-1', new Date(isoAt(T0, 1000)), new Date(isoAt(T0, 3000))),
      [ping(1000, UNICODE_TEXT), ping(2000, '10.0.0.1')],
      'listPings answers [from, to) oldest first',
    );
    check((await hb.listPings(ACCOUNT_B, 'beat-1', new Date(T0), new Date(isoAt(T0, 4000)))).length === 0, 'another account\'s range is empty');
    await checkRawCount(f.raw, 'heartbeat_pings', 6, 'every ping is stored');
  });

  c('heartbeats: prunePings removes an account\'s pings before the cut-off a batch at a time, each check\'s newest kept', async (f) => {
    const hb = f.storage.heartbeats;
    if (!hb.prunePings) return;
    const ping = (checkId: string, ms: number) => ({ checkId, at: isoAt(T0, ms), source: null });
    // beat-1: five pings, two after the cut-off; beat-2: two, both before it; another account's beat-1: two, both before it.
    for (const ms of [0, 1000, 2000, 6000, 7000]) await hb.recordPing(ACCOUNT_A, ping('beat-1', ms));
    for (const ms of [1000, 3000]) await hb.recordPing(ACCOUNT_A, ping('beat-2', ms));
    for (const ms of [0, 500]) await hb.recordPing(ACCOUNT_B, ping('beat-1', ms));
    const cutOff = new Date(isoAt(T0, 5000));
    check((await hb.prunePings(ACCOUNT_A, cutOff, 2)) === 2, 'a batch of two goes');
    check((await hb.prunePings(ACCOUNT_A, cutOff, 2)) === 2, 'then the rest: beat-1\'s third and beat-2\'s older');
    check((await hb.prunePings(ACCOUNT_A, cutOff, 2)) === 0, 'then none');
    const all = (account: string, checkId: string) => hb.listPings(account, checkId, new Date(isoAt(T0, -1)), new Date(isoAt(T0, 10_000)));
    checkSame((await all(ACCOUNT_A, 'beat-1')).map((p) => p.at), [isoAt(T0, 6000), isoAt(T0, 7000)], 'beat-1 keeps the pings after the cut-off');
    checkSame((await all(ACCOUNT_A, 'beat-2')).map((p) => p.at), [isoAt(T0, 3000)], 'beat-2 keeps its newest though it is before the cut-off');
    checkSame((await hb.lastPing(ACCOUNT_A, 'beat-2'))?.at, isoAt(T0, 3000), 'and it is still its last ping');
    check((await all(ACCOUNT_B, 'beat-1')).length === 2, 'another account\'s pings stay');
    await checkRawCount(f.raw, 'heartbeat_pings', 5, 'the raw table holds what is left');
  });

  stateRowCases(c);
}

/**
 * State rows under racing writers: several locations (or processes) finish runs of one check at the
 * same instant. A first row written by many at once is no conflict; and with compare-and-set each
 * reads the row, changes it and writes it back only while it is still what it read, so that no
 * change is lost and no writer fails.
 */
function stateRowCases(c: StorageCase) {
  c('check statuses: replace writes only over the status it expects', async (f) => {
    const statuses = f.storage.checkStatuses;
    const v1 = checkStatusFixture('check-1', { name: 'status-v1' });
    check((await statuses.replace(ACCOUNT_A, null, v1)) === true, 'replace over no status (expected null) writes');
    check((await rawMatching(f.raw, 'check_statuses', 'status-v1')).length === 1, 'the raw table holds the first status');
    const stored = (await statuses.get(ACCOUNT_A, 'check-1'))!;
    const refused = { ...v1, name: 'status-refused' };
    check((await statuses.replace(ACCOUNT_A, null, refused)) === false, 'expected null while a status is stored: no write');
    check((await statuses.replace(ACCOUNT_A, { ...stored, longestRun: 1 }, refused)) === false, 'a stale expected status: no write');
    check((await statuses.replace(ACCOUNT_B, stored, refused)) === false, 'another account holds no such status: no write');
    check((await rawMatching(f.raw, 'check_statuses', 'status-refused')).length === 0, 'no refused status reached the raw table');
    await checkRawCount(f.raw, 'check_statuses', 1, 'a refused replace adds no row');
    const v2 = { ...v1, name: 'status-v2', hasFailures: true, longestRun: null, updated_at: isoAt(T0, 1000) };
    check((await statuses.replace(ACCOUNT_A, stored, v2)) === true, 'the stored status as expected: writes');
    check((await rawMatching(f.raw, 'check_statuses', 'status-v2')).length === 1, 'the raw row holds the new status');
    check((await rawMatching(f.raw, 'check_statuses', 'status-v1')).length === 0, 'the raw row no longer holds the old one');
    checkSame(await statuses.get(ACCOUNT_A, 'check-1'), { ...v2, accountId: ACCOUNT_A }, 'get answers the new status');
    check((await statuses.replace(ACCOUNT_A, stored, refused)) === false, 'the status it replaced is stale now');
  });

  c('check statuses: ten writers racing read-then-replace each get their change in', async (f) => {
    const statuses = f.storage.checkStatuses;
    await race(10, async () => {
      const current = await statuses.get(ACCOUNT_A, 'check-1');
      const next = current
        ? { ...withoutAccount(current), longestRun: (current.longestRun ?? 0) + 1 }
        : checkStatusFixture('check-1', { longestRun: 1 });
      return statuses.replace(ACCOUNT_A, current, next);
    });
    const longestRun = (await statuses.get(ACCOUNT_A, 'check-1'))?.longestRun;
    check(longestRun === 10, `all ten increments are applied, got ${String(longestRun)}`);
    await checkRawCount(f.raw, 'check_statuses', 1, 'one row for the check');
  });

  c('check statuses and alert states: writers racing to store the first row never conflict', async (f) => {
    const racers = Array.from({ length: 10 }, (_, i) => i);
    await Promise.all(racers.map((i) => f.storage.checkStatuses.upsert(ACCOUNT_A, checkStatusFixture('check-1', { name: `racer-${i}` }))));
    await checkRawCount(f.raw, 'check_statuses', 1, 'ten first upserts leave one status row');
    const name = (await f.storage.checkStatuses.get(ACCOUNT_A, 'check-1'))?.name ?? '';
    check(/^racer-\d$/.test(name), `the status is one racer's, got ${name}`);
    await Promise.all(racers.map((i) => f.storage.alertStates.put(ACCOUNT_A, 'check-1', alertStateFixture({ consecutiveFailures: i }))));
    await checkRawCount(f.raw, 'alert_states', 1, 'ten first puts leave one state row');
  });

  c('check sessions: replace writes only over the session it expects', async (f) => {
    const sessions = f.storage.checkSessions;
    const record = checkSessionFixture('check-1');
    const stored = await sessions.insert(ACCOUNT_A, record);
    const progress = { ...record, status: 'PROGRESS' as const };
    check((await sessions.replace(ACCOUNT_A, { ...stored, status: 'PASSED' }, progress)) === false, 'a stale expected session: no write');
    check((await sessions.replace(ACCOUNT_B, stored, progress)) === false, 'another account holds no such session: no write');
    check((await rawMatching(f.raw, 'check_sessions', 'PROGRESS')).length === 0, 'the raw row is unchanged');
    check((await sessions.replace(ACCOUNT_A, stored, progress)) === true, 'the stored session as expected: writes');
    check((await rawMatching(f.raw, 'check_sessions', record.checkSessionId, 'PROGRESS')).length === 1, 'the raw row holds the new status');
    checkSame(await sessions.get(ACCOUNT_A, record.checkSessionId), { ...progress, accountId: ACCOUNT_A }, 'get answers the new session');
    check((await sessions.replace(ACCOUNT_A, stored, { ...record, status: 'CANCELLED' })) === false, 'the session it replaced is stale now');
    check((await rawMatching(f.raw, 'check_sessions', 'CANCELLED')).length === 0, 'the stale replace wrote nothing');
  });

  c('check sessions: ten sequences completing at once each get their status in', async (f) => {
    const sessions = f.storage.checkSessions;
    const sequences = Array.from({ length: 10 }, (_, i) => ({ sequenceId: numberedId(i), runLocation: `location-${i}`, status: 'PROGRESS' as const }));
    const record = checkSessionFixture('check-1', { status: 'PROGRESS', runLocations: sequences.map((s) => s.runLocation), sequences });
    await sessions.insert(ACCOUNT_A, record);
    await race(10, async (writer) => {
      const current = (await sessions.get(ACCOUNT_A, record.checkSessionId))!;
      const done = current.sequences.map((s, i) => (i === writer ? { ...s, status: 'PASSED' as const } : s));
      return sessions.replace(ACCOUNT_A, current, { ...withoutAccount(current), sequences: done });
    });
    const statuses = (await sessions.get(ACCOUNT_A, record.checkSessionId))?.sequences.map((s) => s.status);
    checkSame(statuses, sequences.map(() => 'PASSED'), 'every sequence is completed');
  });

  c('alert states: transition stores the state and queues its messages only over the state it expects', async (f) => {
    const states = f.storage.alertStates;
    const failing = alertStateFixture({ status: 'FAILING', consecutiveFailures: 1, failingSince: T0, alerted: 'FAILURE', lastAlertAt: T0, lastRunId: 'state-v1' });
    check((await states.transition(ACCOUNT_A, 'check-1', alertStateFixture(), failing, [message(1)])) === false, 'a state expected where there is none: no write');
    await checkRawCount(f.raw, 'alert_states', 0, 'the refused transition stored no state');
    await checkRawCount(f.raw, 'outbox', 0, 'the refused transition queued nothing');
    check((await states.transition(ACCOUNT_A, 'check-1', null, failing, [message(1), message(2)])) === true, 'expected null over no state: writes');
    check((await rawMatching(f.raw, 'alert_states', 'state-v1')).length === 1, 'the raw table holds the state');
    check((await rawMatching(f.raw, 'outbox', numberedId(1))).length === 1 && (await rawMatching(f.raw, 'outbox', numberedId(2))).length === 1, 'the raw outbox holds both messages');
    checkSame((await f.storage.outbox.pending(ACCOUNT_A)).map((m) => m.id), [numberedId(1), numberedId(2)], 'they wait for delivery as enqueued messages do');
    const stored = (await states.get(ACCOUNT_A, 'check-1'))!;
    checkSame(stored, failing, 'get answers the state');
    const reminded = { ...stored, remindersSent: 1, lastRunId: 'state-v2' };
    check((await states.transition(ACCOUNT_A, 'check-1', null, reminded, [message(3)])) === false, 'expected null while a state is stored: no write');
    check((await states.transition(ACCOUNT_A, 'check-1', { ...stored, consecutiveFailures: 5 }, reminded, [message(3)])) === false, 'a stale expected state: no write');
    check((await states.transition(ACCOUNT_B, 'check-1', stored, reminded, [message(3, ACCOUNT_B)])) === false, 'another account holds no such state: no write');
    check((await rawMatching(f.raw, 'alert_states', 'state-v2')).length === 0, 'no refused state reached the raw table');
    check((await rawMatching(f.raw, 'outbox', numberedId(3))).length === 0, 'no refused message reached the raw outbox');
    const repeated = { ...message(2), payload: { marker: 'repeat-not-stored' } };
    check((await states.transition(ACCOUNT_A, 'check-1', stored, reminded, [repeated, message(3)])) === true, 'the stored state as expected: writes, a repeated message id is no error');
    checkSame(await states.get(ACCOUNT_A, 'check-1'), reminded, 'get answers the new state');
    check((await rawMatching(f.raw, 'alert_states', 'state-v1')).length === 0, 'the raw row no longer holds the old state');
    await checkRawCount(f.raw, 'outbox', 3, 'the new message is queued, the repeated one is not queued twice');
    check((await rawMatching(f.raw, 'outbox', 'repeat-not-stored')).length === 0, 'the message queued first stays as it was');
  });

  c('alert states: transitionAndLease leases, in the same write, what the outbox would hand out of what it queued', async (f) => {
    const states = f.storage.alertStates;
    // A store without it is used through transition (its messages are claimed).
    if (!states.transitionAndLease) return;
    const outbox = f.storage.outbox;
    const now = new Date(Date.parse(T0) + 60_000);
    const terms = (owner: string, limit = 10) => ({ owner, now, leaseMs: 30_000, limit });
    const to = (n: number, alertChannelId: number, extra: Partial<ReturnType<typeof message>> = {}) => ({ ...message(n), alertChannelId, ...extra });
    const failing = alertStateFixture({ status: 'FAILING', consecutiveFailures: 1, failingSince: T0, lastRunId: 'lease-v1' });
    check((await states.transitionAndLease(ACCOUNT_A, 'check-1', alertStateFixture(), failing, [to(1, 1)], terms('me'))) === null, 'a state it does not expect: null');
    await checkRawCount(f.raw, 'outbox', 0, 'the refused step queued nothing');
    // Another check's message, due and free, is queued already: it is the claim's, not this step's.
    const elsewhere = { ...message(9), checkId: 'check-2' };
    await outbox.enqueue([elsewhere]);
    // Channel 1 gets two (the second waits for the first), channel 2 one not yet due, channel 3 one.
    const later = new Date(now.getTime() + 10_000).toISOString();
    const queued = [to(1, 1), to(2, 1), to(3, 2, { nextAttemptAt: later }), to(4, 3)];
    const leased = await states.transitionAndLease(ACCOUNT_A, 'check-1', null, failing, queued, terms('me'));
    checkSame(leased?.map((m) => m.id), [numberedId(1), numberedId(4)], 'the head of each check and channel that is due, oldest first');
    checkSame(leased?.map((m) => [m.leaseOwner, m.leaseUntil, m.payload]), [1, 4].map((n) => ['me', new Date(now.getTime() + 30_000).toISOString(), message(n).payload]), 'answered as claimed');
    checkSame(await states.get(ACCOUNT_A, 'check-1'), failing, 'the state is stored');
    checkSame((await outbox.pending(ACCOUNT_A)).map((m) => m.id).sort(), [...queued, elsewhere].map((m) => m.id).sort(), 'all four are queued');
    checkSame((await outbox.claim(now, 10, 30_000, 'other')).map((m) => m.id), [elsewhere.id], 'another process claims only the other check\'s: the leased heads hold theirs back');
    check(await outbox.markDelivered(numberedId(1), 'me', now), 'the lease is this owner\'s');
    checkSame((await outbox.claim(new Date(now.getTime() + 20_000), 10, 30_000, 'other')).map((m) => m.id), [numberedId(2), numberedId(3)], 'then the next of channel 1, and channel 2 once due');
    // The limit, and a repeated message that another process holds.
    const next = { ...failing, lastRunId: 'lease-v2' };
    const more = [to(5, 4), to(6, 5), to(2, 1)];
    checkSame((await states.transitionAndLease(ACCOUNT_A, 'check-1', failing, next, more, terms('me', 1)))?.map((m) => m.id), [numberedId(5)], 'no more than the limit');
    checkSame((await outbox.claim(new Date(now.getTime() + 20_000), 10, 30_000, 'other')).map((m) => m.id), [numberedId(6)], 'what it did not lease is claimed');
    check((await rawMatching(f.raw, 'alert_states', 'lease-v2')).length === 1, 'the raw table holds the last state');
  });

  c('alert states: ten writers racing transitions each get their step in, and only winners queue messages', async (f) => {
    const states = f.storage.alertStates;
    const shared = { ...message(100_000), payload: { every: 'step' } };
    const won = await race(10, async (writer, attempt) => {
      const current = await states.get(ACCOUNT_A, 'check-1');
      const next = current ? { ...current, remindersSent: current.remindersSent + 1 } : alertStateFixture({ remindersSent: 1 });
      return states.transition(ACCOUNT_A, 'check-1', current, next, [message(writer * 100 + attempt), shared]);
    });
    const remindersSent = (await states.get(ACCOUNT_A, 'check-1'))?.remindersSent;
    check(remindersSent === 10, `all ten steps are applied, got ${String(remindersSent)}`);
    const winners = [...won.map((attempt, writer) => numberedId(writer * 100 + attempt)), shared.id].sort();
    checkSame((await f.storage.outbox.pending(ACCOUNT_A)).map((m) => m.id).sort(), winners, 'the outbox holds the message of each winning step and the shared one once');
    await checkRawCount(f.raw, 'outbox', 11, 'no losing step queued anything');
  });
}
