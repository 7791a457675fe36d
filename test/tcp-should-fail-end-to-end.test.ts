/**
 * shouldFail on TCP checks end to end, as a host runs them: checks made through the public HTTP
 * API (Express router) on SQLite and PostgreSQL with the TCP runner registered, run by check
 * sessions against a real server on 127.0.0.1, their sessions and results read back through the API.
 */
import { once } from 'node:events';
import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { tcpRunner } from '@vigil/runner-tcp';
import type { KnexStorage } from '@vigil/storage-knex';
import { freshStore, STORES } from './support/engine-stack.js';

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

describe.each(STORES)('a TCP check with shouldFail made through the HTTP API (%s)', (kind) => {
  let vigil: Vigil;
  let storage: KnexStorage;
  let server: net.Server;
  let openPort: number;
  let call: (method: 'get' | 'post', path: string, body?: object) => request.Test;

  beforeAll(async () => {
    server = net.createServer((socket) => socket.end()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    openPort = portOf(server);
    storage = await freshStore(kind, 'vigil_should_fail');
    vigil = createVigil({ storage, secretKey: 'f5'.repeat(32), runners: [tcpRunner()], engine: { pollMs: 20 } });
    const account = await vigil.accounts.ensure();
    const { key } = await vigil.apiKeys.create(account.id, { name: 'e2e' });
    const app = express().use('/api', vigilRouter(vigil, { rateLimit: false }));
    call = (method, path, body) => {
      const t = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
      return body ? t.send(body) : t;
    };
    await vigil.start();
  }, 30_000);

  afterAll(async () => {
    await vigil?.stop(0);
    await storage?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  /** Makes a TCP check with shouldFail (no retry) through the API, runs it in a check session, and answers the session and its result. */
  async function runShouldFail(name: string, tcpRequest: object) {
    const { body: check } = await call('post', '/v1/checks/tcp', { name, frequency: 1440, doubleCheck: false, shouldFail: true, request: { hostname: '127.0.0.1', port: openPort, ...tcpRequest } }).expect(201);
    expect(check.shouldFail).toBe(true);
    const { body: triggered } = await call('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } }).expect(201);
    const sessionId = triggered.sessions[0].checkSessionId as string;
    const { body: session } = await call('get', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=20`).expect(200);
    const { body: results } = await call('get', `/v1/check-results/${check.id}`).expect(200);
    expect(results).toHaveLength(1);
    return { session, result: results[0] };
  }

  it('fails when the port accepts the connection, saying it was expected to fail', async () => {
    const { session, result } = await runShouldFail('port open', {});
    expect(session.status, JSON.stringify(session)).toBe('FAILED');
    expect(result).toMatchObject({ checkType: 'TCP', hasFailures: true, errorMessage: 'The run passed, but the check has shouldFail set: it was expected to fail' });
  });

  it('passes when the answer fails its assertion, the failed assertion still in the result', async () => {
    const { session, result } = await runShouldFail('greeting', { assertions: [{ source: 'RESPONSE_DATA', comparison: 'NOT_EMPTY', target: '' }] });
    expect(session.status, JSON.stringify(session)).toBe('PASSED');
    expect(result).toMatchObject({ checkType: 'TCP', hasFailures: false, errorMessage: null });
    expect(result.details.expectedFailure).toMatchObject({ failureKind: 'ASSERTION', errorMessage: expect.stringContaining('Assertion RESPONSE_DATA NOT_EMPTY') });
  });
});
