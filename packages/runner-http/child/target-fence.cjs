'use strict';
/*
 * The network of a setup or teardown script under the host's target policy. A script may fetch a
 * token from an auth server, so its connections are checked rather than refused: every TCP
 * connection (fetch, http, https, and raw sockets however obtained) asks the host over the IPC
 * channel, the host looks the name up once and checks every address against the policy, and the
 * connection goes to an address the host answered, never to a second lookup's. The request keeps
 * its name: TLS's server name and HTTP's Host header are not touched. A refused connection fails
 * with an ETARGETPOLICY error, and the host, which made the refusal, fails the run even when the
 * script catches the error.
 *
 * Unix sockets, UDP and DNS servers of the script's own choosing are refused outright (the host
 * is told of each): they are not needed to fetch a token. The fence itself, on the functions
 * every such connection goes through, is core's (@vigil/core/child/fence.cjs); this file adds the
 * questions to the host. An answer counts only with the host's HMAC over it, keyed by a secret the
 * host handed over before the script ran and that only this file's closure keeps: a script that
 * rewrites the IPC channel can read the questions and answers, but cannot make up an answer of
 * its own.
 */
const net = require('node:net');
const { createHmac, randomUUID, timingSafeEqual } = require('node:crypto');

/** The HMAC the host puts on an answer (script-targets.ts signs the same text). */
function answerMac(key, m) {
  return createHmac('sha256', key).update(JSON.stringify([m.id, m.addresses || null, m.error || null])).digest();
}

/** Whether an answer carries the host's HMAC. */
function signedByHost(key, m) {
  if (!key || key.length < 32 || typeof m.mac !== 'string') return false;
  const given = Buffer.from(m.mac, 'hex');
  const expected = answerMac(key, m);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Turns the fence on, before the script runs: core's (`coreFence`, the worker's copy of
 * @vigil/core/child/fence.cjs) with this runner's rules. The host answers each `target-check` over
 * the IPC channel with a `target-answer` of the same id: the addresses checked, or an error,
 * signed with `key` (a Buffer). An answer without the host's signature is ignored.
 */
function installTargetFence(key, coreFence) {
  const { installNetworkFence, policyError } = coreFence;
  const post = process.send.bind(process);
  const send = (message) => {
    if (process.connected) post(message);
  };
  const pending = new Map();
  /** Every address the host answered: the only ones a socket handle may connect to. */
  const answered = new Set();
  process.on('message', (m) => {
    if (!m || m.type !== 'target-answer' || !pending.has(m.id) || !signedByHost(key, m)) return;
    const settle = pending.get(m.id);
    pending.delete(m.id);
    if (Array.isArray(m.addresses)) for (const a of m.addresses) if (a && typeof a.address === 'string') answered.add(a.address);
    settle(m);
  });

  /** The addresses the host checked for `host`, or an error it answered instead. */
  const ask = (host, port, family) => new Promise((resolve, reject) => {
    const id = randomUUID();
    pending.set(id, (m) => (Array.isArray(m.addresses) && m.addresses.length > 0
      ? resolve(m.addresses)
      : reject(policyError(String((m.error && m.error.message) || `The host did not answer for ${host}`), m.error && m.error.code))));
    send({ type: 'target-check', id, host, port, family });
  });

  /** A `lookup` for one connection: the host's answer for the name (or IP address) it was asked for. */
  const checkedLookup = (host, port) => (_name, options, callback) => {
    const opts = typeof options === 'object' && options !== null ? options : {};
    const done = typeof options === 'function' ? options : callback;
    ask(host, port, opts.family === 4 || opts.family === 6 ? opts.family : 0).then(
      (addresses) => (opts.all ? done(null, addresses) : done(null, addresses[0].address, addresses[0].family)),
      (err) => done(err),
    );
  };

  installNetworkFence({
    // Node looks up names only; an IP address is handed to the lookup under a name of its own
    // (that does not parse as an address), so that it is checked too.
    connectTcp: ({ host, port, options }) => ({ ...options, path: undefined, host: net.isIP(host) ? 'checked-address.invalid' : host, lookup: checkedLookup(host, port) }),
    allowsAddress: (address) => answered.has(address),
    refuse: ({ kind, what }) => {
      send({ type: 'target-refused', kind, what: String(what).slice(0, 200) });
      return policyError(`The target policy refused the script's ${kind} ${what}: under a target policy, scripts connect over TCP only, to addresses it allows`);
    },
  });
}

module.exports = { installTargetFence };
