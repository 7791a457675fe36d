'use strict';
/*
 * The process a browser check's script runs in: one process per run, never the host's. It starts
 * with an empty environment under Node's permission model (reads of its own modules and its run
 * directory, writes to the run directory, no child processes, no workers), connects to the pooled
 * browser it is handed, waits for one run, runs it and reports through the IPC channel. The
 * parent kills it when the run is over or its time is up, and it ends with its parent
 * (load-worker.cjs, its entry, sees to that). The build bundles this file with
 * puppeteer-core and expect (dist/script-worker.cjs), and load-worker.cjs loads it.
 */
const Module = require('node:module');
const path = require('node:path');
const fs = require('node:fs');
const vm = require('node:vm');
const assert = require('node:assert');
const util = require('node:util');

// puppeteer-core's browser half: its API and DevTools protocol client, all that connecting to the
// browser it is handed needs. Its main module evaluates the Node launchers as well (Chrome's and
// Firefox's, @puppeteer/browsers, the screen recorder), about a third of its load time in every
// process; they are loaded only when a script requires puppeteer itself (`fullPuppeteer`).
const { Puppeteer } = require('puppeteer-core/internal/common/Puppeteer.js');
const { environment } = require('puppeteer-core/internal/environment.js');
const { expect } = require('expect');
const { hideSecrets } = require('./mask.cjs');
const { installNetworkFence } = require('./network-fence.cjs');

// What puppeteer-core's main module gives its browser half, so that page.pdf({ path }) and such work
// without it; the screen recorder comes with the whole module.
environment.value = {
  fs,
  path,
  get ScreenRecorder() {
    return fullPuppeteer().ScreenRecorder;
  },
};
const puppeteer = new Puppeteer({ isPuppeteerCore: true });
/** puppeteer-core as a whole, launchers included: what `require('puppeteer')` in a script gets (scoped). */
const fullPuppeteer = () => require('puppeteer-core');

// Set by load-worker.cjs, taken before any script runs.
const codeCache = globalThis.__vigilCodeCache || null;
delete globalThis.__vigilCodeCache;

let browser = null;
/** The browser's other contexts when this process connected: the pool's other runs, prepared or going on. */
let connectedContexts = null;
let running = false;
let finished = false;
let degraded = null;
let shots = 0;

function send(message) {
  if (process.connected) process.send(message);
}

function errorOf(err) {
  if (err instanceof Error) {
    return {
      name: err.name,
      message: util.stripVTControlCharacters(String(err.message)),
      stack: util.stripVTControlCharacters(String(err.stack || '')),
      assertion: err.code === 'ERR_ASSERTION' || 'matcherResult' in err,
    };
  }
  return { name: 'Error', message: util.stripVTControlCharacters(util.inspect(err)), stack: '' };
}

function finish(outcome) {
  if (finished) return;
  finished = true;
  send({ type: 'done', ...outcome, degraded });
}

function format(args) {
  return util.stripVTControlCharacters(util.format(...args));
}

function captureConsole() {
  for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
    console[level] = (...args) => send({ type: 'log', source: 'script', level: level === 'trace' ? 'debug' : level, text: format(args) });
  }
}

/**
 * Which targets this process attaches to: not the pages of the browser's other runs (attaching
 * initializes each page and doubles its protocol traffic), but the run's own context, the default
 * one and any context the script makes. A context this connection has not seen counts as the
 * default one in puppeteer, so only contexts known at connect time are left out.
 */
function runTargets(contextId) {
  return (target) => {
    const id = target.browserContext().id;
    if (!id || id === contextId) return true;
    // While connecting, every other context puppeteer knows of belongs to another run.
    return connectedContexts !== null && !connectedContexts.has(id);
  };
}

/** The browser as a script sees it: pages open in the run's own context, and closing it ends nothing else. */
function scopedBrowser(real, context) {
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'newPage') return () => context.newPage();
      if (prop === 'pages') return () => context.pages();
      if (prop === 'defaultBrowserContext') return () => context;
      if (prop === 'browserContexts') return () => [context];
      if (prop === 'close' || prop === 'disconnect') return async () => {};
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `require('puppeteer')` in a script: launch and connect hand back the run's browser. */
function scopedPuppeteer(shim) {
  const entry = new Proxy(fullPuppeteer(), {
    get(target, prop) {
      if (prop === 'launch' || prop === 'connect') return async () => shim;
      if (prop === 'default') return entry;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return entry;
}

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', webp: 'image/webp' };

/** page.screenshot(): secrets are masked on the page while it is taken, and the image goes to the run's artifacts. */
function recordScreenshots(page, secrets) {
  const proto = Object.getPrototypeOf(page);
  if (proto.__vigilScreenshots) return;
  const original = proto.screenshot;
  proto.__vigilScreenshots = true;
  proto.screenshot = async function screenshot(options = {}) {
    const type = options.type || (options.path ? path.extname(options.path).slice(1).toLowerCase() : 'png') || 'png';
    const masking = secrets.length > 0 ? await hideSecrets(this, secrets).catch(() => null) : null;
    const hidden = masking !== null && masking.hidden;
    let data;
    try {
      data = await original.call(this, { ...options, path: undefined, encoding: 'binary' });
    } finally {
      if (masking) await masking.restore().catch(() => {});
    }
    const bytes = Buffer.from(data);
    if (options.path) fs.writeFileSync(path.resolve(options.path), bytes);
    shots += 1;
    const name = options.path ? path.basename(options.path) : `screenshot-${shots}.${type === 'jpeg' ? 'jpg' : type}`;
    // A page whose secrets could not be hidden (it was navigating) is not kept.
    if (hidden || secrets.length === 0) send({ type: 'artifact', name, contentType: CONTENT_TYPES[type] || 'application/octet-stream', data: bytes });
    else send({ type: 'log', level: 'warn', text: `${name} was not stored: the page did not answer in time to hide the run's secrets` });
    return options.encoding === 'base64' ? bytes.toString('base64') : bytes;
  };
}

/**
 * Raw sockets and process-level tools a check has no use for (the host sends the list with the
 * run). Node's permission model does not cover the network; this keeps a script to the browser,
 * fetch and http(s). It is a fence in JavaScript, not a wall: the README says what it does not stop.
 */
let WITHHELD = new Set();
const bareName = (request) => (String(request).startsWith('node:') ? String(request).slice(5) : String(request));

/** `process.getBuiltinModule` is fenced like `require`, so it is no way around the list. */
function fenceBuiltinModules() {
  if (typeof process.getBuiltinModule !== 'function') return;
  const original = process.getBuiltinModule.bind(process);
  Object.defineProperty(process, 'getBuiltinModule', {
    value: (id) => {
      if (WITHHELD.has(bareName(id))) throw new Error(`process.getBuiltinModule('${id}') is not available to check scripts`);
      return original(id);
    },
    writable: false,
    configurable: false,
  });
}
const runDir = process.cwd();

function scriptRequire(scriptFile, shim) {
  const local = Module.createRequire(scriptFile);
  let scoped = null;
  const load = Module._load;
  // Dependency files that require puppeteer get the same scoped browser as the script.
  Module._load = function vigilLoad(request, parent, isMain) {
    // The worker's own require of puppeteer-core (fullPuppeteer, run from the sources) gets the module itself.
    const own = parent && parent.filename === __filename;
    if ((request === 'puppeteer' || request === 'puppeteer-core') && !own) return (scoped ??= scopedPuppeteer(shim));
    if (request === 'expect') return { expect };
    const name = bareName(request);
    if (WITHHELD.has(name) && (!parent || !parent.filename || parent.filename.startsWith(runDir))) {
      throw new Error(`require('${request}') is not available to check scripts`);
    }
    return load.call(this, request, parent, isMain);
  };
  return local;
}

async function run(job) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, job.env);
  WITHHELD = new Set(job.withheld);
  fenceBuiltinModules();
  // Under a target policy the script opens no connection of its own; its pages go through the host's proxy.
  if (job.fenceNetwork) installNetworkFence((to) => send({ type: 'net-refused', host: to.host, port: to.port }));

  const context = browser.browserContexts().find((c) => c.id === job.contextId);
  if (!context) throw new Error('The run\'s browser context is gone');
  const pages = await context.pages();
  const page = pages[0] || (await context.newPage());
  recordScreenshots(page, job.secrets);

  const shim = scopedBrowser(browser, context);
  const localRequire = scriptRequire(job.scriptFile, shim);
  const mod = new Module(job.scriptFile, null);
  mod.filename = job.scriptFile;
  mod.paths = Module._nodeModulePaths(path.dirname(job.scriptFile));
  const markDegraded = (reason) => {
    degraded = reason === undefined ? 'The script marked the run as degraded' : String(reason);
  };

  const source = `(async function (${job.params}) {\n${job.code}\n})`;
  const compiled = new vm.Script(source, { filename: job.scriptFile, lineOffset: -1 });
  const fn = compiled.runInThisContext();
  await fn(page, shim, context, localRequire, mod, mod.exports, job.scriptFile, path.dirname(job.scriptFile), expect, assert, markDegraded);
}

// Signals reach any process of the same user (SIGUSR1 would open the host's inspector), and the
// permission model does not cover them: a script gets no way to send one.
for (const name of ['kill', '_kill', '_debugProcess', '_debugEnd', 'dlopen']) {
  Object.defineProperty(process, name, { value: undefined, writable: false, configurable: false });
}
// Nor a way to renice one: os.setPriority reaches any process of the same user (the host's, by process.ppid).
for (const name of ['setPriority', 'getPriority']) {
  const refused = () => {
    throw new Error(`A check script may not read or change a process's priority (os.${name}() was called)`);
  };
  Object.defineProperty(require('node:os'), name, { value: refused, writable: false, configurable: false });
}
process.exit = (code) => {
  throw new Error(`A check script may not end its process (process.exit(${code === undefined ? '' : code}) was called)`);
};
process.on('unhandledRejection', (err) => {
  if (running) finish({ ok: false, error: errorOf(err) });
});
process.on('uncaughtException', (err) => {
  if (running) finish({ ok: false, error: errorOf(err) });
  else send({ type: 'fatal', error: errorOf(err) });
});

/**
 * What most scripts do, on a page of this process's own that is closed again: the code cache made
 * after it holds those functions compiled too, which saves later runs a third of their CPU here.
 */
async function warmUp(context) {
  const page = await context.newPage();
  try {
    page.setDefaultTimeout(5_000);
    await page.goto('data:text/html,<title>warm</title><button onclick="this.textContent=1">0</button>');
    await page.click('button');
    expect(await page.$eval('button', (el) => el.textContent)).toBe('1');
    expect(await page.title()).toEqual('warm');
    await page.waitForSelector('button');
    assert.equal(1, 1);
    try {
      expect({ a: 1 }).toEqual({ a: 2 });
    } catch {
      // The failure message is what this compiles.
    }
  } catch {
    // A cache of what did get compiled is still worth having.
  } finally {
    await page.close().catch(() => {});
  }
}

/**
 * The connection to the browser: DevTools protocol messages over the IPC channel to the host,
 * whose gate lets through what concerns this run's context alone. The browser has no port.
 */
function hostTransport() {
  const transport = {
    onmessage: undefined,
    onclose: undefined,
    send(data) {
      send({ type: 'cdp', data });
    },
    close() {},
  };
  process.on('message', (message) => {
    if (message && message.type === 'cdp' && typeof message.data === 'string' && transport.onmessage) transport.onmessage(message.data);
  });
  process.on('disconnect', () => {
    if (transport.onclose) transport.onclose();
  });
  return transport;
}

process.on('message', async (message) => {
  if (message.type === 'connect' && !browser && !running) {
    try {
      browser = await puppeteer.connect({
        transport: hostTransport(),
        defaultViewport: message.viewport || null,
        targetFilter: runTargets(message.contextId),
      });
      connectedContexts = new Set(browser.browserContexts().map((c) => c.id).filter((id) => id !== message.contextId));
      // Made here, before any script code runs: the host gives it to the processes that start after this one.
      if (message.makeCodeCache && codeCache) {
        const context = browser.browserContexts().find((c) => c.id === message.contextId);
        if (context) await warmUp(context);
        send({ type: 'code-cache', data: codeCache.make() });
      }
      captureConsole();
      send({ type: 'ready', codeCacheRejected: codeCache ? codeCache.rejected : null });
    } catch (err) {
      send({ type: 'fatal', error: errorOf(err) });
    }
  } else if (message.type === 'run' && !running) {
    running = true;
    try {
      // Written here rather than by the host: this process can write nowhere but its folder.
      for (const file of message.files) {
        fs.mkdirSync(path.dirname(file.path), { recursive: true });
        fs.writeFileSync(file.path, file.content);
      }
      send({ type: 'started' });
      await run(message);
      finish({ ok: true });
    } catch (err) {
      finish({ ok: false, error: errorOf(err) });
    }
  }
});
