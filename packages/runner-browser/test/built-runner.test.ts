import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserJob, HAS_CHROMIUM, serveSite, type Site } from './support.js';

// The other tests run the sources, whose script processes load child/worker.cjs and its modules
// from node_modules; the built runner runs the bundle (dist/script-worker.cjs) with a code cache.
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const BUILT = existsSync(join(dist, 'index.mjs')) && existsSync(join(dist, 'script-worker.cjs'));

const PAGE = `<!doctype html><title>Shop</title><h1 id="title">Welcome</h1>
<button id="add" onclick="document.getElementById('title').textContent = 'Added to cart'">Add</button>`;

describe.runIf(HAS_CHROMIUM && BUILT)('the built runner (dist, after npm run build)', () => {
  let site: Site;
  let runner: ReturnType<typeof import('../src/index.js')['browserRunner']>;
  const signal = () => new AbortController().signal;
  beforeAll(async () => {
    site = await serveSite({ '/': PAGE });
    const built = (await import(pathToFileURL(join(dist, 'index.mjs')).href)) as typeof import('../src/index.js');
    runner = built.browserRunner({ poolSize: 1, screenshotOnFailure: false });
  });
  afterAll(async () => {
    await runner?.close();
    await site?.close();
  });

  it('runs scripts with the bundled puppeteer and expect, before and after the code cache is made', async () => {
    const script = `await page.goto('${site.url}/');
await page.click('#add');
expect(await page.$eval('#title', (el) => el.textContent)).toBe('Added to cart');`;
    for (let i = 0; i < 3; i++) {
      const result = await runner.run(browserJob({ script }), signal());
      expect(result.errorMessage).toBeNull();
    }
    const failed = await runner.run(browserJob({ script: `await page.goto('${site.url}/');\nexpect(await page.title()).toBe('Cart');` }), signal());
    expect(failed).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(failed.errorMessage).toContain('Expected: "Cart"');
  });

  it('keeps a script to its own folder and environment, without process tools', async () => {
    const result = await runner.run(browserJob({
      script: `const fs = require('node:fs');
fs.writeFileSync('note.txt', 'mine');
expect(fs.readFileSync('note.txt', 'utf8')).toBe('mine');
expect(Object.keys(process.env)).toEqual(['CUSTOMER']);
for (const file of ['/etc/hostname', ${JSON.stringify(join(dist, 'index.mjs'))}]) {
  expect(() => fs.readFileSync(file)).toThrow(expect.objectContaining({ code: 'ERR_ACCESS_DENIED' }));
}
expect(() => require('node:child_process')).toThrow("require('node:child_process') is not available to check scripts");
expect([process.kill, process._debugProcess]).toEqual([undefined, undefined]);
const own = await require('puppeteer').launch();
expect(await own.pages()).toHaveLength(1);`,
      job: { environment: { CUSTOMER: 'Ada' } },
    }), signal());
    expect(result.errorMessage).toBeNull();
    // The bundle connects with puppeteer's browser half and loads the rest when a script asks for
    // it: puppeteer's Node exports are there, and a file path given to page.pdf is written.
    const whole = await runner.run(browserJob({
      script: `await page.goto('${site.url}/');
await page.pdf({ path: 'page.pdf' });
expect(require('node:fs').readFileSync('page.pdf').subarray(0, 5).toString()).toBe('%PDF-');
const puppeteer = require('puppeteer');
expect(puppeteer.KnownDevices['iPhone 13'].viewport.width).toBe(390);
expect(typeof puppeteer.executablePath).toBe('function');`,
    }), signal());
    expect(whole.errorMessage).toBeNull();
    const exited = await runner.run(browserJob({ script: 'process.exit(0);' }), signal());
    expect(exited.errorMessage).toContain('may not end its process');
  });
});
