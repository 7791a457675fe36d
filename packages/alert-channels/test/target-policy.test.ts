/**
 * The host's target policy on alert deliveries: a URL an account wrote (WEBHOOK, CHAT, CHAT_APP)
 * reaches no internal address unless the policy allows it, checked on the address the delivery
 * connects to; endpoints the host configured (a paging provider's base URL) stay unchecked.
 * Everything runs against real HTTP servers on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { createVigil, targetPolicy, type AlertTransport, type DeliveryContext, type LookupAllFunction, type TargetPolicyOptions } from '@vigil/core';
import { memoryStorage, outboxMessageFixture, sampleAlertMessage } from '@vigil/core/testing';
import {
  chatAppTransport, chatTransport, DeliveryError, guardedAgent, pagingATransport, registerAlertChannels, webhookTransport,
} from '@vigil/alert-channels';
import { channelOf } from './support/channels.js';
import { receiversPerTest, type Receiver } from './support/receiver.js';

const receiver = receiversPerTest();
const signal = () => new AbortController().signal;
const STRICT = { refuseInternalAddresses: true };
const under = (options: TargetPolicyOptions): DeliveryContext => ({ targetPolicy: targetPolicy(options) });

/** The error a send rejects with (the test fails if it resolves). */
async function failureOf(p: Promise<unknown>): Promise<DeliveryError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(DeliveryError);
  return err as DeliveryError;
}

const webhook = (url: string) => channelOf('WEBHOOK', { name: 'ops', url });

describe('WEBHOOK delivery under a target policy refusing internal addresses', () => {
  it('refuses http://127.0.0.1:PORT/ before connecting: the server sees no connection, the error names the address but not the URL', async () => {
    const r = await receiver();
    const err = await failureOf(webhookTransport().send(sampleAlertMessage(), webhook(`${r.url}/hook?token=s3cret-token`), signal(), under(STRICT)));
    expect(err.code).toBe('ETARGETPOLICY');
    expect(err.message).toMatch(/^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/);
    expect(err.message).not.toContain('s3cret-token');
    expect(err.message).not.toContain('/hook');
    expect(r.connections).toBe(0);
    expect(r.requests).toEqual([]);
  });

  it('looks the name localhost up and refuses the loopback address it resolves to', async () => {
    const r = await receiver();
    const err = await failureOf(webhookTransport().send(sampleAlertMessage(), webhook(`http://localhost:${r.port}/hook`), signal(), under(STRICT)));
    expect(err.code).toBe('ETARGETPOLICY');
    expect(err.message).toMatch(/^The target policy refused "localhost" \((127\.0\.0\.1|::1)\): .* is a loopback address/);
    expect(r.connections).toBe(0);
  });

  it('refuses an IPv6 literal as written', async () => {
    const r = await receiver();
    const err = await failureOf(webhookTransport().send(sampleAlertMessage(), webhook(`http://[::1]:${r.port}/hook`), signal(), under(STRICT)));
    expect(err.message).toMatch(/^The target policy refused ::1: ::1 is a loopback address \(::1\/128\)/);
  });

  it('delivers when the policy allows the range (127.0.0.0/8), and when there is no policy or it refuses nothing', async () => {
    const r = await receiver();
    const contexts: (DeliveryContext | undefined)[] = [under({ ...STRICT, allow: ['127.0.0.0/8'] }), undefined, {}, under({})];
    for (const context of contexts) {
      const receipt = await webhookTransport().send(sampleAlertMessage(), webhook(`${r.url}/hook`), signal(), context);
      expect(receipt.detail).toBe('delivered (200)');
    }
    expect(r.requests.map((q) => [q.method, q.path, q.headers.host])).toEqual(Array(4).fill(['POST', '/hook', `127.0.0.1:${r.port}`]));
  });

  it('a receiver\'s error answers and refused connections are reported as before under an allowing policy', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const allowed = under({ ...STRICT, allow: ['127.0.0.1'] });
    expect((await failureOf(webhookTransport().send(sampleAlertMessage(), webhook(`${r.url}/hook`), signal(), allowed))).message).toBe('The receiver answered 503');
    await r.down();
    expect((await failureOf(webhookTransport().send(sampleAlertMessage(), webhook(`${r.url}/hook`), signal(), allowed))).message).toBe('Request failed: ECONNREFUSED');
  });
});

describe('the other channel types', () => {
  it.each<[string, (r: Receiver) => [AlertTransport, ReturnType<typeof channelOf>]]>([
    ['CHAT', (r) => [chatTransport(), channelOf('CHAT', { url: `${r.url}/slack` })]],
    ['CHAT_APP', (r) => [chatAppTransport(), channelOf('CHAT_APP', { url: `${r.url}/teams` })]],
  ])('%s: its URL is the account\'s, so the policy applies to it', async (_type, make) => {
    const r = await receiver();
    const [transport, channel] = make(r);
    const err = await failureOf(transport.send(sampleAlertMessage(), channel, signal(), under(STRICT)));
    expect(err.code).toBe('ETARGETPOLICY');
    expect(r.connections).toBe(0);
    await transport.send(sampleAlertMessage(), channel, signal(), under({ ...STRICT, allow: ['127.0.0.0/8'] }));
    expect(r.requests).toHaveLength(1);
  });

  it('PAGING_A: the provider endpoint is the host\'s own (baseUrl), so it is not checked', async () => {
    const r = await receiver();
    r.fallback = { status: 202, body: { status: 'success', dedup_key: 'k' } };
    const transport = pagingATransport({ baseUrl: r.url });
    await transport.send(sampleAlertMessage(), channelOf('PAGING_A', { serviceKey: 'routing-key' }), signal(), under(STRICT));
    expect(r.requests.map((q) => q.path)).toEqual(['/v2/enqueue']);
  });
});

describe('guardedAgent: the connection goes to the address that was checked', () => {
  /** A name service of the test's own, counting how often it was asked. */
  const lookups = (table: Record<string, string[]>) => {
    const asked: string[] = [];
    const lookupAll: LookupAllFunction = async (name) => {
      asked.push(name);
      return (table[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { asked, lookupAll };
  };

  it('connects to the checked address once per connection, keeping the name in the Host header', async () => {
    const r = await receiver();
    const { asked, lookupAll } = lookups({ 'alerts.example.test': ['127.0.0.1'] });
    const agent = guardedAgent(targetPolicy({ ...STRICT, allow: ['127.0.0.1'] }), 5_000, lookupAll);
    try {
      const res = await fetch(`http://alerts.example.test:${r.port}/in`, { method: 'POST', body: '{}', dispatcher: agent });
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      await agent.destroy();
    }
    expect(asked).toEqual(['alerts.example.test']);
    expect(r.requests.map((q) => q.headers.host)).toEqual([`alerts.example.test:${r.port}`]);
  });

  it('refuses a name when any one of its addresses is refused, even if the first is public', async () => {
    const r = await receiver();
    const { lookupAll } = lookups({ 'mixed.example.test': ['93.184.215.14', '10.1.2.3'] });
    const agent = guardedAgent(targetPolicy(STRICT), 5_000, lookupAll);
    try {
      const err = await fetch(`http://mixed.example.test:${r.port}/in`, { dispatcher: agent }).then(() => null, (e: { cause?: Error }) => e.cause);
      expect(err?.message).toMatch(/^The target policy refused "mixed\.example\.test" \(10\.1\.2\.3\): 10\.1\.2\.3 is a private address/);
    } finally {
      await agent.destroy();
    }
  });
});

describe('the dispatcher hands the host\'s policy to the transports', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('an alert to a channel stored before the policy was turned on is refused, logged with the reason, and stays in the outbox for a retry', async () => {
    const r = await receiver();
    const storage = memoryStorage();
    const secretKey = 'd'.repeat(64);
    const alerts = { pollMs: 20, backoffBaseMs: 60_000 };
    // The host ran without a policy when the account wrote this URL.
    const before = createVigil({ storage, secretKey });
    const account = await before.accounts.ensure('policy');
    const channel = await before.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: `${r.url}/hook?token=s3cret-token` } });
    const vigil = createVigil({ storage, secretKey, alerts, targetPolicy: STRICT }, (c) => registerAlertChannels(c, { certificates: false }));
    stops.push(() => vigil.stop(0));
    await storage.outbox.enqueue([outboxMessageFixture(account.id, { alertChannelId: channel.id, created_at: new Date().toISOString(), nextAttemptAt: new Date().toISOString() })]);
    await vigil.start();
    const end = Date.now() + 5_000;
    while ((await vigil.alertChannels.deliveries(account.id, channel.id, {})).length === 0 && Date.now() < end) await new Promise((res) => setTimeout(res, 10));
    const [attempt] = await vigil.alertChannels.deliveries(account.id, channel.id, {});
    expect(attempt).toMatchObject({ ok: false, detail: expect.stringMatching(/^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/) });
    expect(attempt!.detail).not.toContain('s3cret-token');
    expect(r.connections).toBe(0);
    const [pending] = await storage.outbox.pending(account.id);
    expect(pending).toMatchObject({ attempts: 1 });
    expect(Date.parse(pending!.nextAttemptAt)).toBeGreaterThan(Date.now());
  });
});
