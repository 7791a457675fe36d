'use strict';
/*
 * `expect` of a multi-step script: the `expect` package's, with every matcher call reported to
 * the host (`onAssertion({ matcher, soft, passed, message })`), and `expect.soft(value)`: the same
 * matchers, but a failure is reported and the script goes on (the run still fails). A hard failure
 * throws the matcher's error, marked as an assertion so that the run's failure kind says so.
 */
const util = require('node:util');

const CHAINS = new Set(['not', 'resolves', 'rejects']);
/**
 * Characters of a matcher's message sent to the host: the host scrubs the run's secrets from it
 * and only then cuts it to the 1,000 it keeps, so it gets those and a margin past them.
 */
const MAX_MESSAGE = 1_000 + 16 * 1024;

/** A matcher's message as plain text, bounded. */
function messageOf(err) {
  const text = util.stripVTControlCharacters(err instanceof Error ? String(err.message) : util.inspect(err));
  return text.slice(0, MAX_MESSAGE);
}

/** Whether an error came from a matcher (a failed expectation, or a matcher used wrongly). */
const isAssertion = (err) => err instanceof Error && (err.matcherResult !== undefined || err.vigilAssertion === true);

function recordingExpect(expect, onAssertion) {
  /** Runs one matcher call and reports it; a soft failure is swallowed, a hard one thrown on. */
  function call(fn, self, args, soft, matcher) {
    const passed = (out) => {
      onAssertion({ matcher, soft, passed: true, message: null });
      return out;
    };
    const failed = (err) => {
      if (err instanceof Error) Object.defineProperty(err, 'vigilAssertion', { value: true, configurable: true });
      onAssertion({ matcher, soft, passed: false, message: messageOf(err) });
      if (!soft) throw err;
      return undefined;
    };
    let out;
    try {
      out = fn.apply(self, args);
    } catch (err) {
      return failed(err);
    }
    return out && typeof out.then === 'function' ? out.then(passed, failed) : passed(out);
  }

  /** The matchers of `expect(value)` (and of its `.not`, `.resolves`, `.rejects`), each reporting. */
  function matchers(target, soft, path) {
    return new Proxy(target, {
      get(object, key) {
        const value = Reflect.get(object, key);
        if (typeof key !== 'string') return value;
        if (CHAINS.has(key) && value !== null && typeof value === 'object') return matchers(value, soft, [...path, key]);
        if (typeof value !== 'function') return value;
        return (...args) => call(value, object, args, soft, [...path, key].join('.'));
      },
    });
  }

  const soft = (value) => matchers(expect(value), true, []);
  return new Proxy(expect, {
    apply(_target, _self, args) {
      return matchers(expect(...args), false, []);
    },
    get(target, key) {
      return key === 'soft' ? soft : Reflect.get(target, key);
    },
  });
}

module.exports = { recordingExpect, isAssertion, messageOf };
