import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { capture, type Line } from './capture-logger.js';
import { runFor } from './fake-time.js';
import { createVigil, type Check, type CheckResult, type NewOutboxMessage, type Vigil } from '../src/index.js';
import type { OutboxPayload } from '../src/model/outbox-payload.js';
import { alertPayload } from '../src/rules/alert-payload.js';
import { alertStateFixture, checkResultFixture, FakeClock, FakeTransport, memoryStorage, tcpCheckFixture } from '../src/testing/index.js';

// How the dispatcher reads an outbox row's payload: rows an earlier version queued, and rows it
// cannot read at all.

const T0 = '2026-05-01T12:00:00.000Z';

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup() {
  const lines: Line[] = [];
  const clock = new FakeClock(T0);
  const transport = new FakeTransport('EMAIL');
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'f'.repeat(64), clock, transports: [transport], logger: capture(lines), alerts: { pollMs: 1_000 } });
  const account = await vigil.accounts.ensure('acct');
  const channel = await vigil.alertChannels.create(account.id, { type: 'EMAIL', config: { address: 'ops@example.com' } });
  const row = (checkId: string, alertType: string, payload: OutboxPayload, at = 0): NewOutboxMessage => ({
    id: randomUUID(), accountId: account.id, checkId, alertChannelId: channel.id, alertType, payload,
    created_at: new Date(Date.parse(T0) + at).toISOString(), nextAttemptAt: T0,
  });
  /** Queues the rows, starts the dispatcher and gives it two polls. */
  const deliver = async (rows: NewOutboxMessage[]) => {
    await vigil.storage.outbox.enqueue(rows);
    await vigil.start();
    started.push(vigil);
    await runFor(clock, 2_000, 500);
  };
  return { vigil, transport, lines, accountId: account.id, channelId: channel.id, row, deliver };
}

describe('outbox payloads', () => {
  it('delivers an alert row an earlier version queued (no kind) as it delivers one of this version', async () => {
    const s = await setup();
    const tcp = tcpCheckFixture({ name: 'orders-db', tags: ['db'] });
    const check = { ...tcp, request: { ...tcp.request, port: 443 }, accountId: s.accountId } as Check;
    const result: CheckResult = { ...checkResultFixture(check.id, { hasFailures: true, errorMessage: 'refused', runLocation: 'eu-west-1' }), accountId: s.accountId };
    const state = alertStateFixture({ status: 'FAILING', failingSince: T0, alerted: 'FAILURE', remindersSent: 1 });
    const current = alertPayload({
      check, groupName: 'payments', result, state, alertType: 'ALERT_FAILURE_REMAIN', sslDaysRemaining: 9, environment: { REGION: 'eu' }, secrets: [],
    });
    // What the run pipeline wrote before payloads had a kind: the same fields, without it.
    const earlier = JSON.parse(JSON.stringify({
      alertType: 'ALERT_FAILURE_REMAIN', checkId: check.id, checkName: 'orders-db', checkType: 'TCP', checkResultId: result.id,
      errorMessage: 'refused', groupName: 'payments', runLocation: 'eu-west-1', responseTime: result.responseTime, startedAt: result.startedAt,
      failingSince: T0, tags: ['db'], isReminder: true, reminderSequence: 1, sslCheckDomain: 'db.example.com', sslDaysRemaining: 9,
      variables: { REGION: 'eu' },
    })) as OutboxPayload;
    await s.deliver([s.row(check.id, 'ALERT_FAILURE_REMAIN', earlier), s.row(`${check.id}-2`, 'ALERT_FAILURE_REMAIN', current)]);
    const [old, now] = s.transport.sent.map(({ alert: { id: _id, check: c, ...rest } }) => ({ ...rest, check: { ...c, id: c.id.slice(0, 36) } }));
    expect(s.transport.sent).toHaveLength(2);
    expect(old).toEqual(now);
    expect(old).toMatchObject({
      title: '"orders-db" is still failing in eu-west-1 (reminder 1)',
      check: { id: check.id, name: 'orders-db', checkType: 'TCP', tags: ['db'], groupName: 'payments' },
      result: { id: result.id, errorMessage: 'refused', runLocation: 'eu-west-1' },
      isReminder: true, reminderSequence: 1, ssl: { domain: 'db.example.com', daysRemaining: 9 }, variables: { REGION: 'eu' },
    });
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
  });

  it('drops a row whose payload it cannot read (logged, not retried), and sends the alert queued after it', async () => {
    const s = await setup();
    // As a store hands them back: an unknown kind, a field of the wrong type, an email without its subscriber.
    const unknownKind = JSON.parse('{"kind":"page","checkName":"orders-db"}') as OutboxPayload;
    const wrongType = JSON.parse('{"checkName":"orders-db","tags":"db"}') as OutboxPayload;
    const noSubscriber = JSON.parse('{"kind":"confirm","tokenHash":"abc"}') as OutboxPayload;
    await s.deliver([
      s.row('a', 'ALERT_FAILURE', unknownKind),
      s.row('a', 'ALERT_RECOVERY', { checkName: 'orders-db' }, 1),
      s.row('b', 'ALERT_FAILURE', wrongType),
      s.row('c', 'STATUS_PAGE_MAIL', noSubscriber),
    ]);
    expect(s.transport.sent.map((d) => d.alert.title)).toEqual(['"orders-db" has recovered']);
    expect(s.transport.attempts).toBe(1);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    const dropped = s.lines.filter((l) => l.msg === 'alerts: dropped an outbox message whose payload cannot be read');
    expect(dropped.map((l) => [l.level, l.meta.checkId, l.meta.problems])).toEqual([
      ['error', 'a', 'kind: expected ("alert" | undefined | "confirm" | "update")'],
      ['error', 'b', 'tags: expected Array'],
      ['error', 'c', 'subscriberId: missing'],
    ]);
    const log = await s.vigil.alertChannels.deliveries(s.accountId, s.channelId, {});
    expect(log.map((l) => [l.ok, l.detail])).toEqual(expect.arrayContaining([
      [false, 'The payload cannot be read (tags: expected Array); the message was dropped'],
      [true, 'delivered (fake-1)'],
    ]));
  });
});
