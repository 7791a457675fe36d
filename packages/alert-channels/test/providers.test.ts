import { describe, expect, it } from 'vitest';
import { sampleAlertMessage, transportSuite } from '@vigil/core/testing';
import {
  callTransport, chatAppTransport, chatTransport, pagingATransport, pagingBTransport, smsTransport,
} from '@vigil/alert-channels';
import type { AlertChannel, AlertTransport } from '@vigil/core';
import { channelOf } from './support/channels.js';
import { Receiver, receiversPerTest, type Received } from './support/receiver.js';

const receiver = receiversPerTest();
const signal = () => new AbortController().signal;
const failure = sampleAlertMessage();
const recovery = sampleAlertMessage({ alertType: 'ALERT_RECOVERY', title: '"orders-db" has recovered', failingSince: null });

interface Made {
  transport: AlertTransport;
  channel: AlertChannel;
  /** A channel the provider refuses (a recipient or key it answers 400 for). */
  failingChannel: AlertChannel;
  invalidConfig: unknown;
}

/** The suite's fixture for an HTTP transport: a local server that answers 202, or 400 for what `refused` matches. */
function httpFixture(make: (base: string) => Made, refused: (r: Received) => boolean) {
  return async () => {
    const server = await Receiver.start();
    server.fallback = (r) => (refused(r) ? { status: 400, body: { message: 'refused' } } : { status: 202, body: {} });
    return {
      ...make(server.url),
      received: async () => server.requests.filter((r) => !refused(r)).map((r) => r.json ?? r.form),
      cleanup: () => server.close(),
    };
  };
}

describe('CHAT transport (Slack-style incoming webhook)', () => {
  transportSuite(it, httpFixture((base) => ({
    transport: chatTransport(),
    channel: channelOf('CHAT', { url: `${base}/services/T000/B000/XXX`, channel: '#ops' }),
    failingChannel: channelOf('CHAT', { url: `${base}/services/revoked` }),
    invalidConfig: { url: 'not a url' },
  }), (r) => r.path === '/services/revoked'), { prefix: 'CHAT' });

  it('posts a readable message with the title, the facts and a colour, to the configured channel', async () => {
    const r = await receiver();
    await chatTransport().send(failure, channelOf('CHAT', { url: `${r.url}/services/T1/B1/abc`, channel: '#ops' }), signal());
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.path).toBe('/services/T1/B1/abc');
    const body = got!.json as { channel: string; text: string; blocks: { fields?: { text: string }[] }[]; attachments: { color: string }[] };
    expect(body.channel).toBe('#ops');
    expect(body.text).toBe(':red_circle: "orders-db" is failing in eu-west-1');
    expect(body.blocks[1]!.fields!.map((f) => f.text)).toContain('*Error*\nconnect ECONNREFUSED 127.0.0.1:5432');
    expect(body.attachments[0]!.color).toBe('#d0342c');
    await chatTransport().send(recovery, channelOf('CHAT', { url: `${r.url}/services/T1/B1/abc` }), signal());
    const second = r.requests[1]!.json as { channel?: string; text: string; attachments: { color: string }[] };
    expect(second.channel).toBeUndefined();
    expect(second.text).toBe(':large_green_circle: "orders-db" has recovered');
    expect(second.attachments[0]!.color).toBe('#2eb67d');
  });
});

describe('CHAT_APP transport (Teams-style card)', () => {
  transportSuite(it, httpFixture((base) => ({
    transport: chatAppTransport(),
    channel: channelOf('CHAT_APP', { url: `${base}/workflows/abc` }),
    failingChannel: channelOf('CHAT_APP', { url: `${base}/workflows/deleted` }),
    invalidConfig: { url: 42 },
  }), (r) => r.path === '/workflows/deleted'), { prefix: 'CHAT_APP' });

  it('posts an Adaptive Card with the title and a fact set', async () => {
    const r = await receiver();
    await chatAppTransport().send(failure, channelOf('CHAT_APP', { url: `${r.url}/workflows/abc` }), signal());
    const body = r.requests[0]!.json as { type: string; attachments: { contentType: string; content: { type: string; body: Record<string, unknown>[] } }[] };
    expect(body.type).toBe('message');
    const card = body.attachments[0]!;
    expect(card.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(card.content.type).toBe('AdaptiveCard');
    expect(card.content.body[0]).toMatchObject({ type: 'TextBlock', text: '"orders-db" is failing in eu-west-1', color: 'Attention' });
    expect(card.content.body[1]).toMatchObject({ type: 'FactSet' });
    expect((card.content.body[1]!.facts as { title: string; value: string }[])).toContainEqual({ title: 'Location', value: 'eu-west-1' });
  });
});

const phone = (base: string) => ({ baseUrl: base, accountSid: 'AC123', authToken: 'tok', from: '+15005550006' });
const basic = `Basic ${Buffer.from('AC123:tok').toString('base64')}`;

describe('SMS and CALL transports (Twilio-style)', () => {
  const unreachable = (r: Received) => r.form?.To === '+14155550199';
  transportSuite(it, httpFixture((base) => ({
    transport: smsTransport(phone(base)),
    channel: channelOf('SMS', { number: '+14155550100', name: 'on-call' }),
    failingChannel: channelOf('SMS', { number: '+14155550199', name: 'invalid' }),
    invalidConfig: { number: '0800 123', name: 'x' },
  }), unreachable), { prefix: 'SMS' });

  transportSuite(it, httpFixture((base) => ({
    transport: callTransport(phone(base)),
    channel: channelOf('CALL', { number: '+14155550100', name: 'on-call' }),
    failingChannel: channelOf('CALL', { number: '+14155550199', name: 'invalid' }),
    invalidConfig: { number: '+1', name: '' },
  }), unreachable), { prefix: 'CALL' });

  it('SMS posts a form to the account\'s Messages resource with basic auth, and keeps the provider\'s id', async () => {
    const r = await receiver();
    r.answer({ status: 201, body: { sid: 'SM42', status: 'queued' } });
    const receipt = await smsTransport(phone(r.url)).send(failure, channelOf('SMS', { number: '+14155550100', name: 'on-call' }), signal());
    expect(receipt.providerId).toBe('SM42');
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.path).toBe('/2010-04-01/Accounts/AC123/Messages.json');
    expect(got!.headers.authorization).toBe(basic);
    expect(got!.form).toEqual({
      To: '+14155550100', From: '+15005550006',
      Body: 'Vigil: "orders-db" is failing in eu-west-1 - connect ECONNREFUSED 127.0.0.1:5432 - since 2026-05-01T11:58:00.000Z',
    });
  });

  it('a long text is cut to 320 characters', async () => {
    const r = await receiver();
    const long = sampleAlertMessage({ result: { ...failure.result!, errorMessage: 'x'.repeat(1_000) } });
    await smsTransport(phone(r.url)).send(long, channelOf('SMS', { number: '+14155550100', name: 'on-call' }), signal());
    expect(r.requests[0]!.form!.Body).toHaveLength(320);
    expect(r.requests[0]!.form!.Body!.endsWith('…')).toBe(true);
  });

  it('CALL posts TwiML that reads the alert out, escaped', async () => {
    const r = await receiver();
    r.answer({ status: 201, body: { sid: 'CA7' } });
    const alert = sampleAlertMessage({ title: '"a&b" <is> failing' });
    const receipt = await callTransport(phone(r.url)).send(alert, channelOf('CALL', { number: '+14155550100', name: 'on-call' }), signal());
    expect(receipt.providerId).toBe('CA7');
    const [got] = r.requests;
    expect(got!.path).toBe('/2010-04-01/Accounts/AC123/Calls.json');
    expect(got!.form!.To).toBe('+14155550100');
    expect(got!.form!.Twiml).toBe('<Response><Say>Vigil alert. &quot;a&amp;b&quot; &lt;is&gt; failing.</Say><Pause length="1"/><Say>Vigil alert. &quot;a&amp;b&quot; &lt;is&gt; failing.</Say></Response>');
  });
});

describe('PAGING_A transport (Events-v2-style)', () => {
  transportSuite(it, httpFixture((base) => ({
    transport: pagingATransport({ baseUrl: base }),
    channel: channelOf('PAGING_A', { serviceKey: 'R0UTING', serviceName: 'payments' }),
    failingChannel: channelOf('PAGING_A', { serviceKey: 'UNKNOWN' }),
    invalidConfig: { serviceKey: '' },
  }), (r) => (r.json as { routing_key?: string } | null)?.routing_key === 'UNKNOWN'), { prefix: 'PAGING_A' });

  it('triggers on failure and resolves on recovery with the same dedup key for the check', async () => {
    const r = await receiver();
    r.fallback = { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: 'vigil-check-8e3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a' } };
    const transport = pagingATransport({ baseUrl: r.url });
    const channel = channelOf('PAGING_A', { serviceKey: 'R0UTING', serviceName: 'payments' });
    const receipt = await transport.send(failure, channel, signal());
    await transport.send(sampleAlertMessage({ alertType: 'ALERT_DEGRADED', title: 'degraded' }), channel, signal());
    await transport.send(recovery, channel, signal());
    expect(receipt.providerId).toBe(`vigil-check-${failure.check.id}`);
    expect(r.requests.map((q) => [q.method, q.path])).toEqual([['POST', '/v2/enqueue'], ['POST', '/v2/enqueue'], ['POST', '/v2/enqueue']]);
    const [trigger, degraded, resolve] = r.requests.map((q) => q.json as Record<string, any>);
    expect(trigger).toMatchObject({
      routing_key: 'R0UTING', event_action: 'trigger', dedup_key: `vigil-check-${failure.check.id}`,
      payload: { summary: '"orders-db" is failing in eu-west-1', source: 'eu-west-1', severity: 'critical', component: 'orders-db', group: 'payments', class: 'TCP' },
    });
    expect(trigger!.payload.custom_details).toMatchObject({ Error: 'connect ECONNREFUSED 127.0.0.1:5432', checkId: failure.check.id });
    expect(degraded!.payload.severity).toBe('warning');
    expect(resolve).toEqual({ routing_key: 'R0UTING', dedup_key: `vigil-check-${failure.check.id}`, event_action: 'resolve' });
  });

  it('a certificate alert has its own incident, which a recovery of the check does not resolve', async () => {
    const r = await receiver();
    const channel = channelOf('PAGING_A', { serviceKey: 'R0UTING' });
    await pagingATransport({ baseUrl: r.url }).send(sampleAlertMessage({ alertType: 'ALERT_SSL', result: null, ssl: { domain: 'shop.example.com', daysRemaining: 5 } }), channel, signal());
    expect(r.requests[0]!.json).toMatchObject({ event_action: 'trigger', dedup_key: `vigil-ssl-${failure.check.id}`, payload: { severity: 'warning', source: 'vigil' } });
  });
});

describe('PAGING_B transport (Alerts-v2-style)', () => {
  transportSuite(it, httpFixture((base) => ({
    transport: pagingBTransport({ baseUrls: { EU: base, US: base } }),
    channel: channelOf('PAGING_B', { name: 'ops', apiKey: 'genie-key', region: 'EU', priority: 'P2' }),
    failingChannel: channelOf('PAGING_B', { name: 'ops', apiKey: 'revoked-key', region: 'EU' }),
    invalidConfig: { name: 'ops', apiKey: 'k', region: 'APAC' },
  }), (r) => r.headers.authorization === 'GenieKey revoked-key'), { prefix: 'PAGING_B' });

  it('creates an alert in the channel\'s region with its priority and closes it by alias on recovery', async () => {
    const eu = await receiver();
    const us = await receiver();
    eu.fallback = { status: 202, body: { result: 'Request will be processed', took: 0.1, requestId: 'req-1' } };
    const transport = pagingBTransport({ baseUrls: { EU: eu.url, US: us.url } });
    const channel = channelOf('PAGING_B', { name: 'ops', apiKey: 'genie-key', region: 'EU', priority: 'P2' });
    const receipt = await transport.send(failure, channel, signal());
    await transport.send(recovery, channel, signal());
    expect(receipt.providerId).toBe('req-1');
    expect(us.requests).toHaveLength(0);
    const [create, close] = eu.requests;
    expect(create!.path).toBe('/v2/alerts');
    expect(create!.headers.authorization).toBe('GenieKey genie-key');
    expect(create!.json).toMatchObject({
      message: '"orders-db" is failing in eu-west-1', alias: `vigil-check-${failure.check.id}`, priority: 'P2',
      tags: ['prod'], entity: 'orders-db', source: 'Vigil',
    });
    expect((create!.json as { description: string }).description).toContain('Error: connect ECONNREFUSED 127.0.0.1:5432');
    expect(close!.path).toBe(`/v2/alerts/vigil-check-${failure.check.id}/close`);
    expect(close!.query).toEqual({ identifierType: 'alias' });
    expect(close!.json).toEqual({ source: 'Vigil', note: '"orders-db" has recovered' });
  });

  it('a US channel goes to the US API, and a degraded check is paged one priority lower', async () => {
    const eu = await receiver();
    const us = await receiver();
    const transport = pagingBTransport({ baseUrls: { EU: eu.url, US: us.url } });
    await transport.send(sampleAlertMessage({ alertType: 'ALERT_DEGRADED', title: 'slow' }), channelOf('PAGING_B', { name: 'ops', apiKey: 'k', region: 'US', priority: 'P1' }), signal());
    expect(eu.requests).toHaveLength(0);
    expect(us.requests[0]!.json).toMatchObject({ priority: 'P2', message: 'slow' });
  });
});
