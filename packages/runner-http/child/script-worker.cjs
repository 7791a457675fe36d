'use strict';
/*
 * The process an API check's setup or teardown code runs in: one process per phase of one run,
 * never the host's. The host starts it with an empty environment under Node's permission model
 * (it may read this file and its run folder, write only its run folder, start no child processes
 * or workers), a heap limit, and kills it with SIGKILL when the phase is over or its time is up.
 * It waits for one `run` message, runs the phase's scripts in order on the `request` (and
 * `response`) it was handed, and reports through the IPC channel. It loads nothing but Node's
 * own modules, target-fence.cjs and script-guard.cjs beside it and core's child/fence.cjs (plain
 * CommonJS, never built; the host hands over its path), so the same files serve the sources and
 * the built package.
 */

// Core's child/fence.cjs (@vigil/core/child/fence.cjs), at the path the host found it at and
// lets this process read (argv[2]). The process ends with its host, from before any script runs.
const coreFence = require(process.argv[2]);
coreFence.exitWithHost();

const vm = require('node:vm');
const assert = require('node:assert');
const util = require('node:util');
const { installTargetFence } = require('./target-fence.cjs');
const { send, captureConsole, guardProcess, scriptRequire, fenceBuiltinModules, setEnvironment } = require('./script-guard.cjs');

let running = false;
let finished = false;
let current = null;

function errorOf(err) {
  if (err instanceof Error) {
    return {
      name: String(err.name),
      message: util.stripVTControlCharacters(String(err.message)),
      stack: util.stripVTControlCharacters(String(err.stack || '')),
      assertion: err.code === 'ERR_ASSERTION',
      label: current,
    };
  }
  return { name: 'Error', message: util.stripVTControlCharacters(util.inspect(err)), stack: '', assertion: false, label: current };
}

function finish(outcome) {
  if (finished) return;
  finished = true;
  send({ type: 'done', ...outcome });
}

captureConsole();
guardProcess('A setup or teardown script');

const asText = (value) => (value === undefined || value === null ? null : typeof value === 'string' ? value : String(value));

/** A map of names to a value or a list of values, as plain strings; null and undefined drop the name. */
function plainPairs(value) {
  const out = {};
  if (value === null || typeof value !== 'object') return out;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    out[key] = Array.isArray(v) ? v.filter((x) => x !== undefined && x !== null).map(String) : String(v);
  }
  return out;
}

/** The request as the setup left it, in plain values the host checks again. */
function plainRequest(request) {
  if (request === null || typeof request !== 'object') return request;
  const body = request.body;
  return {
    method: asText(request.method),
    url: asText(request.url),
    headers: plainPairs(request.headers),
    queryParameters: plainPairs(request.queryParameters),
    body: body === undefined || body === null ? null
      : typeof body === 'string' ? body
      : Buffer.isBuffer(body) || body instanceof Uint8Array ? Buffer.from(body).toString('utf8')
      : JSON.stringify(body),
  };
}

async function run(job) {
  setEnvironment(job.env);
  const load = scriptRequire(job.withheld, 'setup and teardown scripts');
  // Under the host's target policy, every connection the scripts open is checked by the host first.
  // Its key stays in the fence alone.
  const fenceKey = typeof job.fenceKey === 'string' ? Buffer.from(job.fenceKey, 'hex') : null;
  delete job.fenceKey;
  // Without its key the fence takes no answer at all: every connection fails.
  if (job.fenceTargets === true) installTargetFence(fenceKey, coreFence);
  // Fenced like `require`: the script's own way to a module must not be a way around the fence.
  fenceBuiltinModules(load);
  const { request, response } = job;
  for (const script of job.scripts) {
    current = script.label;
    send({ type: 'script', label: script.label });
    const fn = new vm.Script(script.source, { filename: script.filename, lineOffset: -1 }).runInThisContext();
    await fn(request, response, load, assert);
  }
  current = null;
  return { request: job.phase === 'setup' ? plainRequest(request) : null, env: { ...process.env } };
}

process.on('unhandledRejection', (err) => {
  if (running) finish({ ok: false, error: errorOf(err) });
});
process.on('uncaughtException', (err) => {
  if (running) finish({ ok: false, error: errorOf(err) });
  else send({ type: 'fatal', error: errorOf(err) });
});

process.on('message', async (message) => {
  if (!message || message.type !== 'run' || running) return;
  running = true;
  try {
    const out = await run(message);
    finish({ ok: true, ...out });
  } catch (err) {
    finish({ ok: false, error: errorOf(err) });
  }
});

send({ type: 'ready' });
