// Screenshots of a running host's dashboard, status page and console, as the README shows them:
//   node scripts/page-screenshots.mjs http://localhost:3000 docs/images
// The console is signed in to with VIGIL_ACCOUNT_ID and VIGIL_API_KEY, or the account id and key
// the example host keeps in its state directory (VIGIL_STATE_DIR, default .vigil).
// Chromium from PUPPETEER_EXECUTABLE_PATH or /usr/bin/chromium.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const [base = 'http://localhost:3000', out = 'docs/images'] = process.argv.slice(2);
const stateDir = process.env.VIGIL_STATE_DIR ?? '.vigil';
const kept = (file) => (existsSync(join(stateDir, file)) ? readFileSync(join(stateDir, file), 'utf8').trim() : undefined);
const account = process.env.VIGIL_ACCOUNT_ID ?? kept('account-id');
const key = process.env.VIGIL_API_KEY ?? kept('api-key');

const pages = [
  { path: '/d/example', file: 'dashboard.png', width: 1200 },
  { path: '/s/example', file: 'status-page.png', width: 1000 },
];

mkdirSync(out, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
});

/** A screenshot of the page; a long one is cut at `height` pixels. */
async function shoot(page, file, height = Infinity) {
  // Charts draw when they come into view: a full-page shot scrolls them in first.
  await page.evaluate(async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 400) {
      window.scrollTo(0, y);
      await new Promise((r) => requestAnimationFrame(() => r()));
    }
    window.scrollTo(0, 0);
  });
  await new Promise((r) => setTimeout(r, 300));
  const full = await page.evaluate(() => document.documentElement.scrollHeight);
  const width = page.viewport().width;
  await page.screenshot({ path: join(out, file), captureBeyondViewport: true, clip: { x: 0, y: 0, width, height: Math.min(full, height) } });
  console.log(join(out, file));
}

try {
  for (const p of pages) {
    const page = await browser.newPage();
    await page.setViewport({ width: p.width, height: 700 });
    const res = await page.goto(`${base}${p.path}`);
    if (!res?.ok()) throw new Error(`${p.path} answered ${res?.status()}`);
    await shoot(page, p.file);
  }
  if (!account || !key) throw new Error(`no account id and API key for the console: set VIGIL_ACCOUNT_ID and VIGIL_API_KEY, or VIGIL_STATE_DIR`);
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 800 });
  await page.goto(`${base}/console/sign-in`);
  await page.type('#account', account);
  await page.type('#key', key);
  await Promise.all([page.waitForNavigation(), page.click('main form button.primary')]);
  if (new URL(page.url()).pathname !== '/console/') throw new Error(`console sign-in failed at ${page.url()}`);
  await shoot(page, 'console-home.png');
  const failing = (await page.$('[data-state="FAILING"] a')) ?? (await page.$('[data-check] a'));
  if (!failing) throw new Error('the console lists no check');
  await Promise.all([page.waitForNavigation(), failing.click()]);
  await shoot(page, 'console-check.png', 1400);
  await page.goto(`${base}/console/r/check-tcp/new`);
  await shoot(page, 'console-form.png', 1100);
} finally {
  await browser.close();
}
