import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sampleAlertMessage, transportSuite } from '@vigil/core/testing';
import { renderTemplate, webhookTransport, TEMPLATE_VARIABLES } from '@vigil/alert-channels';
import { send } from '../src/http.js';
import { channelOf } from './support/channels.js';
import { Receiver, receiversPerTest } from './support/receiver.js';

const receiver = receiversPerTest();
const signal = () => new AbortController().signal;

describe('WEBHOOK transport', () => {
  transportSuite(it, async () => {
    const r = await Receiver.start();
    const failing = await Receiver.start();
    failing.fallback = { status: 500 };
    return {
      transport: webhookTransport(),
      channel: channelOf('WEBHOOK', { name: 'ops hook', url: `${r.url}/hook` }),
      failingChannel: channelOf('WEBHOOK', { name: 'broken hook', url: `${failing.url}/hook` }),
      invalidConfig: { name: 'x', url: 'ftp://example.com' },
      received: async () => r.requests.map((q) => q.json),
      cleanup: async () => {
        await r.close();
        await failing.close();
      },
    };
  }, { prefix: 'WEBHOOK' });

  it('with no template, POSTs every documented field and the check\'s variables as JSON, signed with the secret', async () => {
    const r = await receiver();
    const secret = 's3cret-for-hmac';
    const channel = channelOf('WEBHOOK', {
      name: 'ops', url: `${r.url}/alerts/in?source=vigil`, webhookSecret: secret,
      headers: [{ key: 'X-Team', value: 'payments' }], queryParameters: [{ key: 'check', value: '{{CHECK_NAME}}' }],
    });
    const alert = sampleAlertMessage({ variables: { REGION: 'eu' } });
    const receipt = await webhookTransport().send(alert, channel, signal());
    expect(receipt.detail).toBe('delivered (200)');
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.path).toBe('/alerts/in');
    expect(got!.query).toEqual({ source: 'vigil', check: 'orders-db' });
    expect(got!.headers['x-team']).toBe('payments');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-vigil-alert-id']).toBe(alert.id);
    expect(got!.headers['x-vigil-signature']).toBe(createHmac('sha256', secret).update(got!.raw).digest('hex'));
    const body = got!.json as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...TEMPLATE_VARIABLES, 'REGION'].sort());
    expect(body).toMatchObject({
      ALERT_TITLE: '"orders-db" is failing in eu-west-1',
      ALERT_TYPE: 'ALERT_FAILURE',
      CHECK_NAME: 'orders-db',
      CHECK_ID: alert.check.id,
      CHECK_TYPE: 'TCP',
      CHECK_RESULT_ID: alert.result!.id,
      CHECK_ERROR_MESSAGE: 'connect ECONNREFUSED 127.0.0.1:5432',
      GROUP_NAME: null,
      RUN_LOCATION: 'eu-west-1',
      RESPONSE_TIME: 12,
      STARTED_AT: '2026-05-01T12:00:00.000Z',
      TAGS: ['prod'],
      IS_REMINDER: false,
      REMINDER_SEQUENCE: 0,
      SSL_CHECK_DOMAIN: null,
      SSL_DAYS_REMAINING: null,
      REGION: 'eu',
    });
  });

  it('fills a Handlebars template with the fields and variables, escaping values inside JSON', async () => {
    const r = await receiver();
    const template = '{"text": "{{ALERT_TITLE}}: {{CHECK_ERROR_MESSAGE}}", "env": "{{DEPLOY_ENV}}", "tags": {{{json TAGS}}}, "reminder": {{IS_REMINDER}}{{#if GROUP_NAME}}, "group": "{{GROUP_NAME}}"{{/if}} }';
    const channel = channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/t`, method: 'PUT', template, webhookSecret: 'k' });
    const alert = sampleAlertMessage({
      variables: { DEPLOY_ENV: 'prod "blue"' },
      result: { ...sampleAlertMessage().result!, errorMessage: 'expected "ok"\nbut got <html> & more' },
    });
    await webhookTransport().send(alert, channel, signal());
    const [got] = r.requests;
    expect(got!.method).toBe('PUT');
    expect(got!.json).toEqual({
      text: '"orders-db" is failing in eu-west-1: expected "ok"\nbut got <html> & more',
      env: 'prod "blue"',
      tags: ['prod'],
      reminder: false,
    });
    expect(got!.headers['x-vigil-signature']).toBe(createHmac('sha256', 'k').update(got!.raw).digest('hex'));
  });

  it('a plain-text template is sent as text, values as they are', async () => {
    const r = await receiver();
    const channel = channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/t`, template: 'ALERT {{CHECK_NAME}} <{{RUN_LOCATION}}> {{TAGS}}' });
    await webhookTransport().send(sampleAlertMessage(), channel, signal());
    expect(r.requests[0]!.text).toBe('ALERT orders-db <eu-west-1> prod');
    expect(r.requests[0]!.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.requests[0]!.headers['x-vigil-signature']).toBeUndefined();
  });

  it('identifies itself and accepts any answer unless the channel sets those headers, and sends nothing to a port fetch refuses', async () => {
    const r = await receiver();
    await webhookTransport().send(sampleAlertMessage(), channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/h` }), signal());
    expect(r.requests[0]!.headers['user-agent']).toBe('Vigil');
    expect(r.requests[0]!.headers.accept).toBe('*/*');
    const own = channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/h`, headers: [{ key: 'User-Agent', value: 'acme-hook' }, { key: 'Accept', value: 'application/json' }] });
    await webhookTransport().send(sampleAlertMessage(), own, signal());
    expect(r.requests[1]!.headers['user-agent']).toBe('acme-hook');
    expect(r.requests[1]!.headers.accept).toBe('application/json');
    // A body sent without a Content-Type goes as text, as fetch sends it.
    await send({ method: 'POST', url: `${r.url}/raw`, body: 'plain words' }, signal());
    expect(r.requests[2]!.headers['content-type']).toBe('text/plain;charset=UTF-8');
    // Port 25 (SMTP) is one of fetch's bad ports: the send fails before any connection.
    await expect(webhookTransport().send(sampleAlertMessage(), channelOf('WEBHOOK', { name: 'smtp', url: 'http://127.0.0.1:25/h' }), signal()))
      .rejects.toThrow('Request failed: bad port');
  });

  it('a GET webhook sends no body and carries the fields in its query parameters', async () => {
    const r = await receiver();
    const channel = channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/ping`, method: 'GET', queryParameters: [{ key: 't', value: '{{ALERT_TYPE}}' }] });
    await webhookTransport().send(sampleAlertMessage(), channel, signal());
    expect(r.requests[0]).toMatchObject({ method: 'GET', path: '/ping', query: { t: 'ALERT_FAILURE' }, text: '' });
  });

  it('a non-2xx answer and a redirect reject, naming the status and nothing of the URL', async () => {
    const r = await receiver();
    r.answer({ status: 503 }, { status: 302 }, { status: 404 });
    const channel = channelOf('WEBHOOK', { name: 'ops', url: `${r.url}/hook?token=very-secret` });
    for (const status of [503, 302, 404]) {
      const err = await webhookTransport().send(sampleAlertMessage(), channel, signal()).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toBe(`The receiver answered ${status}`);
    }
  });

  it('gives up on a receiver that does not answer within the time limit', async () => {
    const r = await receiver();
    r.answer({ status: 200, delayMs: 2_000 });
    const channel = channelOf('WEBHOOK', { name: 'slow', url: `${r.url}/slow` });
    const started = Date.now();
    const err = await webhookTransport({ timeoutMs: 200 }).send(sampleAlertMessage(), channel, signal()).catch((e: Error) => e);
    expect((err as Error).message).toBe('No answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('a receiver that is down rejects with the network error', async () => {
    const r = await receiver();
    await r.down();
    const channel = channelOf('WEBHOOK', { name: 'down', url: `${r.url}/x` });
    const err = await webhookTransport().send(sampleAlertMessage(), channel, signal()).catch((e: Error) => e);
    expect((err as Error).message).toBe('Request failed: ECONNREFUSED');
  });

  it('the template renders reminders and certificate alerts', () => {
    const out = renderTemplate('{{ALERT_TYPE}} {{REMINDER_SEQUENCE}} {{SSL_CHECK_DOMAIN}} {{SSL_DAYS_REMAINING}}', sampleAlertMessage({
      alertType: 'ALERT_SSL', isReminder: false, reminderSequence: 0, ssl: { domain: 'shop.example.com', daysRemaining: 6 },
    }));
    expect(out).toBe('ALERT_SSL 0 shop.example.com 6');
  });
});
