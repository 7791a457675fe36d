/**
 * Vigil as a host embeds it, for end-to-end tests of the engine: a real store (a SQLite file, or a
 * PostgreSQL schema of its own), the TCP runner, the public API on an Express app through
 * supertest, the engine on a FakeClock, a logger that keeps every line, and real servers on
 * 127.0.0.1 for the checks to reach and the alerts to land on.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { createVigil, type LogMeta, type Logger, type Vigil, type VigilOptions } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { vigilRouter } from '@vigil/http-express-adapter';
import { tcpRunner } from '@vigil/runner-tcp';

import { freshStore } from '../../packages/storage-knex/test/support/fresh-store.js';

export { freshStore, STORES } from '../../packages/storage-knex/test/support/fresh-store.js';

export const SECRET = 'e7'.repeat(32);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export interface LogLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  msg: string;
  meta: LogMeta;
}

/** A logger that keeps every line it is told, child loggers' included. */
export function capturingLogger(lines: LogLine[], bound: LogMeta = {}): Logger {
  const at = (level: LogLine['level']) => (msg: string, meta: LogMeta = {}) => {
    lines.push({ level, msg, meta: { ...bound, ...meta } });
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: (meta) => capturingLogger(lines, { ...bound, ...meta }) };
}

/** What went wrong inside the engine: a job that failed, a run that failed, any error line. */
export const engineTrouble = (lines: readonly LogLine[]) =>
  lines.filter((l) => l.level === 'error' || /job failed|run failed|kept changing/.test(l.msg)).map((l) => `${l.msg} ${JSON.stringify(l.meta)}`);

/** Store calls under way, per process: a process with none and no job running is idle. */
const storeCallsOf = new WeakMap<Vigil, () => number>();

/** The store as one process sees it, counting the repository calls it has under way. */
function counted<T extends object>(storage: T): { storage: T; pending: () => number } {
  let pending = 0;
  const out: Record<string, unknown> = { ...(storage as Record<string, unknown>) };
  for (const [name, repo] of Object.entries(storage)) {
    if (typeof repo !== 'object' || repo === null || name === 'capabilities') continue;
    const proxied: Record<string, unknown> = { ...(repo as Record<string, unknown>) };
    for (const [method, fn] of Object.entries(repo as Record<string, unknown>)) {
      if (typeof fn !== 'function') continue;
      proxied[method] = (...args: unknown[]) => {
        pending++;
        return Promise.resolve((fn as (...a: unknown[]) => unknown).apply(repo, args)).finally(() => pending--);
      };
    }
    out[name] = proxied;
  }
  return { storage: out as T, pending: () => pending };
}

/**
 * One Vigil process on a shared store and clock. Time limits and leases are long so that moving
 * the fake clock in big steps never cuts short a run whose real I/O is still under way.
 */
export function vigilProcess(
  options: VigilOptions & { storage: NonNullable<VigilOptions['storage']>; clock: FakeClock },
  configure?: Parameters<typeof createVigil>[1],
): { vigil: Vigil; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const store = counted(options.storage);
  const vigil = createVigil({
    secretKey: SECRET,
    logger: capturingLogger(lines),
    runners: [tcpRunner()],
    ...options,
    storage: store.storage,
    engine: { pollMs: 250, leaseMs: 6 * HOUR, runTimeoutMs: 10 * MINUTE, stopDeadlineMs: 0, ...options.engine },
  }, configure);
  storeCallsOf.set(vigil, store.pending);
  return { vigil, lines };
}

export type Api = (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object) => request.Test;

/** The public API of `vigil` on an Express app, as one account's API key calls it. */
export async function apiOf(vigil: Vigil, accountId?: string): Promise<{ api: Api; accountId: string }> {
  const account = await vigil.accounts.ensure(accountId);
  const { key } = await vigil.apiKeys.create(account.id, { name: 'engine guarantees' });
  const app = express().use('/api', vigilRouter(vigil, { rateLimit: false }));
  const api: Api = (method, path, body) => {
    const t = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
    return body ? t.send(body) : t;
  };
  return { api, accountId: account.id };
}

/** A few turns of the event loop and a little real time: I/O under way (store, TCP, HTTP) moves on. No fake time passes. */
async function realTurns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setTimeout(resolve, 2));
}

/**
 * Waits, in real time and at most `limitMs`, until every process has been idle (no job running,
 * no store call under way: a claim, a delivery's record) for a few turns in a row. A job that
 * waits on the fake clock (a retry's backoff) keeps running until the clock moves: the limit ends
 * that wait.
 */
export async function quiet(vigils: readonly Vigil[], limitMs = 300): Promise<void> {
  const end = Date.now() + limitMs;
  const busy = (v: Vigil) => v.engine.active > 0 || (storeCallsOf.get(v)?.() ?? 0) > 0;
  for (let idle = 0; idle < 3 && Date.now() < end;) {
    await realTurns();
    idle = vigils.some(busy) ? 0 : idle + 1;
  }
}

/** Moves the fake clock on by `ms` in steps, letting the engines finish what each step started. */
export async function advance(clock: FakeClock, vigils: readonly Vigil[], ms: number, stepMs = 1_000): Promise<void> {
  for (let moved = 0; moved < ms; moved += stepMs) {
    clock.advance(Math.min(stepMs, ms - moved));
    await quiet(vigils);
  }
}

/** Moves the fake clock on in steps until `condition` holds; fails after `limitMs` of fake time. */
export async function advanceUntil(
  clock: FakeClock,
  vigils: readonly Vigil[],
  condition: () => boolean | Promise<boolean>,
  { stepMs = 1_000, limitMs = 10 * MINUTE } = {},
): Promise<void> {
  await quiet(vigils);
  for (let moved = 0; !(await condition()); moved += stepMs) {
    if (moved >= limitMs) throw new Error(`condition not met within ${limitMs} ms of fake time`);
    clock.advance(stepMs);
    await quiet(vigils);
  }
}

/** Sends an API request that waits on the fake clock (a completion long-poll), moving the clock until it answers. */
export async function whileAdvancing(clock: FakeClock, vigils: readonly Vigil[], test: request.Test, stepMs = 250): Promise<request.Response> {
  let settled = false;
  const answer = test.then((res) => res).finally(() => {
    settled = true;
  });
  for (let steps = 0; !settled; steps++) {
    if (steps > 1_000) throw new Error('the request did not answer within 1,000 steps of the fake clock');
    await quiet(vigils);
    if (!settled) clock.advance(stepMs);
  }
  return answer;
}

export interface TestServer {
  port: number;
  close(): Promise<void>;
}

async function listening<T extends net.Server>(server: T): Promise<T> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

const closer = (server: net.Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

/** A TCP server that tells `onAccept` of each connection, then answers `ok` and closes it. */
export async function tcpServer(onAccept: () => void = () => {}): Promise<TestServer> {
  const server = await listening(net.createServer((socket) => {
    socket.on('error', () => {});
    onAccept();
    socket.end('ok');
  }));
  return { port: (server.address() as net.AddressInfo).port, close: closer(server) };
}

/**
 * A TCP server that holds connections until `size` of them are open, then answers all of them at
 * the same instant: runs in several locations of one slot finish together.
 */
export async function barrierServer(size: number, answer: string): Promise<TestServer & { answered: number }> {
  const waiting: net.Socket[] = [];
  const state = { answered: 0 };
  const server = await listening(net.createServer((socket) => {
    socket.on('error', () => {});
    waiting.push(socket);
    if (waiting.length < size) return;
    for (const s of waiting.splice(0)) {
      state.answered++;
      s.end(answer);
    }
  }));
  return {
    port: (server.address() as net.AddressInfo).port,
    get answered() {
      return state.answered;
    },
    close: closer(server),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then let go): connections are refused. */
export async function closedPort(): Promise<number> {
  const server = await listening(net.createServer());
  const { port } = server.address() as net.AddressInfo;
  await closer(server)();
  return port;
}

/** A webhook receiver: keeps every JSON body posted to it, answers 200. */
export async function webhookServer(): Promise<TestServer & { url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = await listening(http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }));
  const { port } = server.address() as net.AddressInfo;
  return { port, url: `http://127.0.0.1:${port}/hook`, bodies, close: closer(server) };
}

/** A throwaway self-signed certificate for `host`, valid for `days` from now (openssl command line), with its expiry. */
export function selfSignedCertificate(host: string, days: number): { cert: string; key: string; notAfter: Date } {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-engine-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days),
      '-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'pipe' });
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    return { cert, key: readFileSync(join(dir, 'key.pem'), 'utf8'), notAfter: new Date(new X509Certificate(cert).validTo) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One started Vigil process on a fresh, migrated store of `kind` and a fake clock, with the API of
 * one account. `close` stops it, moving the clock until it has stopped (stop waits on the clock).
 */
export async function startedProcess(
  kind: Parameters<typeof freshStore>[0],
  schema: string,
  options: Omit<VigilOptions, 'storage' | 'clock'>,
  startAt = '2026-06-01T00:00:00.000Z',
): Promise<{ vigil: Vigil; lines: LogLine[]; clock: FakeClock; api: Api; close: () => Promise<void> }> {
  const storage = await freshStore(kind, schema);
  await storage.migrate();
  const clock = new FakeClock(startAt);
  const { vigil, lines } = vigilProcess({ storage, clock, ...options });
  const { api } = await apiOf(vigil);
  await vigil.start();
  const close = async () => {
    let closed = false;
    const closing = vigil.close().finally(() => (closed = true));
    for (let i = 0; i < 100 && !closed; i++) {
      clock.advance(1_000);
      await quiet([vigil], 50);
    }
    await closing;
  };
  return { vigil, lines, clock, api, close };
}
