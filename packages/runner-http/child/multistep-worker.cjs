'use strict';
/*
 * The process a multi-step check's script runs in: one process per run, never the host's. The
 * host starts it as it starts a setup's (script-process.ts): an empty environment, Node's
 * permission model (it may read its own files and modules and its run folder, write only that
 * folder, start no child processes or workers), a heap limit, and SIGKILL when the run is over,
 * its time is up or it is aborted. It waits for one `run` message, runs the script as the body of
 * an async function with `request`, `expect`, `step`, `markDegraded` and `require`, and reports
 * as it goes through the IPC channel: each step's start and end, each request, each assertion,
 * the credentials sent (for the host to scrub), then `done`. The built package runs
 * dist/multistep-worker.cjs, this file with `expect` and the files beside it in one bundle; from
 * the sources it loads `expect` from node_modules.
 */

// Core's child/fence.cjs (@vigil/core/child/fence.cjs), at the path the host found it at and
// lets this process read (argv[2]). The process ends with its host, from before any script runs.
const coreFence = require(process.argv[2]);
coreFence.exitWithHost();

const vm = require('node:vm');
const util = require('node:util');
const { performance } = require('node:perf_hooks');
const { expect } = require('expect');
const { installTargetFence } = require('./target-fence.cjs');
const { send, captureConsole, guardProcess, scriptRequire, fenceBuiltinModules, setEnvironment } = require('./script-guard.cjs');
const { createRequestContext } = require('./multistep-request.cjs');
const { recordingExpect, isAssertion } = require('./multistep-expect.cjs');

/** The names the script's code is called with, in order (multistep-script.ts compiles it the same way). */
const PARAMETERS = ['request', 'expect', 'step', 'markDegraded', 'require'];

let running = false;
let finished = false;
/** The step running now: `{ name }`, or null between steps. */
let current = null;

function errorOf(err) {
  if (err instanceof Error) {
    return {
      name: String(err.name),
      message: util.stripVTControlCharacters(String(err.message)),
      stack: util.stripVTControlCharacters(String(err.stack || '')),
      assertion: isAssertion(err),
      code: typeof err.code === 'string' ? err.code : null,
      label: current ? current.name : null,
    };
  }
  return { name: 'Error', message: util.stripVTControlCharacters(util.inspect(err)), stack: '', assertion: false, code: null, label: current ? current.name : null };
}

function finish(outcome) {
  if (finished) return;
  finished = true;
  send({ type: 'done', ...outcome });
}

captureConsole();
guardProcess('A multi-step script');

const round = (ms) => Math.round(ms * 100) / 100;

/**
 * `step(name, fn)`: runs fn as one step of the run and returns its value. Steps are not nested: a
 * step called while another runs fails (and with it the step that called it).
 */
async function step(nameGiven, fn) {
  const name = String(nameGiven);
  if (typeof fn !== 'function') throw new TypeError(`step(${JSON.stringify(name)}, fn): fn must be a function`);
  if (current) {
    throw new Error(`step(${JSON.stringify(name)}) was called inside step(${JSON.stringify(current.name)}): steps cannot be nested or run at the same time`);
  }
  current = { name };
  const started = performance.now();
  send({ type: 'step-start', name });
  send({ type: 'script', label: `step "${name}"` });
  try {
    const value = await fn();
    send({ type: 'step-end', name, durationMs: round(performance.now() - started), error: null });
    return value;
  } catch (err) {
    send({ type: 'step-end', name, durationMs: round(performance.now() - started), error: errorOf(err) });
    throw err;
  } finally {
    current = null;
    send({ type: 'script', label: 'the script' });
  }
}

function markDegraded(reason) {
  send({ type: 'degraded', reason: reason === undefined || reason === null ? 'The script marked the run as degraded' : String(reason).slice(0, 1_000 + 16 * 1024) });
}

async function run(job) {
  setEnvironment(job.env);
  const load = scriptRequire(job.withheld, 'multi-step scripts');
  // Fenced like `require`: the script's own way to a module must not be a way around the fence.
  fenceBuiltinModules(load);
  // Under the host's target policy, every connection the script opens is checked by the host first.
  // Its key stays in the fence alone; without it the fence takes no answer at all.
  const fenceKey = typeof job.fenceKey === 'string' ? Buffer.from(job.fenceKey, 'hex') : null;
  delete job.fenceKey;
  if (job.fenceTargets === true) installTargetFence(fenceKey, coreFence);

  const request = createRequestContext({
    maxResponseBytes: job.maxResponseBytes,
    userAgent: job.userAgent,
    onRequest: (record) => send({ type: 'request', record }),
    onCredentials: (credentials) => send({ type: 'credentials', ...credentials }),
  });
  const checked = recordingExpect(expect, (record) => send({ type: 'assertion', record }));
  send({ type: 'script', label: 'the script' });
  const source = `(async function (${PARAMETERS.join(', ')}) {\n${job.code}\n})`;
  const fn = new vm.Script(source, { filename: job.filename, lineOffset: -1 }).runInThisContext();
  const started = performance.now();
  await fn(request, checked, step, markDegraded, load);
  return { wallMs: round(performance.now() - started) };
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
