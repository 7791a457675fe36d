/**
 * A host registers the ntfy transport; NTFY channels are then created through the public API
 * (their config validated, their token kept secret), and a failing check's alert reaches the
 * ntfy server through the outbox.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { tcpRunner } from '@vigil/runner-tcp';
import { knexStorage } from '@vigil/storage-knex';
import { ntfyTransport } from '../src/index.js';
import { startNtfyServer, type NtfyServer } from './support/ntfy-server.js';

const TOKEN = 'tk_8m2xq7v4h1c9p3w6';

let vigil: Vigil | undefined;
let ntfy: NtfyServer | undefined;
afterEach(async () => {
  await vigil?.close();
  await ntfy?.close();
  vigil = ntfy = undefined;
});

async function startHost() {
  ntfy = await startNtfyServer({ token: TOKEN });
  const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  const host = createVigil({ storage, secretKey: randomBytes(32).toString('hex'), runners: [tcpRunner()], transports: [ntfyTransport()] });
  vigil = host;
  await host.start();
  const account = await host.accounts.ensure();
  const { key } = await host.apiKeys.create(account.id, { name: 'test' });
  const app = express().use('/api', vigilRouter(host));
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
  return {
    accountId: account.id,
    get: (path: string) => auth(request(app).get(`/api${path}`)),
    post: (path: string, body: object) => auth(request(app).post(`/api${path}`)).send(body),
    put: (path: string, body: object) => auth(request(app).put(`/api${path}`)).send(body),
  };
}

/** A port on 127.0.0.1 that nothing listens on: a TCP check of it fails with "connection refused". */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits (real time: the dispatcher sends as soon as the run queues the alert) until `fn` gives a value. */
async function until<T>(fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a host with the ntfy transport', () => {
  it('creates NTFY channels through the API, validating their config and never answering the token', async () => {
    const api = await startHost();
    const created = await api.post('/v1/alert-channels', {
      type: 'NTFY', config: { server: ntfy!.url, topic: 'payments-oncall', token: TOKEN }, sendDegraded: true,
    }).expect(201);
    expect(created.body).toMatchObject({
      type: 'NTFY',
      config: { server: ntfy!.url, topic: 'payments-oncall', token: '********', priority: 5 },
      sendFailure: true, sendRecovery: true, sendDegraded: true, sslExpiry: false, subscriptions: [],
    });
    const id = created.body.id as number;
    for (const body of [created.body, (await api.get(`/v1/alert-channels/${id}`).expect(200)).body, (await api.get('/v1/alert-channels').expect(200)).body]) {
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
    // Sealed at rest too: the stored row holds ciphertext.
    expect(JSON.stringify(await vigil!.storage.alertChannels.get(api.accountId, id))).not.toContain(TOKEN);

    // The transport's schema answers 400 naming the fields; an unknown type names the ones served.
    const bad = await api.post('/v1/alert-channels', { type: 'NTFY', config: { server: 'ftp://x', topic: 'a b', priority: 9 } }).expect(400);
    expect(bad.body.validation.keys.sort()).toEqual(['config.priority', 'config.server', 'config.topic']);
    const unknown = await api.post('/v1/alert-channels', { type: 'PIGEON', config: {} }).expect(400);
    expect(unknown.body).toMatchObject({ validation: { keys: ['type'] }, message: expect.stringContaining('NTFY') });

    // A PUT that sends the masked value back keeps the stored token.
    const updated = await api.put(`/v1/alert-channels/${id}`, { type: 'NTFY', config: { ...created.body.config, priority: 4 } }).expect(200);
    expect(updated.body.config).toEqual({ server: ntfy!.url, topic: 'payments-oncall', token: '********', priority: 4 });
    expect((await vigil!.alertChannels.getForDelivery(api.accountId, id)).config).toMatchObject({ token: TOKEN });
  });

  it('delivers a failing check\'s alert to the ntfy server, with the token, and logs the delivery', async () => {
    const api = await startHost();
    const channel = await api.post('/v1/alert-channels', { type: 'NTFY', config: { server: ntfy!.url, topic: 'payments-oncall', token: TOKEN } }).expect(201);
    // autoAssignAlerts (default true) subscribes the new check to the account's channels.
    const check = await api.post('/v1/checks/tcp', {
      name: 'payments-db', tags: ['payments'], request: { hostname: '127.0.0.1', port: await closedPort() }, frequency: 60,
    }).expect(201);
    expect(check.body.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.body.id, activated: true }]);

    const trigger = await api.post('/v1/check-sessions/trigger', { target: { checkId: [check.body.id] } }).expect(201);
    await api.get(`/v1/check-sessions/${trigger.body.sessions[0].checkSessionId}/completion?maxWaitSeconds=10`).expect(200);

    const [published] = await until(() => ntfy!.published.length > 0 && ntfy!.published);
    expect(published).toMatchObject({
      topic: 'payments-oncall', title: '"payments-db" is failing in us-east-1', priority: '5', tags: ['rotating_light', 'payments'],
    });
    expect(published!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(published!.message).toMatch(/^.*refused.*\nCheck: payments-db \(TCP\) in us-east-1/i);

    // The channel's delivery log records the attempt once the server confirmed it.
    const deliveries = await until(async () => {
      const log = (await api.get(`/v1/alert-channels/${channel.body.id}/deliveries`).expect(200)).body as unknown[];
      return log.length > 0 && log;
    });
    // It names the id the ntfy server gave the message (the receipt's providerId).
    expect(deliveries).toEqual([expect.objectContaining({ alertChannelId: channel.body.id, ok: true, detail: expect.stringContaining('msg1') })]);
  });
});
