/// <reference lib="dom" />
import dgram from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { targetPolicy, type CertificateProbeOptions, type RunResult } from '@vigil/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunner, type BrowserRunner, type RefusedTarget } from '../src/index.js';
import { browserJob, CHROMIUM_BUILDS, serveSite, type BrowserJobOptions, type Site } from './support.js';

const strict = targetPolicy({ refuseInternalAddresses: true });
const loopbackAllowed = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8'] });
/** 127.0.0.1 allowed, the rest of loopback (127.0.0.2) refused. */
const only127001 = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1/32'] });
const signal = () => new AbortController().signal;

function expectRefused(result: RunResult, text: RegExp) {
  expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
  expect(result.errorMessage).toMatch(text);
  expect(result.details).toMatchObject({ errorCode: 'ETARGETPOLICY' });
}
/** The pages a server was asked for, without the favicon Chromium may ask for besides. */
const pages = (site: Site) => site.requests.filter((path) => path !== '/favicon.ico');
const logsOf = (result: RunResult) => ((result.details?.logs ?? []) as { text: string }[]).map((l) => l.text);
const refusedTargets = (result: RunResult) => (result.details?.refusedTargets ?? []) as RefusedTarget[];

/** A server on 127.0.0.2: loopback, and outside an allow list of 127.0.0.1/32. */
async function serveOn127002(): Promise<Site> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/gif', 'access-control-allow-origin': '*' });
    res.end(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));
  });
  server.listen(0, '127.0.0.2');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(CHROMIUM_BUILDS)('browser runner under a target policy on %s', (executablePath) => {
  let site: Site;
  let other: Site;
  let runner: BrowserRunner;
  beforeAll(async () => {
    site = await serveSite({ '/': '<!doctype html><title>Shop</title><h1>Shop</h1>' });
    other = await serveOn127002();
    site.requests.length = 0;
    runner = browserRunner({ executablePath, poolSize: 1 });
  });
  afterAll(async () => {
    await runner.close();
    await site.close();
    await other.close();
  });
  const run = (options: BrowserJobOptions, r = runner) => r.run(browserJob(options), signal());
  const fresh = () => {
    site.requests.length = 0;
    other.requests.length = 0;
  };

  it('refuses a page on 127.0.0.1 when the policy refuses internal addresses; the server sees no request', async () => {
    fresh();
    const result = await run({ script: `await page.goto('${site.url}/');`, job: { targetPolicy: strict } });
    expectRefused(result, /^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/);
    expect(refusedTargets(result)).toEqual([expect.objectContaining({ source: 'browser', host: '127.0.0.1', address: '127.0.0.1', port: Number(new URL(site.url).port) })]);
    expect(site.requests).toEqual([]);
  });

  it('refuses the name localhost, looked up by the proxy', async () => {
    fresh();
    const url = site.url.replace('127.0.0.1', 'localhost');
    const result = await run({ script: `await page.goto('${url}/');`, job: { targetPolicy: strict } });
    expectRefused(result, /^The target policy refused "localhost" \((127\.0\.0\.1|::1)\): .* is a loopback address/);
    expect(site.requests).toEqual([]);
  });

  it('fails the run even when the script catches the navigation error', async () => {
    fresh();
    const result = await run({
      script: `try { await page.goto('${site.url}/'); } catch (err) { console.log('caught', err.message); }`,
      job: { targetPolicy: strict },
    });
    expectRefused(result, /^The target policy refused 127\.0\.0\.1/);
    expect(site.requests).toEqual([]);
  });

  it('reaches 127.0.0.1 when the policy allows 127.0.0.0/8, and still refuses ::1', async () => {
    fresh();
    const result = await run({ script: `await page.goto('${site.url}/');\nexpect(await page.title()).toBe('Shop');`, job: { targetPolicy: loopbackAllowed } });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(result.details?.refusedTargets).toBeUndefined();
    expect(pages(site)).toEqual(['/']);
    // The same policy still refuses what it does not allow: ::1 is outside 127.0.0.0/8.
    const v6 = await run({ script: `await page.goto('http://[::1]:${new URL(site.url).port}/');`, job: { targetPolicy: loopbackAllowed } });
    expectRefused(v6, /^The target policy refused ::1: ::1 is a loopback address \(::1\/128\)/);
  });

  it('fails a page on an allowed address whose image and fetch go to a refused one, which is never asked', async () => {
    const page = `<!doctype html><title>Mixed</title><img id="pixel" src="${other.url}/pixel.gif">
<script>window.fetched = fetch('${other.url}/api').then(() => 'ok', (err) => String(err));</script>`;
    const mixed = await serveSite({ '/': page });
    try {
      other.requests.length = 0;
      const result = await run({
        script: `await page.goto('${mixed.url}/', { waitUntil: 'load' });
expect(await page.title()).toBe('Mixed');
console.log('fetch in page:', await page.evaluate(() => window.fetched));`,
        job: { targetPolicy: only127001 },
      });
      expectRefused(result, /^The target policy refused 127\.0\.0\.2: 127\.0\.0\.2 is a loopback address/);
      expect(mixed.requests).toContain('/');
      expect(other.requests).toEqual([]);
    } finally {
      await mixed.close();
    }
  });

  it('opens no connection from the script\'s own process (http, fetch), even to an allowed address', async () => {
    fresh();
    const result = await run({
      script: `const http = require('http');
const viaHttp = await new Promise((resolve) => http.get('${site.url}/', () => resolve('answered')).on('error', (err) => resolve(err.code)));
const viaFetch = await fetch('${site.url}/').then(() => 'answered', (err) => err.cause?.code ?? String(err));
console.log(viaHttp, viaFetch);
expect([viaHttp, viaFetch]).toEqual(['ETARGETPOLICY', 'ETARGETPOLICY']);`,
      job: { targetPolicy: loopbackAllowed },
    });
    expectRefused(result, /^The target policy refused the script's own connection to 127\.0\.0\.1:\d+: under a target policy/);
    expect(refusedTargets(result)[0]).toMatchObject({ source: 'script', host: '127.0.0.1' });
    expect(site.requests).toEqual([]);
  });

  it('refuses DNS servers of the script\'s own, also set on a resolver\'s native handle', async () => {
    fresh();
    const result = await run({
      script: `const dns = require('node:dns');
const outcomes = [];
try { dns.setServers(['127.0.0.1']); outcomes.push('set'); } catch (err) { outcomes.push(err.code); }
try { new dns.Resolver()._handle.setServers([[4, '127.0.0.1', 53]]); outcomes.push('set'); } catch (err) { outcomes.push(err.code); }
console.log('dns', outcomes.join(' '));`,
      job: { targetPolicy: loopbackAllowed },
    });
    expect(logsOf(result)).toContain('dns ETARGETPOLICY ETARGETPOLICY');
    expectRefused(result, /^The target policy refused the script's own connection to DNS servers 127\.0\.0\.1: under a target policy/);
    expect(refusedTargets(result).map((t) => t.host)).toEqual(['DNS servers 127.0.0.1', 'DNS servers 4,127.0.0.1,53']);
  });

  it('refuses a connection made on a socket handle directly: process.stdout\'s Pipe, with a request taken through Object.prototype', async () => {
    fresh();
    const dir = mkdtempSync(join(tmpdir(), 'vigil-socket-'));
    const path = join(dir, 'internal.sock');
    let connections = 0;
    const local = net.createServer((c) => { connections++; c.destroy(); });
    await new Promise<void>((resolve) => local.listen(path, resolve));
    try {
      const result = await run({
        script: `// Node assigns oncomplete to each write request it makes: a setter on Object.prototype is handed the request.
let request = null;
Object.defineProperty(Object.prototype, 'oncomplete', {
  configurable: true,
  set(fn) { request ??= this; Object.defineProperty(this, 'oncomplete', { value: fn, writable: true }); },
});
process.stdout.write('x');
await new Promise((resolve) => setTimeout(resolve, 50));
delete Object.prototype.oncomplete;
const Pipe = process.stdout._handle.constructor;
let outcome;
try { new Pipe(0).connect(new request.constructor(), ${JSON.stringify(path)}); outcome = 'connecting'; } catch (err) { outcome = err.code; }
await new Promise((resolve) => setTimeout(resolve, 200));
console.log('pipe', outcome);`,
        job: { targetPolicy: loopbackAllowed },
      });
      expect(logsOf(result)).toContain('pipe ETARGETPOLICY');
      expectRefused(result, /^The target policy refused the script's own connection to /);
      expect(connections).toBe(0);
    } finally {
      local.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a browser context with a proxy of the script\'s own', async () => {
    fresh();
    const result = await run({
      script: `const direct = await browser.createBrowserContext({ proxyServer: 'direct://' });
const other = await direct.newPage();
await other.goto('${site.url}/');`,
      job: { targetPolicy: strict },
    });
    expect(result).toMatchObject({ hasFailures: true });
    expect(result.errorMessage).toMatch(/Target\.createBrowserContext is not available to check scripts: the browser's traffic goes through the host's target policy/);
    expect(site.requests).toEqual([]);
  });

  it('sends no WebRTC UDP of its own to an internal address', async () => {
    const socket = dgram.createSocket('udp4');
    const packets: string[] = [];
    socket.on('message', (_m, from) => packets.push(from.address));
    socket.bind(0, '127.0.0.1');
    await once(socket, 'listening');
    const { port } = socket.address();
    try {
      const result = await run({
        script: `await page.goto('${site.url}/');
await page.evaluate(async (port) => {
  const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:' + port }] });
  pc.createDataChannel('x');
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => setTimeout(resolve, 1500));
  pc.close();
}, ${port});`,
        job: { targetPolicy: loopbackAllowed },
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
      expect(packets).toEqual([]);
    } finally {
      socket.close();
    }
  });

  describe('without a policy', () => {
    // A name only Chromium's own resolver knows: reached only when the browser goes direct, not through the proxy.
    let open: BrowserRunner;
    beforeAll(() => {
      open = browserRunner({ executablePath, poolSize: 1, args: ['--host-resolver-rules=MAP shop.vigil.test 127.0.0.1'] });
    });
    afterAll(() => open.close());

    it('launches browsers as before (no proxy): pages and the script\'s own calls reach 127.0.0.1', async () => {
      fresh();
      const url = site.url.replace('127.0.0.1', 'shop.vigil.test');
      for (const policy of [undefined, targetPolicy()]) {
        const result = await run({
          script: `await page.goto('${url}/');
expect(await page.title()).toBe('Shop');
expect((await fetch('${site.url}/')).status).toBe(200);`,
          job: policy ? { targetPolicy: policy } : {},
        }, open);
        expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
        expect(result.details?.refusedTargets).toBeUndefined();
      }
      expect(pages(site)).toEqual(['/', '/', '/', '/']);
    });

    it('puts its browsers behind the proxy from the first job whose policy refuses internal addresses', async () => {
      fresh();
      const result = await run({ script: `await page.goto('${site.url}/');`, job: { targetPolicy: strict } }, open);
      expectRefused(result, /^The target policy refused 127\.0\.0\.1/);
      expect(site.requests).toEqual([]);
    });
  });

  it('holds every run to the runner\'s own targetPolicy option', async () => {
    const own = browserRunner({ executablePath, poolSize: 1, targetPolicy: { refuseInternalAddresses: true } });
    try {
      fresh();
      const result = await run({ script: `await page.goto('${site.url}/');` }, own);
      expectRefused(result, /^The target policy refused 127\.0\.0\.1/);
      expect(site.requests).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('reads sslCheckDomain\'s certificate through the probe only at an address the policy checked', async () => {
    // The probe records what it is asked; whether it connects is the probe's (alert-channels tests it).
    const asked: (CertificateProbeOptions | undefined)[] = [];
    const withProbe = browserRunner({
      executablePath, poolSize: 1,
      certificateProbe: {
        expiresAt: async (_host, _port, _signal, options) => {
          asked.push(options);
          return new Date(Date.now() + 30.5 * 86_400_000);
        },
      },
    });
    try {
      const job = (policy: typeof strict) => ({ script: 'console.log("no page")', check: { sslCheckDomain: 'localhost' }, job: { targetPolicy: policy } });
      const refused = await withProbe.run(browserJob(job(strict)), signal());
      expect(refused.sslDaysRemaining).toBeNull();
      expect(refused.details?.ssl).toMatchObject({ domain: 'localhost', daysRemaining: null, error: expect.stringMatching(/^The certificate of localhost was not read: The target policy refused "localhost"/) });
      expect(asked).toEqual([]);
      const allowed = await withProbe.run(browserJob(job(targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8', '::1'] }))), signal());
      expect(allowed.sslDaysRemaining).toBe(30);
      expect(asked).toEqual([{ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) }]);
    } finally {
      await withProbe.close();
    }
  });
});
