'use strict';
/*
 * What every script process of this package does to its own process before a script runs (the
 * setup/teardown worker and the multi-step worker): console output goes to the host over the IPC
 * channel, the ways to signal a process, renice one, load native code or end the process are gone, and a
 * script's `require` gives Node's own modules only, without those the host withholds. It loads
 * Node's own modules only, so it ships as is beside the unbundled worker and is bundled into the
 * built multi-step worker.
 */
const Module = require('node:module');
const util = require('node:util');

const nodeRequire = require;

function send(message) {
  if (process.connected) process.send(message);
}

function format(args) {
  return util.stripVTControlCharacters(util.format(...args));
}

/** console.* as `log` messages to the host, which keeps them as the run's logs. */
function captureConsole() {
  for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
    console[level] = (...args) => send({ type: 'log', level: level === 'trace' ? 'debug' : level === 'log' ? 'info' : level, text: format(args) });
  }
  console.dir = (value, options) => send({ type: 'log', level: 'info', text: util.stripVTControlCharacters(util.inspect(value, options)) });
}

/**
 * Signals reach any process of the same user (SIGUSR1 would open the host's inspector), and the
 * permission model does not cover them: a script gets no way to send one, nor to load native code.
 * process.exit() and process.abort() throw, naming `who` ("A setup or teardown script").
 */
function guardProcess(who) {
  for (const name of ['kill', '_kill', '_debugProcess', '_debugEnd', 'dlopen', 'binding', '_linkedBinding', 'mainModule']) {
    Object.defineProperty(process, name, { value: undefined, writable: false, configurable: false });
  }
  process.exit = (code) => {
    throw new Error(`${who} may not end its process (process.exit(${code === undefined ? '' : code}) was called)`);
  };
  process.abort = () => {
    throw new Error(`${who} may not end its process (process.abort() was called)`);
  };
  // os.setPriority reaches any process of the same user too (the host's, by process.ppid), and the
  // permission model does not cover it either.
  const os = nodeRequire('node:os');
  for (const name of ['setPriority', 'getPriority']) {
    const refused = () => {
      throw new Error(`${who} may not read or change a process's priority (os.${name}() was called)`);
    };
    Object.defineProperty(os, name, { value: refused, writable: false, configurable: false });
  }
}

/** `require` in a script: Node's own modules, but not those the host withholds; `whom` names the scripts in refusals. */
function scriptRequire(withheld, whom) {
  const fenced = new Set(withheld);
  return function fencedRequire(request) {
    const id = String(request);
    const name = id.startsWith('node:') ? id.slice(5) : id;
    if (!Module.isBuiltin(id)) {
      throw new Error(`require('${id}') is not available to ${whom}: they may require Node's own modules (node:crypto, node:assert, ...) only`);
    }
    if (fenced.has(name.split('/')[0])) throw new Error(`require('${id}') is not available to ${whom}`);
    return nodeRequire(id);
  };
}

/** process.getBuiltinModule fenced like `require`: the script's own way to a module must not be a way around the fence. */
function fenceBuiltinModules(load) {
  if (typeof process.getBuiltinModule === 'function') {
    Object.defineProperty(process, 'getBuiltinModule', { value: (id) => load(id), writable: false, configurable: false });
  }
}

/** The script's variables as its process.env, and nothing else. */
function setEnvironment(env) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, env);
}

module.exports = { send, captureConsole, guardProcess, scriptRequire, fenceBuiltinModules, setEnvironment };
