import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, type Chromium } from '../src/chromium.js';
import type { GateClient } from '../src/devtools-gate.js';
import { CHROMIUM, HAS_CHROMIUM } from './support.js';

interface Answer {
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

/** A raw DevTools client through the gate, as a script's process is: commands by id, events kept. */
class RawClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (a: Answer) => void>();
  readonly events: { method: string; params: Record<string, any>; sessionId?: string }[] = [];
  readonly client: GateClient;

  constructor(chromium: Chromium, contextId: string, dir: string) {
    this.client = chromium.gate.client({
      contextId,
      dir,
      send: (data) => {
        const message = JSON.parse(data);
        if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
        else this.events.push(message);
      },
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Answer> {
    const id = this.nextId++;
    const answer = new Promise<Answer>((resolve) => this.waiting.set(id, resolve));
    this.client.receive(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }));
    return answer;
  }

  async ok(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, any>> {
    const answer = await this.send(method, params, sessionId);
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result!;
  }
}

const targetId = (page: Page) => (page.target() as unknown as { _targetId: string })._targetId;

describe.runIf(HAS_CHROMIUM)('DevTools gate', () => {
  let chromium: Chromium;
  let dir: string;
  let mine: BrowserContext;
  let other: BrowserContext;
  let otherPage: Page;
  let raw: RawClient;

  beforeAll(async () => {
    chromium = await launchChromium({ executablePath: CHROMIUM, args: ['--no-sandbox'], viewport: null, startTimeoutMs: 30_000 });
  });
  afterAll(async () => {
    await chromium.browser.close().catch(() => {});
    chromium.kill();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-gate-test-'));
    mine = await chromium.browser.createBrowserContext();
    other = await chromium.browser.createBrowserContext();
    otherPage = await other.newPage();
    await otherPage.goto('data:text/html,<title>other run</title>');
    raw = new RawClient(chromium, mine.id!, dir);
  });
  afterEach(async () => {
    raw.client.close();
    await mine.close().catch(() => {});
    await other.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs Chromium on a pipe: no DevTools port on its command line', () => {
    // The command lines of the browser's processes (its profile folder is Vigil's).
    const ps = new Set<string>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (cmd.some((a) => a.includes('vigil-chromium-'))) for (const a of cmd) ps.add(a);
      } catch {
        // gone meanwhile
      }
    }
    expect(ps.has('--remote-debugging-pipe')).toBe(true);
    expect([...ps].filter((a) => a.startsWith('--remote-debugging-port'))).toEqual([]);
  });

  it('shows a script its run\'s context and targets alone', async () => {
    const page = await mine.newPage();
    const { browserContextIds } = await raw.ok('Target.getBrowserContexts');
    expect(browserContextIds).toEqual([mine.id]);
    const { targetInfos } = await raw.ok('Target.getTargets');
    const ids = targetInfos.map((t: { targetId: string }) => t.targetId);
    expect(ids).toContain(targetId(page));
    expect(ids).not.toContain(targetId(otherPage));
    expect(targetInfos.every((t: { type: string; browserContextId?: string }) => t.type === 'browser' || t.browserContextId === mine.id)).toBe(true);

    await raw.ok('Target.setDiscoverTargets', { discover: true });
    const created = raw.events.filter((e) => e.method === 'Target.targetCreated').map((e) => e.params.targetInfo);
    expect(created.map((t) => t.targetId)).toContain(targetId(page));
    expect(created.filter((t) => t.type !== 'browser' && t.browserContextId !== mine.id)).toEqual([]);
  });

  it('refuses another run\'s targets, contexts and sessions', async () => {
    const attach = await raw.send('Target.attachToTarget', { targetId: targetId(otherPage), flatten: true });
    expect(attach.error?.message).toBe("Target.attachToTarget is not available to check scripts: that target is not the run's");
    const close = await raw.send('Target.closeTarget', { targetId: targetId(otherPage) });
    expect(close.error?.message).toContain("that target is not the run's");
    const dispose = await raw.send('Target.disposeBrowserContext', { browserContextId: other.id });
    expect(dispose.error?.message).toContain("that browser context is not the run's");
    const hostSession = (otherPage as unknown as { _client(): { id(): string } })._client().id();
    const borrowed = await raw.send('Runtime.evaluate', { expression: 'document.title' }, hostSession);
    expect(borrowed.error?.message).toBe('Session with given id not found.');
    // The other run's page is untouched.
    expect(await otherPage.title()).toBe('other run');
    expect(other.id && (await chromium.browser.browserContexts()).map((c) => c.id)).toContain(other.id);
  });

  it('opens pages in the run\'s context, at http(s), data:, blob: and about: URLs only', async () => {
    const { targetId: made } = await raw.ok('Target.createTarget', { url: 'about:blank' });
    const target = await chromium.browser.waitForTarget((t) => (t as unknown as { _targetId: string })._targetId === made);
    expect(target.browserContext().id).toBe(mine.id);

    const file = await raw.send('Target.createTarget', { url: 'file:///etc/passwd' });
    expect(file.error?.message).toBe('Target.createTarget is not available to check scripts: a check opens http(s), data:, blob: and about: URLs, not file:');
    const { sessionId } = await raw.ok('Target.attachToTarget', { targetId: made, flatten: true });
    for (const url of ['file:///etc/passwd', 'FILE:///etc/hostname', ' chrome://version', 'view-source:http://127.0.0.1/', 'devtools://devtools/bundled/inspector.html']) {
      const answer = await raw.send('Page.navigate', { url }, sessionId);
      expect(answer.error?.message, url).toMatch(/^Page\.navigate is not available to check scripts: a check opens http\(s\), data:, blob: and about: URLs, not /);
    }
    const data = await raw.ok('Page.navigate', { url: 'data:text/html,<title>fine</title>' }, sessionId);
    expect(data.errorText).toBeUndefined();
    expect(data.loaderId).toEqual(expect.any(String));
  });

  it('keeps what a script hands the browser to its run folder: uploads, drops and downloads', async () => {
    const { targetId: made } = await raw.ok('Target.createTarget', { url: 'data:text/html,<input type=file>' });
    const { sessionId } = await raw.ok('Target.attachToTarget', { targetId: made, flatten: true });
    let objectId: string | undefined;
    for (let tries = 0; !objectId && tries < 50; tries++) {
      ({ result: { objectId } } = await raw.ok('Runtime.evaluate', { expression: "document.querySelector('input')" }, sessionId));
      if (!objectId) await new Promise((r) => setTimeout(r, 50));
    }
    const input = { objectId };
    const upload = await raw.send('DOM.setFileInputFiles', { ...input, files: ['/etc/hostname'] }, sessionId);
    expect(upload.error?.message).toBe("DOM.setFileInputFiles is not available to check scripts: /etc/hostname is not in the run's folder");
    const climbing = await raw.send('DOM.setFileInputFiles', { ...input, files: [join(dir, '..', '..', 'etc', 'hostname')] }, sessionId);
    expect(climbing.error?.message).toContain("is not in the run's folder");
    // A link in the run's folder counts where it leads.
    symlinkSync('/etc/hostname', join(dir, 'innocent.txt'));
    const linked = await raw.send('DOM.setFileInputFiles', { ...input, files: [join(dir, 'innocent.txt')] }, sessionId);
    expect(linked.error?.message).toContain("is not in the run's folder");
    writeFileSync(join(dir, 'report.csv'), 'a,b\n');
    await raw.ok('DOM.setFileInputFiles', { ...input, files: ['report.csv'] }, sessionId);
    const chosen = await raw.ok('Runtime.evaluate', { expression: "document.querySelector('input').files[0].name" }, sessionId);
    expect(chosen.result.value).toBe('report.csv');

    const drop = await raw.send('Input.dispatchDragEvent', { type: 'drop', x: 1, y: 1, data: { items: [], files: ['/etc/hostname'], dragOperationsMask: 1 } }, sessionId);
    expect(drop.error?.message).toContain("/etc/hostname is not in the run's folder");
    const download = await raw.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' });
    expect(download.error?.message).toBe('Browser.setDownloadBehavior is not available to check scripts: downloads go to the run\'s folder, not /tmp');
    await raw.ok('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: join(dir, 'downloads') });
  });

  it('refuses what acts on the whole browser, and the browser goes on', async () => {
    const { targetId: made } = await raw.ok('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await raw.ok('Target.attachToTarget', { targetId: made, flatten: true });
    expect((await raw.send('Browser.close')).error?.message).toBe('Browser.close is not available to check scripts: the browser is shared with other runs');
    expect((await raw.send('Browser.crash', {}, sessionId)).error?.message).toContain('the browser is shared with other runs');
    expect((await raw.send('Tracing.start', {}, sessionId)).error?.message).toBe('Tracing.start is not available to check scripts: a trace records every page of the browser');
    expect((await raw.send('Target.attachToBrowserTarget')).error?.message).toContain('a connection to the whole browser');
    expect((await raw.send('Network.loadNetworkResource', { url: 'file:///etc/passwd', options: {} }, sessionId)).error?.message).toContain('files of the host');
    expect((await raw.send('Fetch.enable')).error?.message).toBe('Fetch.enable is not available to check scripts: it acts on the whole browser');
    expect(chromium.browser.connected).toBe(true);
    expect(await otherPage.title()).toBe('other run');
  });

  it('scopes cookies and permissions to the run\'s context when a command names none', async () => {
    await otherPage.setCookie({ name: 'other', value: 'secret-of-another-run', url: 'http://127.0.0.1/' });
    await raw.ok('Storage.setCookies', { cookies: [{ name: 'mine', value: '1', url: 'http://127.0.0.1/' }] });
    const { cookies } = await raw.ok('Storage.getCookies');
    expect(cookies.map((c: { name: string }) => c.name)).toEqual(['mine']);
    const foreign = await raw.send('Storage.getCookies', { browserContextId: other.id });
    expect(foreign.error?.message).toContain("that browser context is not the run's");
    expect((await other.cookies()).map((c) => c.name)).toEqual(['other']);
  });

  it('lets go of another run\'s new pages that its auto-attach reaches, without holding them up', async () => {
    await raw.ok('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
    const late = await other.newPage();
    await late.goto('data:text/html,<title>still loads</title>');
    expect(await late.title()).toBe('still loads');
    const own = await mine.newPage();
    await new Promise((r) => setTimeout(r, 200));
    const attached = raw.events.filter((e) => e.method === 'Target.attachedToTarget').map((e) => e.params.targetInfo.targetId);
    expect(attached).toContain(targetId(own));
    expect(attached).not.toContain(targetId(late));
    expect(attached).not.toContain(targetId(otherPage));
  });

  it('gives a session on the browser target that is gated the same way', async () => {
    const { targetInfo: browserTarget } = await raw.ok('Target.getTargetInfo');
    expect(browserTarget.type).toBe('browser');
    const { sessionId } = await raw.ok('Target.attachToTarget', { targetId: browserTarget.targetId, flatten: true });
    expect(raw.events.some((e) => e.method === 'Target.attachedToTarget' && e.params.sessionId === sessionId)).toBe(true);
    expect((await raw.ok('Target.getBrowserContexts', {}, sessionId)).browserContextIds).toEqual([mine.id]);
    expect((await raw.send('Browser.close', {}, sessionId)).error?.message).toContain('the browser is shared with other runs');
    await raw.ok('Target.detachFromTarget', { sessionId });
    expect((await raw.send('Target.getBrowserContexts', {}, sessionId)).error?.message).toBe('Session with given id not found.');
  });

  it('gives a gated browser session for a browser target that has ended since (puppeteer keeps it as the browser\'s)', async () => {
    // As puppeteer does: targets of every type, the browser's among them.
    await raw.ok('Target.setDiscoverTargets', { discover: true, filter: [{}] });
    // Another run's script process comes and goes: Chromium makes a browser target for its
    // browser session and ends it with that session.
    const passing = new RawClient(chromium, other.id!, dir);
    await passing.ok('Target.getBrowserContexts');
    await new Promise((r) => setTimeout(r, 100));
    const created = raw.events.filter((e) => e.method === 'Target.targetCreated' && e.params.targetInfo.type === 'browser').map((e) => e.params.targetInfo.targetId);
    passing.client.close();
    await new Promise((r) => setTimeout(r, 200));
    const ended = created.find((id) => raw.events.some((e) => e.method === 'Target.targetDestroyed' && e.params.targetId === id));
    expect(ended).toBeDefined();
    const { sessionId } = await raw.ok('Target.attachToTarget', { targetId: ended, flatten: true });
    expect((await raw.ok('Target.getBrowserContexts', {}, sessionId)).browserContextIds).toEqual([mine.id]);
  });

  it('answers nothing once the script\'s process is gone', async () => {
    raw.client.close();
    const answered = await Promise.race([raw.send('Target.getBrowserContexts').then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);
    expect(answered).toBe(false);
  });
});
