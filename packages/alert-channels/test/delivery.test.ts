import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { outboxMessageFixture } from '@vigil/core/testing';
import { registerAlertChannels } from '@vigil/alert-channels';
import { Receiver } from './support/receiver.js';
import { freshStorage, STORES } from './support/stores.js';

const SECRET = 'e'.repeat(64);
const open: { vigil: Vigil; receiver: Receiver }[] = [];
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const { vigil, receiver } of open.splice(0)) {
    await vigil.stop(0);
    await receiver.close();
  }
  for (const close of closing.splice(0)) await close();
});

/**
 * A Vigil on a real store with the real transports registered, a fast-polling dispatcher and
 * short backoff, on the real clock.
 */
async function setup(kind: (typeof STORES)[number]) {
  const receiver = await Receiver.start();
  const storage = await freshStorage(kind);
  closing.push(() => storage.close());
  const vigil = createVigil(
    { storage, secretKey: SECRET, alerts: { pollMs: 20, backoffBaseMs: 100, backoffMaxMs: 200 } },
    (container) => registerAlertChannels(container, { certificates: false }),
  );
  open.push({ vigil, receiver });
  const account = await vigil.accounts.ensure('delivery');
  const channel = await vigil.alertChannels.create(account.id, {
    type: 'WEBHOOK', config: { name: 'ops', url: `${receiver.url}/hook`, webhookSecret: 'k' },
  });
  const enqueue = (n: number, checkId = '8e3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a') =>
    vigil.storage.outbox.enqueue(Array.from({ length: n }, (_, i) => outboxMessageFixture(account.id, {
      checkId,
      alertChannelId: channel.id,
      alertType: i % 2 ? 'ALERT_RECOVERY' : 'ALERT_FAILURE',
      payload: { checkId, checkName: `check #${i}`, checkType: 'TCP', runLocation: 'eu-west-1' },
      created_at: new Date(Date.now() + i).toISOString(),
      nextAttemptAt: new Date().toISOString(),
    })));
  return { vigil, receiver, accountId: account.id, channelId: channel.id, enqueue };
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe.each(STORES)('webhook delivery through the dispatcher (%s)', (kind) => {
  it('a receiver answering 500 twice and then 200 gets the alert three times; it is then delivered and the log says so', async () => {
    const s = await setup(kind);
    s.receiver.answer({ status: 500 }, { status: 500 });
    await s.enqueue(1);
    await s.vigil.start();
    await until(async () => (await s.vigil.storage.outbox.pending(s.accountId)).length === 0);
    expect(s.receiver.requests).toHaveLength(3);
    expect(new Set(s.receiver.requests.map((r) => r.headers['x-vigil-alert-id'])).size).toBe(1);
    const log = await s.vigil.alertChannels.deliveries(s.accountId, s.channelId, {});
    expect(log.map((l) => [l.ok, l.detail]).reverse()).toEqual([
      [false, 'The receiver answered 500'],
      [false, 'The receiver answered 500'],
      [true, 'delivered (200)'],
    ]);
  });

  it('a receiver that is down for a while gets every alert once it is back, each once and in order', async () => {
    const s = await setup(kind);
    await s.receiver.down();
    await s.enqueue(6);
    await s.vigil.start();
    await new Promise((r) => setTimeout(r, 500));
    const failed = await s.vigil.alertChannels.deliveries(s.accountId, s.channelId, {});
    expect(failed.length).toBeGreaterThan(1);
    expect(failed.every((l) => !l.ok && l.detail === 'Request failed: ECONNREFUSED')).toBe(true);
    await s.receiver.up();
    await until(async () => (await s.vigil.storage.outbox.pending(s.accountId)).length === 0);
    expect(s.receiver.requests.map((r) => (r.json as { CHECK_NAME: string }).CHECK_NAME)).toEqual(
      ['check #0', 'check #1', 'check #2', 'check #3', 'check #4', 'check #5'],
    );
  });

  it('a receiver that is slow to answer holds back no other channel', async () => {
    const s = await setup(kind);
    const fast = await Receiver.start();
    open.push({ vigil: s.vigil, receiver: fast });
    s.receiver.fallback = { status: 200, delayMs: 1_500 };
    const other = await s.vigil.alertChannels.create(s.accountId, { type: 'WEBHOOK', config: { name: 'fast', url: `${fast.url}/hook` } });
    await s.enqueue(1);
    await s.vigil.start();
    await s.receiver.waitFor(1);
    // While the slow send is under way, an alert for another channel is queued: the next poll takes it.
    const queued = performance.now();
    await s.vigil.storage.outbox.enqueue([outboxMessageFixture(s.accountId, {
      checkId: '8e3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a', alertChannelId: other.id,
      payload: { checkName: 'later', checkType: 'TCP' }, created_at: new Date().toISOString(), nextAttemptAt: new Date().toISOString(),
    })]);
    await fast.waitFor(1);
    const slowAsked = queued;
    expect(performance.now() - slowAsked).toBeLessThan(1_000);
    await until(async () => (await s.vigil.storage.outbox.pending(s.accountId)).length === 0);
  });

  it('the channel\'s webhookSecret is sealed at rest, masked in responses, and signs what is sent', async () => {
    const s = await setup(kind);
    const stored = await s.vigil.storage.alertChannels.get(s.accountId, s.channelId);
    expect((stored!.config as { webhookSecret: string }).webhookSecret).not.toBe('k');
    expect((await s.vigil.alertChannels.get(s.accountId, s.channelId)).config).toMatchObject({ webhookSecret: '********' });
    await s.enqueue(1);
    await s.vigil.start();
    await s.receiver.waitFor(1);
    const { createHmac } = await import('node:crypto');
    expect(s.receiver.requests[0]!.headers['x-vigil-signature']).toBe(createHmac('sha256', 'k').update(s.receiver.requests[0]!.raw).digest('hex'));
  });

  it('a template that does not parse is refused when the channel is created, naming the field', async () => {
    const s = await setup(kind);
    const err = await s.vigil.alertChannels.create(s.accountId, {
      type: 'WEBHOOK', config: { name: 'bad', url: `${s.receiver.url}/x`, template: '{"a": "{{#if CHECK_NAME}}"}' },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 400 });
    expect(JSON.stringify(err)).toContain('config.template');
    expect((err as Error).message).toContain('is not a valid Handlebars template: unexpected end of template on line 1');
    expect((await s.vigil.alertChannels.list(s.accountId, {})).items).toHaveLength(1);
  });
});
