import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import type { AlertChannel, TransportChannel } from '@vigil/core';
import { sampleAlertMessage, transportSuite } from '@vigil/core/testing';
import { NtfyConfigSchema, ntfyTransport, type NtfyConfig } from '../src/index.js';
import { startNtfyServer, type NtfyServer } from './support/ntfy-server.js';

/**
 * A stored NTFY channel as the dispatcher hands it to the transport (secrets opened); in a host
 * the channel comes from `POST /v1/alert-channels` (see host.test.ts).
 */
function ntfyChannel(config: Partial<NtfyConfig> & { topic: string }, id = 1): TransportChannel<'NTFY'> {
  return {
    id, accountId: 'account-1', type: 'NTFY', config,
    sendFailure: true, sendRecovery: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false,
    created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
  };
}

/** transportSuite's fixture types channels by the built-in channel types, which NTFY is not. */
const suiteChannel = (channel: TransportChannel<'NTFY'>) => channel as unknown as AlertChannel;

describe('ntfy transport conformance', () => {
  transportSuite(it, async () => {
    const server = await startNtfyServer({ refuse: ['refused'] });
    return {
      transport: ntfyTransport({ timeoutMs: 2_000 }),
      channel: suiteChannel(ntfyChannel({ server: server.url, topic: 'vigil-alerts' })),
      received: async () => server.published,
      failingChannel: suiteChannel(ntfyChannel({ server: server.url, topic: 'refused' }, 2)),
      invalidConfig: { server: server.url, topic: 'not a topic' },
      cleanup: () => server.close(),
    };
  });
});

describe('ntfyTransport', () => {
  const servers: NtfyServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async (options: Parameters<typeof startNtfyServer>[0] = {}) => {
    const server = await startNtfyServer(options);
    servers.push(server);
    return server;
  };
  const send = (channel: TransportChannel<'NTFY'>, alert = sampleAlertMessage()) => ntfyTransport().send(alert, channel, new AbortController().signal);

  it('publishes to POST /{topic} with Title, Priority and Tags headers and a readable body', async () => {
    const server = await serve();
    const receipt = await send(ntfyChannel({ server: `${server.url}/`, topic: 'ops' }));
    expect(receipt).toEqual({ providerId: 'msg1', detail: 'delivered (200)' });
    const [got] = server.published;
    expect(got).toMatchObject({
      topic: 'ops',
      title: '"orders-db" is failing in eu-west-1',
      priority: '5',
      tags: ['rotating_light', 'prod'],
      message: 'connect ECONNREFUSED 127.0.0.1:5432\nCheck: orders-db (TCP) in eu-west-1, 12 ms\nFailing since 2026-05-01T11:58:00.000Z',
    });
    expect(got!.headers.authorization).toBeUndefined();
  });

  it('sends the token as a bearer token, which a protected topic requires', async () => {
    const server = await serve({ token: 'tk_protected' });
    await expect(send(ntfyChannel({ server: server.url, topic: 'ops' }))).rejects.toThrow('The ntfy server answered 403');
    await send(ntfyChannel({ server: server.url, topic: 'ops', token: 'tk_protected' }));
    expect(server.published.map((p) => p.headers.authorization)).toEqual(['Bearer tk_protected']);
  });

  it('lowers the priority of degraded and certificate alerts, and of recoveries, below the configured one', async () => {
    const server = await serve();
    const channel = ntfyChannel({ server: server.url, topic: 'ops', priority: 4 });
    await send(channel, sampleAlertMessage({ alertType: 'ALERT_DEGRADED', title: '"orders-db" is degraded' }));
    await send(channel, sampleAlertMessage({ alertType: 'ALERT_SSL', ssl: { domain: 'shop.example.com', daysRemaining: 9 }, result: null }));
    await send(channel, sampleAlertMessage({ alertType: 'ALERT_RECOVERY', title: '"orders-db" has recovered' }));
    expect(server.published.map((p) => [p.priority, p.tags[0]])).toEqual([['3', 'warning'], ['3', 'lock'], ['3', 'white_check_mark']]);
    expect(server.published[1]!.message).toBe('The certificate of shop.example.com expires in 9 days.\nCheck: orders-db (TCP)\nFailing since 2026-05-01T11:58:00.000Z');
    expect(server.published[2]!.message).toBe('Passing again.\nCheck: orders-db (TCP) in eu-west-1, 12 ms');
  });

  it('encodes a title and tags outside ASCII as RFC 2047, which ntfy decodes', async () => {
    const server = await serve();
    const check = { ...sampleAlertMessage().check, name: 'Zahlungsdienst Köln', tags: ['zahlung,en', 'prod'] };
    await send(ntfyChannel({ server: server.url, topic: 'ops' }), sampleAlertMessage({ title: '"Zahlungsdienst Köln" is failing in eu-west-1', check }));
    const [got] = server.published;
    expect(got!.headers.title).toMatch(/^=\?UTF-8\?B\?/);
    expect(got!.title).toBe('"Zahlungsdienst Köln" is failing in eu-west-1');
    expect(got!.tags).toEqual(['rotating_light', 'zahlung en', 'prod']);
  });

  it('rejects, naming no URL nor token, when the server cannot be reached', async () => {
    const server = await serve();
    const url = server.url;
    await server.close();
    servers.splice(0);
    const err = await send(ntfyChannel({ server: url, topic: 'ops', token: 'tk_hidden' })).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('Could not reach the ntfy server (ECONNREFUSED)');
  });

  it('refuses to send with a stored config its schema rejects, naming the fields but not the token', async () => {
    const err = await send({ ...ntfyChannel({ topic: 'ops' }, 3), config: { topic: 'not a topic', token: 42 } }).catch((e: Error) => e);
    expect((err as Error).message).toBe('The NTFY channel 3 has a config its transport cannot read: config.topic, config.token');
  });

  it('validates its config: an http(s) server, a topic ntfy accepts, a priority 1..5', () => {
    const paths = (config: unknown) => {
      const r = v.safeParse(NtfyConfigSchema, config, { abortEarly: false });
      return r.success ? [] : r.issues.map((i) => v.getDotPath(i));
    };
    expect(v.parse(NtfyConfigSchema, { topic: 'ops' })).toEqual({ server: 'https://ntfy.sh', topic: 'ops', token: null, priority: 5 });
    expect(paths({ server: 'ftp://ntfy.example.com', topic: 'ops/../x', token: '', priority: 6 })).toEqual(['server', 'topic', 'token', 'priority']);
    expect(paths({ server: 'https://ntfy.example.com/?topic=x' })).toEqual(['server', 'topic']);
  });
});
