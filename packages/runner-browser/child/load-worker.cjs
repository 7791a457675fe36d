'use strict';
/*
 * The entry of a script's process: compiles the worker (argv[2]) with the V8 code cache the host
 * keeps (argv[3]), so that a new process deserializes puppeteer's compiled code rather than
 * parsing and compiling it again. A cache that V8 refuses (another Node, other flags) only costs
 * the compile; the worker reports it so that the host makes a new one.
 */

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

// argv[4]: core's child/fence.cjs (@vigil/core/child/fence.cjs), at the path the host found it at
// and lets this process read. The process ends with its host whether it is loading, prepared
// ahead and waiting, or running (core's exitWithHost), from before any script runs.
const [file, cacheFile, coreFence] = process.argv.slice(2);
require(coreFence).exitWithHost();

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
