// Browser checks per minute of @vigil/runner-browser with its pool (browsers reused, each run in a
// fresh incognito context and a fresh script process prepared while the browser waits), beside a
// launch-a-browser-per-run baseline in the same run: the same runner with maxRunsPerBrowser 1, so
// everything but the pool is equal (the script's own process, recording, clean-up). Both keep
// POOL runs in flight. The script opens a local page, clicks a button and asserts on the text.
// Overhead is a run's wall time minus its script time (what Vigil adds around the user's code).
// Two loads: back to back (the most runs per minute two browsers give), and spaced (a run, then
// SPACED_GAP_MS idle, as scheduled checks come), where the pool has the next run prepared.
// Back to back is bound by CPU (Chromium's context and renderer, the script's process), so the
// load average is printed too: other work on the machine takes from both modes. A third row,
// Chromium alone (puppeteer in this process, the same page in fresh contexts, nothing of Vigil's),
// is the ceiling: what Chromium itself costs per run, which no pool can go under.
// Each Chromium build here is measured: Debian's chromium, and its headless shell where installed.
import { once } from 'node:events';
import http from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { browserCheckFixture, runJobFixture } from '@vigil/core/testing';

const POOL = Number(process.env.BENCH_POOL ?? 2);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 20_000);
const SPACED_RUNS = Number(process.env.BENCH_SPACED_RUNS ?? 8);
const SPACED_GAP_MS = Number(process.env.BENCH_SPACED_GAP_MS ?? 1_000);
const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
// Debian's chromium-headless-shell, measured as well where it is installed: a lighter build.
const HEADLESS_SHELL = process.env.VIGIL_HEADLESS_SHELL ?? '/usr/bin/chromium-headless-shell';

const PAGE = `<!doctype html><title>Shop</title><h1 id="t">Welcome</h1>
<button onclick="document.getElementById('t').textContent='Added to cart'">Add</button>`;

async function serve() {
  const server = http.createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    } else {
      res.writeHead(204);
      res.end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

function job(url) {
  const check = {
    ...browserCheckFixture(),
    accountId: 'bench',
    script: `await page.goto(${JSON.stringify(url)});
await page.click('button');
expect(await page.$eval('#t', (e) => e.textContent)).toBe('Added to cart');`,
  };
  return runJobFixture(check, { accountId: 'bench', timeoutMs: 60_000 });
}

/** One run of the check; it throws with the run's error message when the run does not pass, so a failure never counts as a run or as overhead. */
async function passingRun(runner, url) {
  const result = await runner.run(job(url), new AbortController().signal);
  if (result.hasFailures || result.hasErrors) throw new Error(`a bench run failed: ${result.errorMessage}`);
  return result;
}

/**
 * CPU time (ms) of this process and every process under it, running or ended (Linux: /proc), or
 * null elsewhere. On a shared machine the CPU a run costs is steadier than runs per minute, which
 * other work on the machine lowers: back to back the runs are bound by CPU, so the share of the
 * ceiling is also printed as Chromium alone's CPU per run over the pool's.
 */
function cpuOfTree() {
  if (process.platform !== 'linux') return null;
  const tick = 10; // ms: Linux reports USER_HZ = 100
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Own user and system time, and that of its children it has waited for.
      all.push({ pid: Number(name), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * tick });
    } catch {
      // Ended meanwhile.
    }
  }
  const children = new Map();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  let total = 0;
  const walk = (pid) => {
    for (const child of children.get(pid) ?? []) {
      total += child.cpu;
      walk(child.pid);
    }
  };
  total += all.find((p) => p.pid === process.pid)?.cpu ?? 0;
  walk(process.pid);
  return total;
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];

/** Runs checks with POOL in flight for ROUND_MS; answers runs per minute and the overheads seen. */
async function measure(runner, url) {
  for (let i = 0; i < POOL; i++) await passingRun(runner, url); // warm up
  const overheads = [];
  let count = 0;
  const cpuBefore = cpuOfTree();
  const started = performance.now();
  const until = started + ROUND_MS;
  await Promise.all(Array.from({ length: POOL }, async () => {
    while (performance.now() < until) {
      const t = performance.now();
      const result = await passingRun(runner, url);
      overheads.push(performance.now() - t - result.responseTime);
      count++;
    }
  }));
  const perMinute = count / ((performance.now() - started) / 60_000);
  const cpuPerRun = cpuBefore === null ? null : (cpuOfTree() - cpuBefore) / count;
  const spaced = [];
  for (let i = 0; i < SPACED_RUNS; i++) {
    await new Promise((resolve) => setTimeout(resolve, SPACED_GAP_MS));
    const t = performance.now();
    const result = await passingRun(runner, url);
    spaced.push(performance.now() - t - result.responseTime);
  }
  await runner.close();
  return { perMinute, count, cpuPerRun, p50: quantile(overheads, 0.5), p95: quantile(overheads, 0.95), spaced: quantile(spaced, 0.5) };
}

/**
 * The ceiling no pool can pass: Chromium alone, POOL browsers kept open and driven by puppeteer in
 * this process, each run the same page in a fresh incognito context, with no script process, no
 * recording and no clean-up of Vigil's. Its ratio to the baseline is the most any pool reaches here.
 */
async function measureChromiumAlone(executablePath, url) {
  const { default: puppeteer } = await import('puppeteer-core');
  const args = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-quic', '--no-first-run', '--mute-audio', '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup'];
  const browsers = await Promise.all(Array.from({ length: POOL }, () => puppeteer.launch({ executablePath, pipe: true, args })));
  const once = async (browser) => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.click('button');
    if ((await page.$eval('#t', (e) => e.textContent)) !== 'Added to cart') throw new Error('the page did not change');
    await context.close();
  };
  for (const browser of browsers) await once(browser); // warm up
  let count = 0;
  const cpuBefore = cpuOfTree();
  const started = performance.now();
  const until = started + ROUND_MS;
  await Promise.all(browsers.map(async (browser) => {
    while (performance.now() < until) {
      await once(browser);
      count++;
    }
  }));
  const perMinute = count / ((performance.now() - started) / 60_000);
  const cpuPerRun = cpuBefore === null ? null : (cpuOfTree() - cpuBefore) / count;
  await Promise.all(browsers.map((browser) => browser.close()));
  return { perMinute, count, cpuPerRun };
}

async function main() {
  const { browserRunner } = await import('@vigil/runner-browser');
  const { server, url } = await serve();
  const builds = [...new Set([CHROMIUM, HEADLESS_SHELL])].filter((build) => build === CHROMIUM || existsSync(build));
  const f = (x) => x.toFixed(0);
  for (const executablePath of builds) {
    const loadBefore = loadavg()[0];
    const options = { executablePath, poolSize: POOL, screenshotOnFailure: false, ...(process.env.BENCH_AHEAD ? { prepareAhead: Number(process.env.BENCH_AHEAD) } : {}) };
    const baseline = await measure(browserRunner({ ...options, maxRunsPerBrowser: 1 }), url);
    const pooled = await measure(browserRunner(options), url);
    const alone = await measureChromiumAlone(executablePath, url);
    console.log(`\n${executablePath}: browser checks, ${POOL} in flight, ${ROUND_MS / 1000} s each (runs/min; overhead = wall - script time, ms); ${cpus().length} cores, load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`);
    console.log('                          back to back                                spaced by ' + SPACED_GAP_MS + ' ms');
    console.log('mode                      runs/min   runs   overhead p50   overhead p95   overhead p50');
    const row = (name, m) => console.log(`${name.padEnd(24)}  ${f(m.perMinute).padStart(8)}   ${String(m.count).padStart(4)}   ${f(m.p50).padStart(12)}   ${f(m.p95).padStart(12)}   ${f(m.spaced).padStart(12)}`);
    row('launch a browser per run', baseline);
    row('pool (vigil)', pooled);
    console.log(`${'chromium alone (ceiling)'.padEnd(24)}  ${f(alone.perMinute).padStart(8)}   ${String(alone.count).padStart(4)}`);
    // The share of the ceiling the pool reaches, against its goal: 0.9 with the whole browser, 0.7 with
    // the headless shell, whose contexts are so cheap that the script's own process weighs more.
    const goal = executablePath === HEADLESS_SHELL && HEADLESS_SHELL !== CHROMIUM ? 0.7 : 0.9;
    const share = pooled.perMinute / alone.perMinute;
    console.log(`share of the ceiling reached (pool / chromium alone): ${share.toFixed(2)}; goal >= ${goal}: ${share >= goal ? 'met' : 'NOT met'}`);
    if (pooled.cpuPerRun !== null && alone.cpuPerRun !== null) {
      const cpuShare = alone.cpuPerRun / pooled.cpuPerRun;
      console.log(`CPU per run, all processes (ms): pool ${f(pooled.cpuPerRun)}, chromium alone ${f(alone.cpuPerRun)}; share of the ceiling by CPU: ${cpuShare.toFixed(2)}; goal >= ${goal}: ${cpuShare >= goal ? 'met' : 'NOT met'}`);
    }
    console.log(`ratio pool/baseline: ${(pooled.perMinute / baseline.perMinute).toFixed(2)}x runs/min back to back (ceiling: chromium alone/baseline ${(alone.perMinute / baseline.perMinute).toFixed(2)}x); overhead p50 ${f(pooled.p50)} ms back to back, ${f(pooled.spaced)} ms spaced (baseline ${f(baseline.spaced)} ms); target < 300 ms`);
  }
  server.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
