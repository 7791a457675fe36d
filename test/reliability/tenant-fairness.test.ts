/**
 * One tenant cannot stall another. The example host runs in its own process on SQLite with a
 * check every minute for each of its own account's checks; key A (the host's account) keeps 500
 * connections busy on `GET /v1/check-statuses` (from a worker thread, so that the load's own work
 * is not timed as the host's) while key B (a tenant the admin route made) reads one of its checks
 * every 100 ms. B stays fast, the host's memory stays bounded, nothing answers
 * 5xx, and once A's clients hang up the host is as fast as before the load.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { startExampleHost, type RunningHost } from './support/example-host.js';
import { sleep } from './support/processes.js';

/** How long A's load lasts: 20 s in CI; VIGIL_LOAD_SECONDS shortens it for a quick local try. */
const SECONDS = Math.min(20, Number(process.env.VIGIL_LOAD_SECONDS ?? 20));
const CONNECTIONS = 500;
const CHECKS = 300;
const ADMIN_TOKEN = 'fairness-admin-token';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

interface Reply { status: number; ms: number; text: string }

/** One request on `agent`. */
function send(agent: Agent, base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, agent, headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The resident memory of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) / 1024 : 0;
}

describe('a tenant with 500 connections does not stall another tenant', () => {
  let host: RunningHost;
  let target: Server;
  const agents: Agent[] = [];
  let load: Worker | undefined;

  afterAll(async () => {
    await load?.terminate();
    for (const a of agents) a.destroy();
    host?.child.process.kill('SIGKILL');
    host?.cleanup();
    target?.close();
  });

  it(`B's reads stay under 250 ms at p99 while A keeps ${CONNECTIONS} connections busy; memory bounded; no 5xx; fast afterwards`, async () => {
    target = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    host = await startExampleHost({ VIGIL_ADMIN_TOKEN: ADMIN_TOKEN, VIGIL_API_RATE_LIMIT: '1000000' });
    const pid = host.child.process.pid!;

    // A: the host's own account, with checks that run every minute.
    for (let start = 0; start < CHECKS; start += 10) {
      const made = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        host.api('POST', '/v1/checks/tcp', { name: `a ${start + i}`, request: { hostname: '127.0.0.1', port }, frequency: 1 })));
      for (const m of made) expect(m.status).toBe(201);
    }
    const keyA = /Vigil API key: (\S+)/.exec(host.child.output)![1]!;
    const accountA = /Vigil account: (\S+)/.exec(host.child.output)![1]!;
    const headersA = { authorization: `Bearer ${keyA}`, 'x-service-account': accountA };

    // B: a tenant made through the admin route, with one check of its own.
    const admin = new Agent({ keepAlive: true });
    agents.push(admin);
    const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const account = await send(admin, host.base, 'POST', '/admin/vigil/accounts', adminHeaders, { name: 'tenant B' });
    expect(account.status).toBe(201);
    const accountB = JSON.parse(account.text).id as string;
    const key = await send(admin, host.base, 'POST', `/admin/vigil/accounts/${accountB}/api-keys`, adminHeaders, { name: 'B' });
    expect(key.status).toBe(201);
    const headersB = { authorization: `Bearer ${JSON.parse(key.text).key}`, 'x-service-account': accountB };
    const b = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(b);
    const made = await send(b, host.base, 'POST', '/api/v1/checks/tcp', headersB, { name: 'b', request: { hostname: 'example.com', port: 443 }, activated: false });
    expect(made.status).toBe(201);
    const readB = () => send(b, host.base, 'GET', `/api/v1/checks/${JSON.parse(made.text).id}`, headersB);

    // B alone, as the baseline.
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await readB();
      expect(r.status).toBe(200);
      idle.push(r.ms);
      await sleep(20);
    }

    // A's load, from a worker thread of its own, with B reading every 100 ms beside it.
    load = new Worker(new URL('./support/busy-clients.mjs', import.meta.url), {
      workerData: { url: `${host.base}/api/v1/check-statuses`, headers: headersA, connections: CONNECTIONS },
    });
    const underLoad: number[] = [];
    const statusesB = new Map<number, number>();
    let peakRss = rssMb(pid);
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      const r = await readB();
      statusesB.set(r.status, (statusesB.get(r.status) ?? 0) + 1);
      underLoad.push(r.ms);
      peakRss = Math.max(peakRss, rssMb(pid));
      await sleep(100);
    }
    // A hangs up with requests under way; the host must not go on working for it.
    const counted = once(load, 'message');
    load.postMessage('stop');
    const statusesA = new Map(Object.entries((await counted)[0] as Record<string, number>).map(([code, n]) => [Number(code), n]));
    await load.terminate();
    await sleep(200);
    const after: number[] = [];
    for (let i = 0; i < 20; i++) {
      after.push((await readB()).ms);
      await sleep(20);
    }

    idle.sort((x, y) => x - y);
    underLoad.sort((x, y) => x - y);
    after.sort((x, y) => x - y);
    const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${xs[xs.length - 1]!.toFixed(1)} ms`;
    console.log(`tenant-fairness: A ${JSON.stringify(Object.fromEntries(statusesA))}; B ${JSON.stringify(Object.fromEntries(statusesB))}; `
      + `B idle ${fmt(idle)}; B under load (${underLoad.length}) ${fmt(underLoad)}; B after ${fmt(after)}; peak RSS ${peakRss.toFixed(0)} MB`);

    expect([...statusesA.keys(), ...statusesB.keys()].filter((s) => s >= 500)).toEqual([]);
    expect([...statusesB.keys()]).toEqual([200]);
    expect(statusesA.get(200) ?? 0).toBeGreaterThan(0);
    expect(percentile(underLoad, 99)).toBeLessThan(250);
    expect(peakRss).toBeLessThan(600);
    expect(percentile(after, 50)).toBeLessThan(Math.max(2 * percentile(idle, 50), 20));
  }, 180_000);
});
