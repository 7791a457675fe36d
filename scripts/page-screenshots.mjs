// Screenshots of a running host's dashboard and status page, as the README shows them:
//   node scripts/page-screenshots.mjs http://localhost:3000 docs/images
// Chromium from PUPPETEER_EXECUTABLE_PATH or /usr/bin/chromium.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const [base = 'http://localhost:3000', out = 'docs/images'] = process.argv.slice(2);
const pages = [
  { path: '/d/example', file: 'dashboard.png', width: 1200 },
  { path: '/s/example', file: 'status-page.png', width: 1000 },
];

mkdirSync(out, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
});
try {
  for (const p of pages) {
    const page = await browser.newPage();
    await page.setViewport({ width: p.width, height: 700 });
    const res = await page.goto(`${base}${p.path}`);
    if (!res?.ok()) throw new Error(`${p.path} answered ${res?.status()}`);
    await page.screenshot({ path: join(out, p.file), fullPage: true });
    console.log(`${join(out, p.file)}`);
  }
} finally {
  await browser.close();
}
