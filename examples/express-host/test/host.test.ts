import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';

const server = fileURLToPath(new URL('../src/server.mjs', import.meta.url));
const HAS_CHROMIUM = existsSync(process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium');
if (!HAS_CHROMIUM && process.env.VIGIL_REQUIRE_BROWSER) throw new Error('VIGIL_REQUIRE_BROWSER is set but Chromium is missing');
const dir = mkdtempSync(join(tmpdir(), 'vigil-host-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  base: string;
  output: string;
}

/** Starts the example host as a user would (node src/server.mjs) and waits until it listens. */
async function start(env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, [server], {
    cwd: dir,
    env: { PATH: process.env.PATH, PORT: '0', VIGIL_STATE_DIR: join(dir, 'state'), VIGIL_DB: join(dir, 'vigil.sqlite'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/localhost:\d+)/.exec(output);
      if (m) resolve(m[1]!.replace('localhost', '127.0.0.1'));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`host exited with ${code}: ${output}`)));
  });
  return { child, base, get output() { return output; } };
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** Calls the host's Vigil API with the account and key it printed on its first start. */
function client(r: Running): Api {
  const account = /Vigil account: (\S+)/.exec(r.output)![1]!;
  const key = /Vigil API key: (\S+)/.exec(r.output)![1]!;
  const headers = { authorization: `Bearer ${key}`, 'x-service-account': account, 'content-type': 'application/json' };
  return async (method, path, body) => {
    const res = await fetch(`${r.base}/api${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };
}

/** Triggers a session of one check and waits for it to end; answers the final session. */
async function triggerAndWait(api: Api, checkId: string) {
  const t = await api('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
  expect(t.status).toBe(201);
  const done = await api('GET', `/v1/check-sessions/${t.body.sessions[0].checkSessionId}/completion?maxWaitSeconds=30`);
  expect(done.status).toBe(200);
  return done.body;
}

async function stop(r: Running): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => r.child.once('exit', (code) => resolve(code)));
  r.child.kill('SIGTERM');
  return exited;
}

describe('example express host', () => {
  it('serves its own routes and the Vigil API with the account and key it prints once', async () => {
    const first = await start();
    try {
      const account = /Vigil account: (\S+)/.exec(first.output)?.[1];
      const key = /Vigil API key: (\S+)/.exec(first.output)?.[1];
      expect(account).toBeTruthy();
      expect(key).toMatch(/^vgl_/);
      const headers = { authorization: `Bearer ${key}`, 'x-service-account': account!, 'content-type': 'application/json' };

      expect(await (await fetch(`${first.base}/orders`)).json()).toEqual([{ id: 1, item: 'coffee' }]);
      const created = await fetch(`${first.base}/api/v1/checks/tcp`, {
        method: 'POST', headers, body: JSON.stringify({ name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } }),
      });
      expect(created.status).toBe(201);
      const check = (await created.json()) as { id: string };
      const statuses = await fetch(`${first.base}/api/v1/check-statuses`, { headers });
      expect(statuses.status).toBe(200);
      // Beside it, the host's own check of its HTTP port, made on the first start.
      expect(((await statuses.json()) as { checkId: string; name: string }[]).map((s) => s.name).sort()).toEqual(['example host: HTTP port', 'orders-db']);
      const unauthorized = await fetch(`${first.base}/api/v1/checks`);
      expect(unauthorized.status).toBe(401);
      expect(readFileSync(join(dir, 'state', 'api-key'), 'utf8')).toBe(key);
    } finally {
      expect(await stop(first)).toBe(0);
    }

    // A restart keeps the data, the account and the key, and prints no new key.
    const second = await start();
    try {
      expect(second.output).not.toContain('Vigil API key:');
      const key = readFileSync(join(dir, 'state', 'api-key'), 'utf8');
      const account = readFileSync(join(dir, 'state', 'account-id'), 'utf8');
      const list = await fetch(`${second.base}/api/v1/checks`, { headers: { authorization: `Bearer ${key}`, 'x-service-account': account } });
      expect(((await list.json()) as { name: string }[]).map((c) => c.name)).toEqual(['example host: HTTP port', 'orders-db']);
    } finally {
      await stop(second);
    }
  });

  it('uses VIGIL_ACCOUNT_ID and VIGIL_API_KEY when they are set', async () => {
    const key = `vgl_${'k'.repeat(40)}`;
    const r = await start({ VIGIL_ACCOUNT_ID: 'acme', VIGIL_API_KEY: key, VIGIL_STATE_DIR: join(dir, 'state-env'), VIGIL_DB: join(dir, 'env.sqlite') });
    try {
      expect(r.output).not.toContain('Vigil API key:');
      const res = await fetch(`${r.base}/api/v1/checks`, { headers: { authorization: `Bearer ${key}`, 'x-service-account': 'acme' } });
      expect(res.status).toBe(200);

      // The console at /console takes the same account id and key.
      const cookieOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const page = await fetch(`${r.base}/console/sign-in`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
      const signIn = await fetch(`${r.base}/console/sign-in`, {
        method: 'POST', redirect: 'manual', headers: { cookie: cookieOf(page), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, account: 'acme', key }).toString(),
      });
      expect(signIn.status).toBe(303);
      const home = await fetch(`${r.base}/console/`, { headers: { cookie: cookieOf(signIn) } });
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('example host: HTTP port');
    } finally {
      await stop(r);
    }
  });
});

describe('example express host: checks run end to end', () => {
  it('runs a TCP check on demand, then sees it fail, groups the error and queues an alert', async () => {
    const echo = createServer((socket) => socket.on('data', (d) => socket.end(d)));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const port = (echo.address() as AddressInfo).port;
    const state = join(dir, 'state-e2e');
    const db = join(dir, 'e2e.sqlite');
    const r = await start({ VIGIL_STATE_DIR: state, VIGIL_DB: db });
    let receiver: ReturnType<typeof createHttpServer> | undefined;
    try {
      const api = client(r);
      const hooks: { alertType: string; checkId: string; signature: string }[] = [];
      receiver = createHttpServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          const json = JSON.parse(body);
          hooks.push({ alertType: json.ALERT_TYPE, checkId: json.CHECK_ID, signature: String(req.headers['x-vigil-signature']) });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
      const channel = await api('POST', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hookUrl, webhookSecret: 'shh' } });
      expect(channel.status).toBe(201);
      expect(channel.body.config.webhookSecret).toBe('********');
      const check = await api('POST', '/v1/checks/tcp', {
        name: 'echo', request: { hostname: '127.0.0.1', port, data: 'hello', assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'hello' }] },
        frequency: 60,
      });
      expect(check.status).toBe(201);
      const id = check.body.id as string;

      const trigger = () => triggerAndWait(api, id);
      const passed = await trigger();
      expect(passed).toMatchObject({ status: 'PASSED', runSource: 'TRIGGER_API' });
      expect(passed.results).toHaveLength(1);
      const results = await api('GET', `/v1/check-results/${id}`);
      expect(results.body[0]).toMatchObject({ hasFailures: false, runLocation: 'us-east-1' });
      expect(results.body[0].phases.total).toBeGreaterThanOrEqual(0);
      const status = await api('GET', `/v1/check-statuses/${id}`);
      expect(status.body).toMatchObject({ hasFailures: false, lastCheckRunId: results.body[0].id });
      const analytics = await api('GET', `/v1/analytics/tcp-checks/${id}?metrics=total_avg,availability`);
      expect(analytics.status).toBe(200);
      expect(JSON.stringify(analytics.body)).toContain('availability');

      // The target goes away: the next run fails, its error is grouped and an alert is queued.
      await new Promise<void>((resolve) => echo.close(() => resolve()));
      const failed = await trigger();
      expect(failed.status).toBe('FAILED');
      expect(failed.results[0].errorMessage).toMatch(/refused/i);
      const groups = await api('GET', `/v1/error-groups/checks/${id}`);
      expect(groups.body).toHaveLength(1);
      expect((await api('GET', `/v1/check-statuses/${id}`)).body.hasFailures).toBe(true);
      // The failure alert reaches the webhook, signed, and the channel's delivery log says so.
      for (let i = 0; i < 200 && hooks.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(hooks.map((h) => [h.alertType, h.checkId])).toEqual([['ALERT_FAILURE', id]]);
      expect(hooks[0]!.signature).toMatch(/^[0-9a-f]{64}$/);
      const log = await api('GET', `/v1/alert-channels/${channel.body.id}/deliveries`);
      expect(log.body.map((l: { ok: boolean }) => l.ok)).toEqual([true]);
    } finally {
      echo.close();
      receiver?.close();
      await stop(r);
    }
  }, 60_000);

  it('runs an API check of its own /orders route on demand, with its JSON asserted and its phases timed', async () => {
    const r = await start({ VIGIL_STATE_DIR: join(dir, 'state-api'), VIGIL_DB: join(dir, 'api.sqlite') });
    try {
      const api = client(r);
      const created = await api('POST', '/v1/checks/api', {
        name: 'orders API', frequency: 60,
        request: { url: `${r.base}/orders`, assertions: [{ source: 'JSON_BODY', comparison: 'EQUALS', property: '$[0].item', target: 'coffee' }] },
      });
      expect(created.status).toBe(201);
      expect((await triggerAndWait(api, created.body.id)).status).toBe('PASSED');
      const [result] = (await api('GET', `/v1/check-results/${created.body.id}`)).body;
      expect(result).toMatchObject({ checkType: 'API', statusCode: 200, hasFailures: false });
      expect(result.phases.total).toBe(result.responseTime);
    } finally {
      await stop(r);
    }
  }, 60_000);

  it('serves a dashboard and a status page of its own checks; a failing check opens an incident there', async () => {
    const r = await start({ VIGIL_STATE_DIR: join(dir, 'state-pages'), VIGIL_DB: join(dir, 'pages.sqlite') });
    try {
      expect(r.output).toContain('/d/example');
      const api = client(r);
      const own = (await api('GET', '/v1/checks')).body.find((c: { name: string }) => c.name === 'example host: HTTP port');
      expect(own.request.port).toBe(Number(new URL(r.base).port));
      expect((await triggerAndWait(api, own.id)).status).toBe('PASSED');
      const dashboard = await fetch(`${r.base}/d/example`);
      expect(dashboard.status).toBe(200);
      const html = await dashboard.text();
      expect(html).toMatch(new RegExp(`data-check="${own.id}" data-state="PASSING"`));
      expect(html).toContain('example host: HTTP port');

      // A check of a closed port that names the page's service fails and opens an incident on it.
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const serviceId = (await api('GET', '/v1/status-pages/services')).body.entries[0].id;
      const down = await api('POST', '/v1/checks/tcp', {
        name: 'orders-db', request: { hostname: '127.0.0.1', port }, frequency: 60,
        triggerIncident: { serviceId, name: 'Orders database down', description: 'Orders cannot be stored', notifySubscribers: false },
      });
      expect(down.status).toBe(201);
      expect((await triggerAndWait(api, down.body.id)).status).toBe('FAILED');
      const status = await (await fetch(`${r.base}/s/example`)).text();
      expect(status).toContain('data-overall="DISRUPTED"');
      expect(status).toContain('Orders database down');
      expect(status).toContain('Orders cannot be stored');
      const badge = await fetch(`${r.base}/badges/checks/${down.body.id}`);
      expect(badge.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await badge.text()).toContain('failing');
    } finally {
      await stop(r);
    }
  }, 60_000);

  it.runIf(HAS_CHROMIUM)('runs a browser check created and edited through the API, and keeps its failure screenshot', async () => {
    const state = join(dir, 'state-browser');
    const r = await start({ VIGIL_STATE_DIR: state, VIGIL_DB: join(dir, 'browser.sqlite') });
    try {
      const api = client(r);
      const broken = await api('POST', '/v1/checks/browser', { name: 'home page', script: 'await page.goto(' });
      expect(broken.status).toBe(400);
      expect(broken.body.validation.keys).toEqual(['script']);

      // The script visits the host's own home page, whose address it reads from a variable.
      const created = await api('POST', '/v1/checks/browser', {
        name: 'home page',
        frequency: 60,
        script: "await page.goto(process.env.HOME_URL);\nexpect(await page.content()).toContain('Example host');",
        environmentVariables: [{ key: 'HOME_URL', value: `${r.base}/` }],
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const trigger = () => triggerAndWait(api, id);
      expect(await trigger()).toMatchObject({ status: 'PASSED', checkType: 'BROWSER' });
      const [passed] = (await api('GET', `/v1/check-results/${id}`)).body;
      expect(passed).toMatchObject({ hasFailures: false, checkType: 'BROWSER' });
      expect(passed.details.webVitals[0]).toMatchObject({ url: `${r.base}/`, status: 200 });
      expect(passed.details.runtime.chromium).toMatch(/Chrome\//);

      const edited = await api('PUT', `/v1/checks/browser/${id}`, {
        script: "await page.goto(process.env.HOME_URL);\nexpect(await page.title()).toBe('Orders');",
      });
      expect(edited.status).toBe(200);
      expect(await trigger()).toMatchObject({ status: 'FAILED' });
      const [failed] = (await api('GET', `/v1/check-results/${id}?limit=1`)).body;
      expect(failed.errorMessage).toContain('Expected: "Orders"');
      expect(failed.details.artifacts).toEqual([expect.objectContaining({ name: '01-failure.png', contentType: 'image/png' })]);
      const png = readFileSync(join(state, 'artifacts', failed.details.artifacts[0].ref));
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect((await api('GET', `/v1/check-statuses/${id}`)).body).toMatchObject({ hasFailures: true, lastCheckRunId: failed.id });
    } finally {
      expect(await stop(r)).toBe(0);
    }
  }, 90_000);
});
