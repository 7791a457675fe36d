// Preloaded with `node --require`: makes the packages named in VIGIL_HIDE_MODULES unresolvable, as
// in an app that did not install them.
const Module = require('node:module');
const hidden = new Set((process.env.VIGIL_HIDE_MODULES ?? '').split(',').filter(Boolean));
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden.has(request)) {
    const err = new Error(`Cannot find module '${request}'`);
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return resolve.call(this, request, ...rest);
};
