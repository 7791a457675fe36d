import type { ScheduleEntry } from '../ports/storage.js';
import { outboxMessageFixture } from './fixtures.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkRawCount,
  checkSame,
  isoAt,
  rawMatching,
  type StorageCase,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

const T0 = '2026-05-01T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms);
const LEASE = 30_000;

const entry = (checkId: string, location = 'us-east-1', dueMs = 0, accountId = ACCOUNT_A): ScheduleEntry => ({
  kind: 'run',
  accountId,
  checkId,
  location,
  dueAt: isoAt(T0, dueMs),
});

const keys = (jobs: { checkId: string; location: string }[]) => jobs.map((j) => `${j.checkId}@${j.location}`);

export function scheduleCases(c: StorageCase) {
  c('schedule: upsert sets and moves entries, list and remove work per check and account', async (f) => {
    const s = f.storage.schedule;
    await s.upsert(entry('check-1', 'us-east-1', 0));
    await s.upsert(entry('check-1', 'eu-west-1', 1000));
    await s.upsert(entry('check-2', 'us-east-1', 0));
    await s.upsert(entry('check-1', 'us-east-1', 5000));
    const listed = (await s.list(ACCOUNT_A, 'check-1')).sort((a, b) => a.location.localeCompare(b.location));
    checkSame(listed, [entry('check-1', 'eu-west-1', 1000), entry('check-1', 'us-east-1', 5000)], 'one entry per location; upsert moved dueAt');
    check((await s.list(ACCOUNT_B, 'check-1')).length === 0, 'another account lists nothing');
    await s.remove(ACCOUNT_B, 'check-1');
    await checkRawCount(f.raw, 'schedule', 3, 'remove from another account removes nothing');
    await s.remove(ACCOUNT_A, 'check-1');
    check((await s.list(ACCOUNT_A, 'check-1')).length === 0, 'remove drops every location of the check');
    await checkRawCount(f.raw, 'schedule', 1, 'check-2 stays');
  });

  c('schedule: ensure adds missing entries and leaves existing ones and their leases alone', async (f) => {
    const s = f.storage.schedule;
    await s.upsert(entry('check-1', 'us-east-1', 0));
    const [leased] = await s.claimDue(at(0), {}, 1, LEASE, 'owner-1');
    check(leased !== undefined, 'the entry is leased');
    const many = Array.from({ length: 250 }, (_, i) => entry(`bulk-${i}`, 'eu-west-1', 1000 + i));
    const added = await s.ensure([entry('check-1', 'us-east-1', 9000), entry('check-1', 'eu-west-1', 2000), ...many]);
    check(added === 251, `ensure answers how many it added (251), got ${added}`);
    checkSame(
      (await s.list(ACCOUNT_A, 'check-1')).sort((a, b) => a.location.localeCompare(b.location)),
      [entry('check-1', 'eu-west-1', 2000), entry('check-1', 'us-east-1', 0)],
      'the existing entry kept its dueAt; the missing location was added',
    );
    check((await s.claimDue(at(0), {}, 10, LEASE, 'owner-2')).length === 0, 'the existing entry kept its lease');
    await checkRawCount(f.raw, 'schedule', 252, 'every bulk entry is stored');
    check((await s.ensure(many)) === 0, 'a second ensure adds nothing');
  });

  c('schedule: claimDue answers due entries by dueAt, up to limit, with a lease', async (f) => {
    const s = f.storage.schedule;
    await s.upsert(entry('late', 'us-east-1', 3000));
    await s.upsert(entry('first', 'us-east-1', -2000));
    await s.upsert(entry('second', 'us-east-1', -1000));
    await s.upsert(entry('now', 'us-east-1', 0));
    await s.upsert(entry('future', 'us-east-1', 1));
    const jobs = await s.claimDue(at(0), {}, 2, LEASE, 'owner-1');
    checkSame(keys(jobs), ['first@us-east-1', 'second@us-east-1'], 'the two earliest due entries');
    checkSame(jobs[0], { ...entry('first', 'us-east-1', -2000), leaseOwner: 'owner-1', leaseUntil: isoAt(T0, LEASE), reclaimed: false }, 'a job carries its lease');
    checkSame(keys(await s.claimDue(at(0), {}, 10, LEASE, 'owner-1')), ['now@us-east-1'], 'dueAt == now is due; later is not; leased is not');
  });

  c('schedule: two concurrent claims get disjoint sets that cover all 100 due entries', async (f) => {
    const s = f.storage.schedule;
    for (let i = 0; i < 100; i++) await s.upsert(entry(`check-${String(i).padStart(3, '0')}`, 'us-east-1', -i * 10));
    const [a, b] = await Promise.all([
      s.claimDue(at(0), {}, 100, LEASE, 'owner-a'),
      s.claimDue(at(0), {}, 100, LEASE, 'owner-b'),
    ]);
    const ka = new Set(keys(a));
    const kb = keys(b);
    check(kb.every((k) => !ka.has(k)), 'no entry was leased to both owners');
    check(ka.size + kb.length === 100, `together they hold all 100, got ${ka.size} + ${kb.length}`);
    check(a.every((j) => j.leaseOwner === 'owner-a') && b.every((j) => j.leaseOwner === 'owner-b'), 'each job names its owner');
    check((await s.claimDue(at(0), {}, 100, LEASE, 'owner-c')).length === 0, 'nothing is left to claim');
  });

  c('schedule: an expired lease makes an entry claimable again', async (f) => {
    const s = f.storage.schedule;
    await s.upsert(entry('check-1'));
    check((await s.claimDue(at(0), {}, 10, LEASE, 'owner-1')).length === 1, 'first claim');
    check((await s.claimDue(at(LEASE - 1), {}, 10, LEASE, 'owner-2')).length === 0, 'still leased 1 ms before expiry');
    const again = await s.claimDue(at(LEASE), {}, 10, LEASE, 'owner-2');
    checkSame(keys(again), ['check-1@us-east-1'], 'claimable when the lease ends');
    check(again[0]?.leaseOwner === 'owner-2' && again[0].leaseUntil === isoAt(T0, 2 * LEASE), 'the new lease is owner-2\'s');
    check(again[0]?.reclaimed === true, 'a claim after an expired lease says so (reclaimed)');
  });

  c('schedule: only the lease holder completes; complete moves or removes the entry', async (f) => {
    const s = f.storage.schedule;
    await s.upsert(entry('check-1'));
    await s.upsert(entry('check-2'));
    const [j1, j2] = await s.claimDue(at(0), {}, 10, LEASE, 'owner-1');
    check(j1 !== undefined && j2 !== undefined, 'two jobs claimed');
    check((await s.complete({ ...j1, leaseOwner: 'intruder' }, at(60_000))) === false, 'a non-owner cannot complete');
    checkSame(await s.list(ACCOUNT_A, j1.checkId), [entry(j1.checkId)], 'a refused complete changes nothing');
    check((await s.complete(j1, at(60_000))) === true, 'the owner completes');
    checkSame(await s.list(ACCOUNT_A, j1.checkId), [entry(j1.checkId, 'us-east-1', 60_000)], 'complete moved dueAt');
    check((await s.complete(j2, null)) === true, 'complete with null');
    check((await s.list(ACCOUNT_A, j2.checkId)).length === 0, 'complete with null removes the entry');
    check((await s.claimDue(at(59_999), {}, 10, LEASE, 'owner-2')).length === 0, 'not due before nextDueAt');
    check((await s.claimDue(at(60_000), {}, 10, LEASE, 'owner-2')).length === 1, 'due again at nextDueAt (lease dropped)');
    check((await s.complete(j2, at(1))) === false, 'completing a removed entry fails');
    check((await rawMatching(f.raw, 'schedule', j2.checkId)).length === 0, 'the raw table no longer holds it');
  });

  c('schedule: an entry moved while it was held keeps its new time when its holder completes it', async (f) => {
    const s = f.storage.schedule;
    const tick: ScheduleEntry = { ...entry('check-1', ''), kind: 'alert-tick' };
    await s.upsert(tick);
    const [job] = await s.claimDue(at(0), {}, 1, LEASE, 'owner-1');
    // Another run plans the next tick while this one still holds it.
    await s.upsert({ ...tick, dueAt: isoAt(T0, 60_000) });
    check(job !== undefined && (await s.complete(job, null)), 'the holder completes it');
    checkSame(await s.list(ACCOUNT_A, 'check-1'), [{ ...tick, dueAt: isoAt(T0, 60_000) }], 'the moved entry stays, at its new time');
    check((await s.claimDue(at(60_000), {}, 1, LEASE, 'owner-2')).length === 1, 'and it is free to claim when due');
    const [run] = await (async () => {
      await s.upsert(entry('check-2', 'us-east-1', 0));
      return s.claimDue(at(0), {}, 1, LEASE, 'owner-3');
    })();
    await s.upsert(entry('check-2', 'us-east-1', 5_000));
    check(run !== undefined && (await s.complete(run, at(10_000))), 'a moved run entry completes');
    checkSame(await s.list(ACCOUNT_A, 'check-2'), [entry('check-2', 'us-east-1', 5_000)], 'its move stands over the holder\'s next time');
  });

  c('schedule: release drops one owner\'s leases and leaves the entries due', async (f) => {
    const s = f.storage.schedule;
    for (const id of ['a', 'b', 'c', 'd']) await s.upsert(entry(id));
    await s.claimDue(at(0), {}, 3, LEASE, 'owner-1');
    await s.claimDue(at(0), {}, 3, LEASE, 'owner-2');
    check((await s.release('owner-1')) === 3, 'release answers how many leases it dropped');
    check((await s.release('nobody')) === 0, 'an owner without leases releases none');
    const reclaimed = await s.claimDue(at(0), {}, 10, LEASE, 'owner-3');
    check(reclaimed.length === 3, `the released entries are claimable at once, got ${reclaimed.length}`);
    check(reclaimed.every((j) => j.reclaimed === false), 'a released lease did not expire (reclaimed false)');
  });

  c('schedule: claimDue serves only the locations a process runs (data-center vs private)', async (f) => {
    const s = f.storage.schedule;
    for (const loc of ['us-east-1', 'eu-west-1', 'lab-berlin', 'lab-tokyo']) await s.upsert(entry('check-1', loc));
    const claim = async (serves: Parameters<typeof s.claimDue>[1]) => {
      const jobs = await s.claimDue(at(0), serves, 10, LEASE, 'probe');
      await s.release('probe');
      return jobs.map((j) => j.location).sort();
    };
    checkSame(await claim({}), ['eu-west-1', 'lab-berlin', 'lab-tokyo', 'us-east-1'], 'absent means every location');
    checkSame(await claim({ locations: 'all', privateLocations: 'all' }), ['eu-west-1', 'lab-berlin', 'lab-tokyo', 'us-east-1'], '\'all\' of both kinds');
    checkSame(await claim({ locations: ['eu-west-1'], privateLocations: [] }), ['eu-west-1'], 'one data center, no private location');
    checkSame(await claim({ locations: [], privateLocations: 'all' }), ['lab-berlin', 'lab-tokyo'], 'a private-location agent');
    checkSame(await claim({ locations: 'all', privateLocations: ['lab-tokyo'] }), ['eu-west-1', 'lab-tokyo', 'us-east-1'], 'every data center and one private location');
    checkSame(await claim({ locations: ['lab-berlin'], privateLocations: ['us-east-1'] }), [], 'a name of the wrong kind serves nothing');
  });

  c('schedule: entries of every kind; serves filters runs and sessions\' runs only; kinds limits a claim', async (f) => {
    const s = f.storage.schedule;
    const seq = (n: number) => ({ checkSessionId: `5e55${n}000-0000-4000-8000-000000000000`, sequenceId: `5e9${n}0000-0000-4000-8000-000000000000` });
    const entries: ScheduleEntry[] = [
      entry('check-1', 'us-east-1'),
      { ...entry('check-1', 'us-east-1'), kind: 'session', session: seq(1) },
      { ...entry('check-1', 'us-east-1'), kind: 'session', session: seq(2) },
      { ...entry('check-1', 'lab-berlin'), kind: 'session', session: seq(3) },
      { ...entry('check-1', ''), kind: 'alert-tick' },
      { ...entry('check-1', ''), kind: 'certificate' },
      { ...entry('', '', 0, ''), kind: 'retention' },
    ];
    check((await s.ensure(entries)) === 7, 'one entry per kind, check, location and sequence');
    checkSame(await s.list(ACCOUNT_A, 'check-1'), [...entries.slice(4, 6), entries[0]!, entries[3]!, entries[1]!, entries[2]!], 'listed by kind, location and sequence, sessions with their sequence');
    const claim = async (serves: Parameters<typeof s.claimDue>[1], kinds?: Parameters<typeof s.claimDue>[5]) => {
      const jobs = await s.claimDue(at(0), serves, 20, LEASE, 'probe', kinds);
      await s.release('probe');
      return jobs.map((j) => `${j.kind}@${j.location}${j.session ? `/${j.session.sequenceId.slice(0, 4)}` : ''}`).sort();
    };
    checkSame(await claim({ locations: [], privateLocations: [] }), ['alert-tick@', 'certificate@', 'retention@'], 'a process serving no location takes the engine\'s own jobs');
    checkSame(await claim({ locations: [], privateLocations: ['lab-berlin'] }), ['alert-tick@', 'certificate@', 'retention@', 'session@lab-berlin/5e93'], 'an agent takes its location\'s session runs');
    checkSame(await claim({}, ['session']), ['session@lab-berlin/5e93', 'session@us-east-1/5e91', 'session@us-east-1/5e92'], 'kinds limits the claim');
    await s.remove(ACCOUNT_A, 'check-1');
    checkSame((await s.list(ACCOUNT_A, 'check-1')).map((e) => e.kind), ['session', 'session', 'session'], 'removing a check\'s entries leaves its sessions\' runs, which end on their own');
    const [job] = await s.claimDue(at(0), {}, 1, LEASE, 'owner-1', ['session']);
    check(job !== undefined && (await s.complete(job, null)), 'a session entry completes by its sequence');
    check((await s.list(ACCOUNT_A, 'check-1')).length === 2, 'only that sequence\'s entry went');
  });
}

export function outboxCases(c: StorageCase) {
  const msg = (id: string, checkId: string | null, createdMs: number, accountId = ACCOUNT_A, alertChannelId = 1) =>
    outboxMessageFixture(accountId, { id: `0000000${id}-0000-4000-8000-000000000000`, checkId, alertChannelId, created_at: isoAt(T0, createdMs), nextAttemptAt: T0 });
  const short = (m: { id: string }) => m.id.slice(0, 8);

  c('outbox: claim hands out only the oldest undelivered message of each check', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('2', 'check-1', 1), msg('1', 'check-1', 0), msg('3', 'check-2', 0), msg('4', null, 0), msg('5', null, 1)]);
    const first = await o.claim(at(0), 10, LEASE, 'owner-1');
    checkSame(first.map(short).sort(), ['00000001', '00000003', '00000004', '00000005'], 'message 2 waits behind message 1 of the same check');
    const one = first.find((m) => short(m) === '00000001')!;
    checkSame(
      { attempts: one.attempts, lastError: one.lastError, deliveredAt: one.deliveredAt, leaseOwner: one.leaseOwner, leaseUntil: one.leaseUntil },
      { attempts: 0, lastError: null, deliveredAt: null, leaseOwner: 'owner-1', leaseUntil: isoAt(T0, LEASE) },
      'a claimed message carries its lease and no attempts yet',
    );
    check((await o.claim(at(0), 10, LEASE, 'owner-2')).length === 0, 'leased messages are not claimed again');
    check((await o.markDelivered(one.id, 'owner-1', at(10))) === true, 'the owner marks it delivered');
    checkSame((await o.claim(at(20), 10, LEASE, 'owner-2')).map(short), ['00000002'], 'then the next message of the check');
    checkSame((await o.pending(ACCOUNT_A)).map(short).sort(), ['00000002', '00000003', '00000004', '00000005'], 'pending lists undelivered messages');
    if (o.depth) check((await o.depth()) === 4, `a delivered message leaves the depth, got ${await o.depth()}`);
    check((await rawMatching(f.raw, 'outbox', one.id, isoAt(T0, 10))).length === 1, 'a delivered message is kept with deliveredAt');
    await checkRawCount(f.raw, 'outbox', 5, 'nothing was removed');
  });

  c('outbox: two concurrent claims hand out disjoint messages that cover all 40 due ones', async (f) => {
    const o = f.storage.outbox;
    const ids = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`);
    await o.enqueue(ids.map((id, i) => ({ ...msg('1', `check-${i}`, i), id })));
    const [a, b] = await Promise.all([o.claim(at(0), 40, LEASE, 'owner-a'), o.claim(at(0), 40, LEASE, 'owner-b')]);
    const ka = new Set(a.map((m) => m.id));
    check(b.every((m) => !ka.has(m.id)), 'no message was leased to both owners');
    checkSame([...a, ...b].map((m) => m.id).sort(), ids, 'together they hold all 40');
    check(a.every((m) => m.leaseOwner === 'owner-a') && b.every((m) => m.leaseOwner === 'owner-b'), 'each message names its owner');
    check((await o.claim(at(0), 40, LEASE, 'owner-c')).length === 0, 'nothing is left to claim');
  });

  c('outbox: the order holds per check and channel; a stuck channel does not hold back another', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('1', 'check-1', 0, ACCOUNT_A, 1), msg('2', 'check-1', 1, ACCOUNT_A, 1), msg('3', 'check-1', 2, ACCOUNT_A, 2), msg('4', 'check-1', 3, ACCOUNT_A, 2)]);
    const first = await o.claim(at(0), 10, LEASE, 'owner-1');
    checkSame(first.map(short).sort(), ['00000001', '00000003'], 'the oldest message of each channel');
    check((await o.markFailed(first.find((m) => short(m) === '00000001')!.id, 'owner-1', 'down', at(3_600_000))) === true, 'channel 1 is down');
    check((await o.markDelivered(first.find((m) => short(m) === '00000003')!.id, 'owner-1', at(1))) === true, 'channel 2 delivered');
    checkSame((await o.claim(at(2), 10, LEASE, 'owner-1')).map(short), ['00000004'], 'channel 2 goes on while channel 1 waits');
  });

  c('outbox: markFailed counts the attempt and retries at nextAttemptAt, still in order', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('1', 'check-1', 0), msg('2', 'check-1', 1)]);
    const [m] = await o.claim(at(0), 10, LEASE, 'owner-1');
    check(m !== undefined, 'claimed');
    check((await o.markFailed(m.id, 'intruder', 'nope', at(1))) === false, 'a non-owner cannot mark it failed');
    check((await o.markFailed(m.id, 'owner-1', 'connection refused', at(60_000))) === true, 'the owner marks it failed');
    check((await o.claim(at(59_999), 10, LEASE, 'owner-2')).length === 0, 'neither it nor the next message of its check before nextAttemptAt');
    const [retry] = await o.claim(at(60_000), 10, LEASE, 'owner-2');
    checkSame(
      retry && { id: retry.id, attempts: retry.attempts, lastError: retry.lastError, nextAttemptAt: retry.nextAttemptAt },
      { id: m.id, attempts: 1, lastError: 'connection refused', nextAttemptAt: isoAt(T0, 60_000) },
      'the retry carries attempts and lastError',
    );
    check((await o.markDelivered(m.id, 'owner-1', at(60_001))) === false, 'the old owner no longer holds it');
    check((await o.markDelivered(m.id, 'owner-2', at(60_001))) === true, 'the new owner delivers it');
    check((await o.markDelivered(m.id, 'owner-2', at(60_002))) === false, 'a delivered message cannot be delivered again');
  });

  c('outbox: an expired lease lets another owner claim the message', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('1', 'check-1', 0)]);
    await o.claim(at(0), 10, LEASE, 'owner-1');
    check((await o.claim(at(LEASE - 1), 10, LEASE, 'owner-2')).length === 0, 'leased until expiry');
    checkSame((await o.claim(at(LEASE), 10, LEASE, 'owner-2')).map((m) => m.leaseOwner), ['owner-2'], 'claimable when the lease ends');
    check((await o.markFailed(msg('1', null, 0).id, 'owner-1', 'late', at(LEASE))) === false, 'the first owner lost it');
  });

  c('outbox: pending per account, claim limit, attempts log newest first', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('1', null, 0), msg('2', null, 1), msg('3', null, 2, ACCOUNT_B)]);
    checkSame((await o.pending(ACCOUNT_B)).map(short), ['00000003'], 'pending of one account');
    checkSame((await o.pending()).map(short), ['00000001', '00000002', '00000003'], 'pending of all accounts, oldest first');
    if (o.depth) check((await o.depth()) === 3, 'depth counts the undelivered messages of every account');
    check((await o.claim(at(0), 2, LEASE, 'owner-1')).length === 2, 'claim honours limit');
    const attempt = (n: number, accountId = ACCOUNT_A, alertChannelId = 1) => ({
      outboxId: msg(String(n), null, 0).id, accountId, alertChannelId, at: isoAt(T0, n * 1000), ok: n % 2 === 0, detail: n === 3 ? null : `HTTP ${500 + n}`,
    });
    for (const a of [attempt(1), attempt(2), attempt(3), attempt(4, ACCOUNT_A, 2), attempt(5, ACCOUNT_B)]) await o.recordAttempt(a);
    checkSame(await o.listAttempts(ACCOUNT_A, 1, 2), [attempt(3), attempt(2)], 'the newest attempts of one channel of one account');
    checkSame(await o.listAttempts(ACCOUNT_A, 1, 10), [attempt(3), attempt(2), attempt(1)], 'all of them');
    await checkRawCount(f.raw, 'delivery_attempts', 5, 'every attempt is logged');
  });

  c('outbox: a check\'s messages newest first with their attempts oldest first, in its account only', async (f) => {
    const o = f.storage.outbox;
    await o.enqueue([msg('1', 'check-1', 0), msg('2', 'check-1', 2, ACCOUNT_A, 2), msg('3', 'check-2', 1), msg('4', 'check-1', 1, ACCOUNT_B), msg('5', 'check-1', 3)]);
    await o.claim(at(0), 10, LEASE, 'owner-1');
    await o.markDelivered(msg('1', null, 0).id, 'owner-1', at(1_000));
    checkSame((await o.listByCheck(ACCOUNT_A, 'check-1', 10)).map(short), ['00000005', '00000002', '00000001'], 'newest first, delivered or not');
    checkSame((await o.listByCheck(ACCOUNT_A, 'check-1', 2)).map(short), ['00000005', '00000002'], 'limit');
    const [delivered] = (await o.listByCheck(ACCOUNT_A, 'check-1', 10)).slice(-1);
    check(delivered?.deliveredAt === at(1_000).toISOString() && delivered.alertType === 'ALERT_FAILURE', 'a message comes with its delivery and what it sent');
    checkSame((await o.listByCheck(ACCOUNT_B, 'check-1', 10)).map(short), ['00000004'], 'another account\'s check of the same id');
    const attempt = (n: string, ms: number, accountId = ACCOUNT_A) => ({ outboxId: msg(n, null, 0).id, accountId, alertChannelId: 1, at: isoAt(T0, ms), ok: ms > 1_000, detail: `try at ${ms}` });
    for (const a of [attempt('1', 1_000), attempt('2', 500), attempt('1', 200), attempt('3', 300), attempt('4', 400, ACCOUNT_B)]) await o.recordAttempt(a);
    checkSame(await o.listAttemptsOf(ACCOUNT_A, [msg('1', null, 0).id, msg('2', null, 0).id]), [attempt('1', 200), attempt('2', 500), attempt('1', 1_000)], 'the attempts of the messages, oldest first');
    checkSame(await o.listAttemptsOf(ACCOUNT_A, [msg('4', null, 0).id]), [], 'not another account\'s');
    checkSame(await o.listAttemptsOf(ACCOUNT_A, []), [], 'none asked, none answered');
  });

  c('outbox: pruneDelivered takes what was delivered before the bound, and old attempts, a limit at a time', async (f) => {
    const o = f.storage.outbox;
    if (!o.pruneDelivered) return;
    await o.enqueue([msg('1', 'c-1', 0), msg('2', 'c-2', 1), msg('3', 'c-3', 2), msg('4', 'c-4', 3)]);
    const claimed = await o.claim(at(0), 10, LEASE, 'owner-1');
    check(claimed.length === 4, 'four heads of four checks');
    await o.markDelivered(msg('1', null, 0).id, 'owner-1', at(1_000));
    await o.markDelivered(msg('2', null, 0).id, 'owner-1', at(2_000));
    await o.markDelivered(msg('3', null, 0).id, 'owner-1', at(9_000));
    for (const n of [1, 2, 3]) await o.recordAttempt({ outboxId: msg(String(n), null, 0).id, accountId: ACCOUNT_A, alertChannelId: 1, at: isoAt(T0, n * 3_000), ok: true, detail: null });
    checkSame(await o.pruneDelivered(at(5_000), 1), { messages: 1, attempts: 1 }, 'one of each at a time');
    checkSame(await o.pruneDelivered(at(5_000), 10), { messages: 1, attempts: 0 }, 'then the other one delivered before the bound');
    await checkRawCount(f.raw, 'outbox', 2, 'the one delivered after the bound and the undelivered one stay');
    checkSame((await o.pending()).map(short), ['00000004'], 'nothing undelivered goes');
    checkSame((await o.listAttempts(ACCOUNT_A, 1, 10)).map((a) => a.at), [isoAt(T0, 9_000), isoAt(T0, 6_000)], 'the attempts logged after the bound stay');
  });
}
