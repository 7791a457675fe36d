/**
 * A Playwright check suite end to end, as a host runs it: made through the public HTTP API on
 * SQLite and PostgreSQL with the Playwright runner registered (Debian's Chromium, no download), its
 * two-file suite run on schedule against a shop on 127.0.0.1; every test read back with the run;
 * a failing test alerts a webhook with a screenshot kept, then recovers; a project's test session
 * fills the project's test-session error groups with the failed test's pwtMetadata; analytics read
 * the suite's duration.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alertTransports } from '@vigil/alert-channels';
import { directoryArtifacts, playwrightRunner } from '@vigil/runner-playwright';
import { CHROMIUM, HAS_CHROMIUM } from '../packages/runner-playwright/test/support.js';
import { advanceUntil, engineTrouble, startedProcess, STORES, webhookServer } from './support/engine-stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The shop's home page; its cart shows `state.items` items. */
async function shop(state: { items: number }) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(req.url === '/cart' ? `<h1>Cart</h1><p id="count">${state.items}</p>` : '<h1>Shop</h1><a href="/cart">cart</a>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

const FILES = {
  'playwright.config.ts': "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: 'tests', projects: [{ name: 'desktop' }] });\n",
  'tests/home.spec.ts': `import { expect, test } from '@playwright/test';
test('shows the shop', async ({ page }) => {
  await page.goto(process.env.SHOP_URL + '/');
  await expect(page.locator('h1')).toHaveText('Shop');
});
`,
  'tests/cart.spec.ts': `import { expect, test } from '@playwright/test';
test.describe('Cart', () => {
  test('holds two items', async ({ page }) => {
    await page.goto(process.env.SHOP_URL + '/cart');
    await expect(page.locator('#count')).toHaveText('2', { timeout: 2000 });
  });
});
`,
};

describe.skipIf(!HAS_CHROMIUM).each(STORES)('a Playwright check suite made through the HTTP API (%s)', (kind) => {
  it('runs on schedule, records every test, alerts on a failing test with its screenshot and recovers, and fills a session\'s pwtMetadata', async () => {
    const state = { items: 2 };
    const site = await shop(state);
    cleanups.push(site.close);
    const hook = await webhookServer();
    cleanups.push(() => hook.close());
    const dir = mkdtempSync(join(tmpdir(), 'vigil-pw-e2e-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const runner = playwrightRunner({ executablePath: CHROMIUM, artifacts: directoryArtifacts(dir) });
    cleanups.push(() => runner.close!());
    const { vigil, lines, clock, api, close } = await startedProcess(kind, 'vigil_playwright_e2e', { runners: [runner], transports: alertTransports() });
    cleanups.push(close);

    const { body: channel } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
    const { body: check } = await api('post', '/v1/checks/playwright', {
      name: 'shop suite', frequency: 1, doubleCheck: false, files: FILES, globalTimeout: 60_000,
      environmentVariables: [{ key: 'SHOP_URL', value: site.url }],
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    }).expect(201);
    expect(check).toMatchObject({ checkType: 'PLAYWRIGHT', projects: [], grep: null, globalTimeout: 60_000 });
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}.spec.ts`, 'x']));
    const refused = await api('post', '/v1/checks/playwright', { name: 'big', files: tooMany }).expect(400);
    expect(refused.body.message).toContain('files');

    const results = async () => (await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200)).body as Record<string, any>[];
    const full = async (id: string) => (await api('get', `/v1/check-results/${check.id}/${id}`).expect(200)).body;
    await advanceUntil(clock, [vigil], async () => (await results()).length > 0);
    const first = await full((await results())[0]!.id);
    expect(first).toMatchObject({ checkType: 'PLAYWRIGHT', hasFailures: false, runSource: 'SCHEDULER' });
    expect(first.details.tests.map((t: any) => [t.file, t.suitePath, t.title, t.project, t.status]).sort()).toEqual([
      ['tests/cart.spec.ts', ['Cart'], 'holds two items', 'desktop', 'passed'],
      ['tests/home.spec.ts', [], 'shows the shop', 'desktop', 'passed'],
    ]);

    state.items = 1;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 0);
    expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
    const failing = await full((await results()).find((r) => r.hasFailures === true)!.id);
    expect(failing.errorMessage).toContain('holds two items');
    const failedTest = failing.details.tests.find((t: any) => t.status === 'failed');
    expect(failedTest.artifacts.some((a: any) => a.contentType === 'image/png' && a.ref)).toBe(true);

    const { body: triggered } = await api('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] }, projectId: 'shop-web' }).expect(201);
    await advanceUntil(clock, [vigil], async () => {
      const { body } = await api('get', `/v1/check-sessions/${triggered.sessions[0].checkSessionId}`).expect(200);
      return body.status === 'FAILED';
    });
    const { body: groups } = await api('get', '/v1/test-session-error-groups/projects/shop-web').expect(200);
    expect(groups.map((g: any) => g.pwtMetadata)).toEqual([[{ projectName: 'desktop', testFile: 'tests/cart.spec.ts', testTitle: 'holds two items', suitePath: ['Cart'] }]]);

    state.items = 2;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 1);
    expect(hook.bodies.map((b) => b.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);

    const { body: analytics } = await api('get', `/v1/analytics/playwright-checks/${check.id}?metrics=availability,responseTime_max`).expect(200);
    const all = (await results()).filter((r) => String(r.startedAt) < analytics.to);
    expect(analytics.series[0].responseTime_max).toBe(Math.max(...all.map((r) => r.responseTime as number)));
    expect(engineTrouble(lines)).toEqual([]);
  }, 120_000);
});
