import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import puppeteer, { type Browser } from 'puppeteer-core';
import { DevToolsGate } from './devtools-gate.js';

/** A pooled Chromium: the host's puppeteer connection, the gate script processes connect through, and a way to end it. */
export interface Chromium {
  readonly browser: Browser;
  readonly gate: DevToolsGate;
  /** Ends the browser and every process it started, at once. */
  kill(): void;
}

export interface ChromiumOptions {
  executablePath: string;
  args: string[];
  viewport: { width: number; height: number } | null;
  /** How long the browser may take to answer its first command. */
  startTimeoutMs: number;
  /** Its traffic goes through a target policy's proxy (`args` name it): the gate keeps scripts from making contexts past it. */
  fenced?: boolean;
}

const TAIL_BYTES = 4096;

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const DEBIAN_HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';

/** The Chromium a runner without `executablePath` runs: Debian's chromium, or its headless shell where only that is installed. */
export function defaultChromium(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): string {
  if (env.PUPPETEER_EXECUTABLE_PATH) return env.PUPPETEER_EXECUTABLE_PATH;
  return !exists(DEBIAN_CHROMIUM) && exists(DEBIAN_HEADLESS_SHELL) ? DEBIAN_HEADLESS_SHELL : DEBIAN_CHROMIUM;
}

/** Vigil's Chromium switches: headless, no first-run work, and no calls home on a closed network. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--mute-audio',
  // Each incognito context would preload two omnibox popups (WebUI renderers) that headless never
  // shows: about 0.8 s of CPU per run.
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup',
];

/**
 * Switches that would take a fenced browser's traffic past its proxy; dropped from `args` when
 * the browser is fenced (Chromium takes the last of a repeated switch, and --no-proxy-server over
 * any).
 */
const PROXY_SWITCHES = /^--?(no-proxy-server|proxy-server|proxy-bypass-list|proxy-pac-url|proxy-auto-detect|winhttp-proxy-resolver|(force-)?webrtc-ip-handling-policy|enable-quic|origin-to-force-quic-on)(=|$)/;

/**
 * A fenced browser's switches: all its traffic through the target policy's proxy, loopback too
 * (Chromium would otherwise go to localhost and 127.0.0.1 directly), no QUIC (UDP that a SOCKS
 * proxy does not carry), and WebRTC without UDP of its own.
 */
function fencedArgs(proxyUrl: string): string[] {
  return [
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--disable-quic',
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    // The same switch under the name other Chromium builds read.
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}

/**
 * A browser's switches: Vigil's, then the host's `args`; with a target policy's proxy (`proxyUrl`),
 * the host's without those that would take traffic past it, then the fence's.
 */
export function chromiumArgs(args: readonly string[], proxyUrl: string | null): string[] {
  return proxyUrl !== null
    ? [...CHROMIUM_ARGS, ...args.filter((arg) => !PROXY_SWITCHES.test(arg)), ...fencedArgs(proxyUrl)]
    : [...CHROMIUM_ARGS, ...args];
}


/**
 * Starts Chromium with its DevTools protocol on a pipe (`--remote-debugging-pipe`: fd 3 in, fd 4
 * out) rather than a port, so nothing on the machine can connect to it but through the host's
 * gate. Puppeteer's usual switches and a fresh profile folder, removed when the browser ends.
 */
export async function launchChromium(options: ChromiumOptions): Promise<Chromium> {
  const profile = await mkdtemp(join(tmpdir(), 'vigil-chromium-'));
  const args = [...puppeteer.defaultArgs({ headless: true, args: [...options.args], userDataDir: profile }), '--remote-debugging-pipe'];
  const child = spawn(options.executablePath, args, {
    // Its own process group, so that ending it ends its renderers too.
    detached: process.platform !== 'win32',
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-TAIL_BYTES);
  });
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  toBrowser.on('error', () => {});
  fromBrowser.on('error', () => {});

  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
  // The host's exit takes its browsers with it.
  process.on('exit', kill);

  const gate = new DevToolsGate({ write: (data) => void toBrowser.write(`${data}\0`) }, { fenced: options.fenced === true });
  let pending = '';
  fromBrowser.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (pending + chunk).split('\0');
    pending = parts.pop()!;
    for (const part of parts) if (part !== '') gate.receive(part);
  });

  let exited: (reason: Error) => void = () => {};
  const exit = new Promise<never>((_, reject) => {
    exited = reject;
  });
  exit.catch(() => {});
  child.on('error', (err: NodeJS.ErrnoException) => exited(err.code === 'ENOENT'
    ? new Error(`there is no Chromium at ${options.executablePath} (on Debian: apt-get install chromium, or chromium-headless-shell; executablePath or PUPPETEER_EXECUTABLE_PATH names another)`)
    : err));
  child.on('exit', (code, signal) => {
    process.off('exit', kill);
    gate.close();
    exited(new Error(`Chromium ended (${signal ?? `exit code ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' ') || 'no output'}`));
    void rm(profile, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
  });

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      gate.ready(),
      exit,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Chromium did not answer within ${options.startTimeoutMs} ms: ${stderr.trim().split('\n').pop() ?? ''}`)), options.startTimeoutMs);
      }),
    ]);
    const browser = await Promise.race([puppeteer.connect({ transport: gate.host, defaultViewport: options.viewport }), exit]);
    return { browser, gate, kill };
  } catch (err) {
    kill();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
