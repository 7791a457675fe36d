/// <reference lib="dom" />
import { createRequire } from 'node:module';
import type { Frame, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type Chromium } from '../src/chromium.js';
import { CHROMIUM, HAS_CHROMIUM, serveSite, type Site } from './support.js';

const { hideSecrets } = createRequire(import.meta.url)('../child/mask.cjs') as {
  hideSecrets(page: Page, secrets: string[]): Promise<{ hidden: boolean; restore(): Promise<void> }>;
};

const SECRET = 'tok-9Zq/+w';
const ENCODED = encodeURIComponent(SECRET);
const BASE64 = Buffer.from(SECRET).toString('base64');

/** Everything a frame shows: its text, its fields' values, and the text of its shadow roots, closed ones included. */
const shown = (frame: Frame) => frame.evaluate(() => {
  const parts: string[] = [];
  const visit = (root: Document | ShadowRoot) => {
    parts.push(root instanceof Document ? root.documentElement.innerText : root.textContent ?? '');
    root.querySelectorAll('input, textarea').forEach((el) => parts.push((el as HTMLInputElement).value));
    root.querySelectorAll('*').forEach((el) => el.shadowRoot && visit(el.shadowRoot));
  };
  visit(document);
  const closed = (window as unknown as { closedRoot?: ShadowRoot }).closedRoot;
  if (closed) visit(closed);
  return parts.join('\n');
});

describe.runIf(HAS_CHROMIUM)('hiding secrets for a screenshot', () => {
  let chromium: Chromium;
  let site: Site;
  let other: Site;

  beforeAll(async () => {
    chromium = await launchChromium({ executablePath: CHROMIUM, args: ['--no-sandbox'], viewport: null, startTimeoutMs: 30_000 });
    // Served from another site (localhost rather than 127.0.0.1), the frame runs in a renderer of its own.
    other = await serveSite({ '/frame': `<!doctype html><title>f</title><p>cross-site ${SECRET}</p><input value="${BASE64}">` });
    const crossSite = other.url.replace('127.0.0.1', 'localhost');
    site = await serveSite({
      '/': `<!doctype html><title>secrets</title>
<p id="plain">token ${SECRET} and ${ENCODED}</p>
<input id="field" value="${SECRET}"><textarea>${BASE64}</textarea>
<div id="open"></div><div id="closed"></div>
<iframe id="same" srcdoc="<p>same-origin ${SECRET}</p>"></iframe>
<iframe id="cross" src="${crossSite}/frame"></iframe>
<script>
const open = document.getElementById('open').attachShadow({ mode: 'open' });
open.innerHTML = '<span>open shadow ${SECRET}</span><input value="${SECRET}">';
window.closedRoot = document.getElementById('closed').attachShadow({ mode: 'closed' });
window.closedRoot.innerHTML = '<b>closed shadow ${SECRET}</b>';
</script>`,
    });
  });
  afterAll(async () => {
    await chromium.browser.close().catch(() => {});
    chromium.kill();
    await site.close();
    await other.close();
  });

  it('hides every form of a secret in the document, fields, shadow roots (open and closed) and frames, then shows them again', async () => {
    const context = await chromium.browser.createBrowserContext();
    try {
      const page = await context.newPage();
      await page.goto(`${site.url}/`, { waitUntil: 'load' });
      const frames = page.frames();
      expect(frames).toHaveLength(3);
      expect(page.frames().some((f) => f.url().startsWith('http://localhost:'))).toBe(true);
      const before = (await Promise.all(frames.map(shown))).join('\n');
      for (const text of [`token ${SECRET}`, ENCODED, `open shadow ${SECRET}`, `closed shadow ${SECRET}`, `same-origin ${SECRET}`, `cross-site ${SECRET}`, BASE64]) {
        expect(before).toContain(text);
      }

      const masking = await hideSecrets(page, [SECRET]);
      expect(masking.hidden).toBe(true);
      const during = (await Promise.all(frames.map(shown))).join('\n');
      for (const form of [SECRET, ENCODED, BASE64]) expect(during).not.toContain(form);
      expect(during).toContain('closed shadow ********');
      expect(during).toContain('cross-site ********');

      await masking.restore();
      const after = (await Promise.all(frames.map(shown))).join('\n');
      expect(after).toBe(before);
    } finally {
      await context.close();
    }
  });

  it('shows the page again when one of its frames went away while it was masked', async () => {
    const context = await chromium.browser.createBrowserContext();
    try {
      const page = await context.newPage();
      await page.goto(`${site.url}/`, { waitUntil: 'load' });
      const masking = await hideSecrets(page, [SECRET]);
      expect(masking.hidden).toBe(true);
      await page.evaluate(() => document.getElementById('same')!.remove());
      expect(page.frames().length).toBe(2);

      await expect(masking.restore()).resolves.toBeUndefined();
      expect(await shown(page.mainFrame())).toContain(`token ${SECRET}`);
    } finally {
      await context.close();
    }
  });

  it('leaves a page without secrets as it is', async () => {
    const context = await chromium.browser.createBrowserContext();
    try {
      const page = await context.newPage();
      await page.goto(`${site.url}/`);
      const masking = await hideSecrets(page, ['ab', '']);
      expect(masking.hidden).toBe(true);
      expect(await shown(page.mainFrame())).toContain(`token ${SECRET}`);
    } finally {
      await context.close();
    }
  });
});
