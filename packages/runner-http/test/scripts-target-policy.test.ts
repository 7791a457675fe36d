import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { targetPolicy, type TargetPolicy, type RunResult } from '@vigil/core';
import { describe, expect, it } from 'vitest';
import { httpRunner } from '../src/index.js';
import { logsOf, scriptedJob, type Scripted } from './scripts-support.js';
import { json, localServers, makePki, startHttps } from './support.js';

// The process's own connections under the host's target policy: checked by the host before they
// are made (core's child fence with the HTTP runner's rule), and refused outright below the sockets.

describe('setup and teardown scripts under a target policy', () => {
  const serve = localServers();
  const runner = httpRunner({ scriptTimeoutMs: 5_000 });
  const run = (job: Scripted) => runner.run(scriptedJob(job), new AbortController().signal);
  const strict = targetPolicy({ refuseInternalAddresses: true });
  const loopback = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8'] });
  /** The API (on 127.0.0.1): a token at /token, data elsewhere. */
  const api = () => serve((req, res, body) => json(200, req.url === '/token' ? { token: 'tok-1' } : { ok: true })(req, res, body));
  const tokenSetup = (call: string) => `
    const token = ${call};
    request.headers.Authorization = 'Bearer ' + token;
  `;
  const fetchToken = (url: string) => `(await (await fetch(${JSON.stringify(url)})).json()).token`;
  const httpGetToken = (url: string) => `await new Promise((resolve, reject) => {
      require('node:http').get(${JSON.stringify(url)}, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(JSON.parse(text).token));
      }).on('error', reject);
    })`;

  /** Runs a check against the API under `policy`, with the scripts made for its server: the server (what it saw) and the result. */
  async function underPolicy(policy: TargetPolicy, scripts: (server: Awaited<ReturnType<typeof api>>) => { setup?: string; teardown?: string }) {
    const server = await api();
    const result = await run({ request: { url: `${server.origin}/data` }, job: { targetPolicy: policy }, ...scripts(server) });
    return { server, result };
  }

  function expectRefused(result: RunResult, phase: 'Setup' | 'Teardown', text: RegExp) {
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(new RegExp(`${phase} failed: ${text.source}`));
    expect(result.details).toMatchObject({ errorCode: 'ETARGETPOLICY' });
  }

  it('refuses a setup\'s fetch to 127.0.0.1 before connecting, and sends no request', async () => {
    const { server, result } = await underPolicy(strict, (server) => ({ setup: tokenSetup(fetchToken(`${server.origin}/token`)) }));
    expectRefused(result, 'Setup', /The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)\. .* \(the group's localSetupScript\)$/);
    expect(result.details).toMatchObject({ requestSent: false, refusedTargets: [{ phase: 'setup', host: '127.0.0.1', port: server.port, address: '127.0.0.1' }] });
    expect(server.seen).toHaveLength(0);
  });

  it('refuses http.get to a name that resolves to 127.0.0.1 (localhost)', async () => {
    const { server, result } = await underPolicy(strict, (server) => ({ setup: tokenSetup(httpGetToken(`http://localhost:${server.port}/token`)) }));
    expectRefused(result, 'Setup', /The target policy refused "localhost" \((127\.0\.0\.1|::1)\): /);
    expect(server.seen).toHaveLength(0);
  });

  it('fails the run even when the script catches the refusal and goes on', async () => {
    const { server, result } = await underPolicy(strict, (server) => ({
      setup: `
        try { await fetch('http://[::1]:${server.port}/token'); } catch (err) { console.log('caught', err.cause.code); }
      `,
    }));
    expectRefused(result, 'Setup', /The target policy refused ::1: ::1 is a loopback address/);
    expect(logsOf(result.details).map((l) => l.text)).toContain('caught ETARGETPOLICY');
    expect(server.seen).toHaveLength(0);
  });

  it('takes no answer the script makes up itself, even one that read the question off the IPC channel', async () => {
    const { server, result } = await underPolicy(strict, (server) => ({
      setup: `
        // Reads each question the fence sends and answers it at once with an address of its choosing.
        const send = process._send;
        process._send = function (message, ...rest) {
          if (message && message.type === 'target-check') {
            const forged = { type: 'target-answer', id: message.id, addresses: [{ address: '127.0.0.1', family: 4 }] };
            process.emit('message', forged);
            process.emit('message', { ...forged, mac: '00'.repeat(32) });
          }
          return send.call(this, message, ...rest);
        };
        ${tokenSetup(fetchToken(`${server.origin}/token`))}
      `,
    }));
    expectRefused(result, 'Setup', /The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
    expect(server.seen).toHaveLength(0);
  });

  it('checks at most 100 connections of one phase, one at a time, and fails the rest', async () => {
    const { server, result } = await underPolicy(loopback, (server) => ({
      setup: `
        const http = require('node:http');
        const outcomes = [];
        for (let i = 0; i < 101; i++) {
          // A connection of its own for each request (no keep-alive).
          outcomes.push(await new Promise((resolve) => {
            http.get({ host: '127.0.0.1', port: ${server.port}, path: '/token', agent: false }, (res) => {
              res.resume();
              res.on('end', () => resolve('connected'));
            }).on('error', (err) => resolve(err.code));
          }));
        }
        console.log(outcomes.filter((o) => o === 'connected').length, outcomes[100]);
      `,
    }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(logsOf(result.details).map((l) => l.text)).toContain('100 ETOOMANYCONNECTIONS');
    // The hundred token requests, then the check's own request.
    expect(server.seen).toHaveLength(101);
  });

  it('lets the calls through to an address the allow list holds: fetch, http.get, and https.get keeping its TLS name', async () => {
    const server = await api();
    const pki = makePki();
    const secure = await startHttps(pki, json(200, { token: 'tls-token' }));
    try {
      const result = await run({
        request: { url: `${server.origin}/data` },
        job: { targetPolicy: loopback },
        setup: `
          const a = ${fetchToken(`${server.origin}/token`)};
          const b = ${httpGetToken(`http://localhost:${server.port}/token`)};
          // The certificate names localhost: it verifies only when the TLS server name is still the name.
          const c = await new Promise((resolve, reject) => {
            require('node:https').get('https://localhost:${secure.port}/', { ca: ${JSON.stringify(pki.caCert)} }, (res) => {
              let text = '';
              res.on('data', (chunk) => (text += chunk));
              res.on('end', () => resolve(JSON.parse(text).token));
            }).on('error', reject);
          });
          request.headers['X-Tokens'] = [a, b, c].join(',');
        `,
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, statusCode: 200 });
      expect(server.seen.find((s) => s.url === '/data')?.headers['x-tokens']).toBe('tok-1,tok-1,tls-token');
    } finally {
      await secure.close();
    }
  });

  it('refuses 127.0.0.2 when the allow list holds 127.0.0.1 only, in the teardown too', async () => {
    const other = http.createServer((_req, res) => res.end('{}'));
    const connections: unknown[] = [];
    other.on('connection', (c) => connections.push(c));
    other.listen(0, '127.0.0.2');
    await once(other, 'listening');
    try {
      const { server, result } = await underPolicy(targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1'] }), (server) => ({
        teardown: `await fetch('http://127.0.0.2:${(other.address() as AddressInfo).port}/report').catch(() => {});`,
      }));
      expect(result.statusCode).toBe(200);
      expectRefused(result, 'Teardown', /The target policy refused 127\.0\.0\.2: /);
      expect(connections).toHaveLength(0);
    } finally {
      other.close();
    }
  });

  it('refuses DNS servers of the script\'s own', async () => {
    const { server, result } = await underPolicy(loopback, (server) => ({
      setup: `try { require('node:dns').setServers(['127.0.0.1']); } catch (err) { console.log(err.code); }`,
    }));
    expectRefused(result, 'Setup', /The target policy refused the script's DNS servers 127\.0\.0\.1: /);
    expect(logsOf(result.details).map((l) => l.text)).toContain('ETARGETPOLICY');
  });

  it('refuses DNS servers set on a resolver\'s own handle, and async_hooks, a way to other connections\' handles', async () => {
    const { server, result } = await underPolicy(loopback, (server) => ({
      setup: `
        try { new (require('node:dns').Resolver)()._handle.setServers([[4, '127.0.0.1', 53]]); } catch (err) { console.log('handle', err.code); }
        try { require('node:async_hooks'); } catch (err) { console.log('async_hooks', err.message); }
      `,
    }));
    expectRefused(result, 'Setup', /The target policy refused the script's DNS servers /);
    const logs = logsOf(result.details).map((l) => l.text);
    expect(logs).toContain('handle ETARGETPOLICY');
    expect(logs.some((l) => l.startsWith('async_hooks') && l.includes('not available'))).toBe(true);
  });

  it('checks what connects: a getter that answers the fence one thing and Node another reaches no local socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-socket-'));
    const path = join(dir, 'internal.sock');
    let connections = 0;
    const local = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => local.listen(path, resolve));
    try {
      const { server, result } = await underPolicy(loopback, (server) => ({
        setup: `
          // net is withheld; a request's socket hands out its class.
          const Socket = await new Promise((resolve) => require('node:http').get('http://127.0.0.1:${server.port}/token').on('socket', (s) => resolve(s.constructor)));
          let reads = 0;
          const options = { port: 1, get path() { reads++; return reads === 1 ? undefined : ${JSON.stringify(path)}; } };
          await new Promise((resolve) => {
            const socket = new Socket();
            socket.on('connect', () => { console.log('connected'); socket.destroy(); resolve(); });
            socket.on('error', (err) => { console.log('refused', err.code); resolve(); });
            socket.connect(options);
          });
        `,
      }));
      expect(logsOf(result.details).map((l) => l.text)).not.toContain('connected');
      expect(connections).toBe(0);
    } finally {
      local.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a connection made on a socket handle directly, with a connect request taken through Object.prototype', async () => {
    const other = net.createServer((c) => c.destroy());
    const connections: unknown[] = [];
    other.on('connection', (c) => connections.push(c));
    other.listen(0, '127.0.0.2');
    await once(other, 'listening');
    const dir = mkdtempSync(join(tmpdir(), 'vigil-socket-'));
    const path = join(dir, 'internal.sock');
    const local = net.createServer((c) => { connections.push(c); c.destroy(); });
    await new Promise<void>((resolve) => local.listen(path, resolve));
    try {
      const { result } = await underPolicy(targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1'] }), (server) => ({
        setup: `
          // Node assigns oncomplete to each connect request it makes: a setter on Object.prototype is handed the request.
          let connectRequest = null;
          Object.defineProperty(Object.prototype, 'oncomplete', {
            configurable: true,
            set(fn) { connectRequest ??= this; Object.defineProperty(this, 'oncomplete', { value: fn, writable: true }); },
          });
          const socket = await new Promise((resolve) => require('node:http').get('http://127.0.0.1:${server.port}/token').on('socket', (s) => s.on('connect', () => resolve(s))));
          delete Object.prototype.oncomplete;
          const TCP = socket._handle.constructor;
          const ConnectRequest = connectRequest.constructor;
          const reached = await new Promise((resolve) => {
            const req = new ConnectRequest();
            req.oncomplete = (status) => resolve('status ' + status);
            try { new TCP(0).connect(req, '127.0.0.2', ${(other.address() as AddressInfo).port}); } catch (err) { resolve(err.code); }
          });
          console.log('tcp', reached);
          const Pipe = process.stdout._handle.constructor;
          try { new Pipe(0).connect(new ConnectRequest(), ${JSON.stringify(path)}); console.log('pipe connecting'); } catch (err) { console.log('pipe', err.code); }
          await new Promise((resolve) => setTimeout(resolve, 200));
        `,
      }));
      const logs = logsOf(result.details).map((l) => l.text);
      expect(logs).toEqual(expect.arrayContaining(['tcp ETARGETPOLICY', 'pipe ETARGETPOLICY']));
      expectRefused(result, 'Setup', new RegExp(`The target policy refused the script's direct connection 127\\.0\\.0\\.2:${(other.address() as AddressInfo).port}: `));
      expect(connections).toHaveLength(0);
    } finally {
      other.close();
      local.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('changes nothing without a policy, or with one that refuses nothing', async () => {
    const server = await api();
    for (const policy of [undefined, targetPolicy()]) {
      const result = await run({
        request: { url: `${server.origin}/data` },
        job: policy ? { targetPolicy: policy } : {},
        setup: `${tokenSetup(fetchToken(`http://localhost:${server.port}/token`))}\nrequire('node:dns').setServers(['127.0.0.1']);`,
      });
      expect(result).toMatchObject({ hasFailures: false, errorMessage: null, statusCode: 200 });
    }
    expect(server.seen.filter((s) => s.url === '/data').map((s) => s.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1']);
  });
});
