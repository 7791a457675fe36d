// Alert delivery, on SQLite (the default store) with the real WEBHOOK transport and a local
// HTTP receiver in the same process.
//
// 1. Latency: from a failed run's result being stored to its webhook request arriving, over
//    1,000 alerts (each a check session of its own check, failing once, with failedRunThreshold
//    1), a few at a time. Baseline: the same receiver, POSTed the same body straight with fetch.
//    Also printed: the process's CPU per alert meanwhile (no goal: what each alert costs).
// 2. Throughput with 100 channels: alerts queued in the outbox for 100 webhook channels (50 checks
//    each), delivered by the dispatcher. Baseline: a plain fetch loop with as many requests in
//    flight as the dispatcher allows (50), POSTing the same bodies.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ALERTS = Number(process.env.BENCH_ALERTS ?? 1_000);
const AT_ONCE = Number(process.env.BENCH_AT_ONCE ?? 4);
const CHANNELS = 100;
const PER_CHANNEL = Number(process.env.BENCH_PER_CHANNEL ?? 50);
const IN_FLIGHT = 50;

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** A receiver that answers 200 and tells whoever waits for a check id. */
async function receiver() {
  const waiting = new Map();
  let count = 0;
  let onCount = null;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      count++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).CHECK_ID;
      waiting.get(id)?.(at);
      waiting.delete(id);
      onCount?.(count);
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    arrival: (checkId) => new Promise((resolve) => waiting.set(checkId, resolve)),
    get count() { return count; },
    whenCount: (n) => new Promise((resolve) => {
      if (count >= n) return resolve();
      onCount = (c) => { if (c >= n) { onCount = null; resolve(); } };
    }),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

async function workers(n, items, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

async function vigilWith(dir, name, register) {
  const { createVigil } = await import('@vigil/core');
  const { knexStorage } = await import('@vigil/storage-knex');
  const { registerAlertChannels } = await import('@vigil/alert-channels');
  const storage = knexStorage({ connection: join(dir, `${name}.sqlite`) });
  const vigil = createVigil({ storage, secretKey: 'b'.repeat(64), ...register }, (c) => registerAlertChannels(c, { certificates: false }));
  const { id: accountId } = await vigil.accounts.ensure(name);
  return { vigil, storage, accountId };
}

async function latency(dir, hook) {
  const { FakeRunner, failResult } = await import('@vigil/core/testing');
  const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
  const { vigil, storage, accountId } = await vigilWith(dir, 'latency', { runners: [runner], engine: { concurrency: 50 } });
  const channel = await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name: 'bench', url: `${hook.url}/alerts` } });
  const checks = [];
  for (let i = 0; i < ALERTS; i++) {
    checks.push(await vigil.checks.create(accountId, 'TCP', {
      name: `check ${i}`, request: { hostname: '127.0.0.1', port: 9 }, frequency: 1440, useGlobalAlertSettings: false, retryStrategy: null,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 } },
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    }));
  }
  // The moment each check's failed result is stored.
  const storedAt = new Map();
  const insertMany = storage.checkResults.insertMany.bind(storage.checkResults);
  storage.checkResults.insertMany = async (account, rows) => {
    await insertMany(account, rows);
    const at = performance.now();
    for (const r of rows) if (!storedAt.has(r.checkId)) storedAt.set(r.checkId, at);
  };
  await vigil.start();
  const ms = [];
  let lost = 0;
  let scheduled = 0;
  // The process's CPU (every thread: the engine, the store's driver, the dispatcher, the receiver) while the alerts go out.
  const cpuFrom = process.cpuUsage();
  await workers(AT_ONCE, checks, async (check) => {
    const arrived = hook.arrival(check.id);
    const triggeredAt = performance.now();
    await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } });
    const at = await Promise.race([arrived, new Promise((r) => setTimeout(() => r(null), 10_000))]);
    // A new check also runs on its schedule soon after it is made; when that run came first, its
    // alert went out before anyone waited for it, and the triggered run (failing again) sends none.
    if (storedAt.get(check.id) < triggeredAt) scheduled++;
    else if (at === null || !storedAt.has(check.id)) lost++;
    else ms.push(at - storedAt.get(check.id));
  });
  const cpu = process.cpuUsage(cpuFrom);
  await vigil.stop(0);
  await vigil.close();
  return { ms, lost, scheduled, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function baselineLatency(hook) {
  const body = JSON.stringify({ ALERT_TITLE: '"check 1" is failing in us-east-1', ALERT_TYPE: 'ALERT_FAILURE', CHECK_ID: 'baseline', CHECK_NAME: 'check 1', CHECK_ERROR_MESSAGE: 'Connection refused', TAGS: [] });
  const ms = [];
  await workers(AT_ONCE, Array.from({ length: ALERTS }), async () => {
    const started = performance.now();
    const res = await fetch(`${hook.url}/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.text();
    ms.push(performance.now() - started);
  });
  return ms;
}

async function throughput(dir, hook) {
  const { vigil, accountId } = await vigilWith(dir, 'throughput', { alerts: { pollMs: 50, batch: IN_FLIGHT } });
  const channels = [];
  for (let c = 0; c < CHANNELS; c++) {
    channels.push(await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name: `hook ${c}`, url: `${hook.url}/c/${c}` } }));
  }
  const { randomUUID } = await import('node:crypto');
  const now = new Date().toISOString();
  const rows = [];
  for (let k = 0; k < PER_CHANNEL; k++) {
    for (const channel of channels) {
      const checkId = `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
      rows.push({
        id: randomUUID(), accountId, checkId, alertChannelId: channel.id, alertType: 'ALERT_FAILURE',
        payload: { checkId, checkName: `check ${k}`, checkType: 'TCP', runLocation: 'us-east-1', errorMessage: 'Connection refused', checkResultId: randomUUID() },
        created_at: now, nextAttemptAt: now,
      });
    }
  }
  for (let i = 0; i < rows.length; i += 500) await vigil.storage.outbox.enqueue(rows.slice(i, i + 500));
  const before = hook.count;
  const started = performance.now();
  vigil.alerts.start();
  await hook.whenCount(before + rows.length);
  const seconds = (performance.now() - started) / 1000;
  await vigil.alerts.stop();
  await vigil.close();
  return rows.length / seconds;
}

async function baselineThroughput(hook) {
  const body = JSON.stringify({ ALERT_TITLE: '"check 1" is failing in us-east-1', ALERT_TYPE: 'ALERT_FAILURE', CHECK_ID: 'baseline', CHECK_NAME: 'check 1', CHECK_ERROR_MESSAGE: 'Connection refused', TAGS: [] });
  const n = CHANNELS * PER_CHANNEL;
  const started = performance.now();
  await workers(IN_FLIGHT, Array.from({ length: n }, (_, i) => i % CHANNELS), async (c) => {
    const res = await fetch(`${hook.url}/c/${c}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.text();
  });
  return n / ((performance.now() - started) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), 'vigil-alerts-bench-'));
const hook = await receiver();
try {
  await baselineLatency(hook); // warm fetch and the receiver
  const base = await baselineLatency(hook);
  const { ms, lost, scheduled, cpuMs } = await latency(dir, hook);
  const baseRate = await baselineThroughput(hook);
  const rate = await throughput(dir, hook);
  const fmt = (x) => `${x.toFixed(1)} ms`;
  console.log(`${ALERTS} alerts, ${AT_ONCE} at a time, SQLite; ${CHANNELS} channels x ${PER_CHANNEL} alerts, ${IN_FLIGHT} in flight`);
  // Every row's ratio is its vigil figure over its baseline figure: latency in ms (lower is better), alerts/s (higher is better).
  console.log('figure                                                      vigil      baseline  vigil/baseline  goal');
  // Each row ends with its goal and whether this run met it.
  const row = (what, vigil, baseline, ratio, goal, met) =>
    console.log(`${what.padEnd(52)} ${vigil.padStart(12)}  ${baseline.padStart(12)}  ${ratio.toFixed(2).padStart(14)}  goal ${goal}: ${met ? 'met' : 'NOT met'}`);
  const p50 = quantile(ms, 0.5);
  const p99 = quantile(ms, 0.99);
  row('run stored -> webhook arrived, p50 (vs bare POST)', fmt(p50), fmt(quantile(base, 0.5)), p50 / quantile(base, 0.5), '< 10 ms', p50 < 10);
  row('run stored -> webhook arrived, p99 (vs bare POST)', fmt(p99), fmt(quantile(base, 0.99)), p99 / quantile(base, 0.99), '< 30 ms', p99 < 30);
  row(`alerts delivered/s, ${CHANNELS} channels (vs fetch loop)`, `${rate.toFixed(0)}/s`, `${baseRate.toFixed(0)}/s`, rate / baseRate, 'ratio >= 0.6', rate / baseRate >= 0.6);
  console.log(`CPU of the process per alert while the alerts went out: ${(cpuMs / ALERTS).toFixed(1)} ms (engine, store, dispatcher and receiver; no goal)`);
  if (scheduled) console.log(`${scheduled} checks ran on their schedule before their trigger: their alerts are not in the latency figures`);
  if (lost) console.log(`lost: ${lost} alerts did not arrive within 10 s`);
} finally {
  await hook.close();
  rmSync(dir, { recursive: true, force: true });
}
