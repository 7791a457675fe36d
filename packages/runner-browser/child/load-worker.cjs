'use strict';
/*
 * The entry of a script's process: compiles the worker (argv[2]) with the V8 code cache the host
 * keeps (argv[3]), so that a new process deserializes puppeteer's compiled code rather than
 * parsing and compiling it again. A cache that V8 refuses (another Node, other flags) only costs
 * the compile; the worker reports it so that the host makes a new one.
 */

/*
 * The process ends with its host, whether it is loading, prepared ahead and waiting, or running:
 * at once when the IPC channel closes (the host exited or was killed), and within a second when
 * its parent is no longer the host (a channel held open elsewhere), without running any exit
 * handler a script left behind. A script stuck in a synchronous loop notices neither: the
 * host's watcher (endWithHost of @vigil/core) kills it then. The same lines are in runner-http's
 * child/script-worker.cjs, since each child file loads no other package.
 */
// Node's own exit, taken before any script runs: process.exit and process.kill look up
// process.reallyExit and process._kill when called, and both may be replaced or taken away.
const reallyExit = process.reallyExit;
const endProcess = () => reallyExit.call(process, 1);
const host = process.ppid;
if (!process.connected) endProcess();
process.on('disconnect', endProcess);
setInterval(() => {
  if (process.ppid !== host) endProcess();
}, 1_000).unref();

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const [file, cacheFile] = process.argv.slice(2);
let cachedData;
if (cacheFile) {
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // Not made yet: this process compiles from source.
  }
}
const source = `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(file, 'utf8')}\n})`;
const script = new vm.Script(source, { filename: file, cachedData });
Object.defineProperty(globalThis, '__vigilCodeCache', {
  configurable: true,
  value: { rejected: cachedData ? script.cachedDataRejected === true : null, make: () => script.createCachedData() },
});
const worker = new Module(file, module);
worker.filename = file;
worker.paths = Module._nodeModulePaths(path.dirname(file));
script.runInThisContext().call(worker.exports, worker.exports, Module.createRequire(file), worker, file, path.dirname(file));
