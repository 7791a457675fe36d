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
 * is told of each): they are not needed to fetch a token, and a DNS server is set synchronously,
 * with no time to ask the host.
 *
 * Installed before the script's code runs, on the functions every such connection goes through
 * (net.Socket.prototype.connect, which tls and Node's fetch use too), made read-only. Like the
 * withheld modules it is a fence in JavaScript, not a wall (see the README). An answer counts only
 * with the host's HMAC over it, keyed by a secret the host handed over before the script ran and
 * that only this file's closure keeps: a script that rewrites the IPC channel can read the
 * questions and answers, but cannot make up an answer of its own.
 */
const net = require('node:net');
const dgram = require('node:dgram');
const dns = require('node:dns');
const { createHmac, randomUUID, timingSafeEqual } = require('node:crypto');

/** Replaces `name` where the chain of `object` defines it, read-only, so neither a subclass nor a prototype further up is a way around it. */
function fence(object, name, replacement) {
  let owner = object;
  while (owner && !Object.prototype.hasOwnProperty.call(owner, name)) owner = Object.getPrototypeOf(owner);
  Object.defineProperty(owner || object, name, { value: replacement, writable: false, configurable: false, enumerable: false });
}

/** The options and callback `net.Socket#connect` was called with, read as Node's own normalizeArgs reads them. */
function connectArgs(args) {
  // net.connect() hands over its normalized [options, callback].
  if (Array.isArray(args[0])) return { options: args[0][0] || {}, callback: typeof args[0][1] === 'function' ? args[0][1] : null };
  const last = args[args.length - 1];
  const callback = typeof last === 'function' ? last : null;
  const first = args[0];
  if (first !== null && typeof first === 'object') return { options: first, callback };
  if (typeof first === 'string' && !(Number(first) >= 0)) return { options: { path: first }, callback };
  return { options: { port: first, host: typeof args[1] === 'string' ? args[1] : undefined }, callback };
}

function policyError(message, code) {
  return Object.assign(new Error(message), { code: code || 'ETARGETPOLICY' });
}

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
 * Turns the fence on, before the script runs. The host answers each `target-check` over the IPC
 * channel with a `target-answer` of the same id: the addresses checked, or an error, signed with
 * `key` (a Buffer). An answer without the host's signature is ignored.
 */
function installTargetFence(key) {
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

  const refuse = (kind, what) => {
    send({ type: 'target-refused', kind, what: String(what).slice(0, 200) });
    return policyError(`The target policy refused the script's ${kind} ${what}: under a target policy, setup and teardown scripts connect over TCP only, to addresses it allows`);
  };

  const connect = net.Socket.prototype.connect;
  fence(net.Socket.prototype, 'connect', function checkedConnect(...args) {
    const given = connectArgs(args);
    // A plain copy, each of the caller's properties read once: what is checked is what connects
    // (a getter cannot answer one thing to the check and another to Node).
    const options = { ...given.options };
    const { callback } = given;
    if (options.path) {
      const error = refuse('local socket', options.path);
      // As a failed connection does: an 'error' event, after the caller has its socket.
      process.nextTick(() => this.destroy(error));
      return this;
    }
    const host = options.host === undefined || options.host === null || options.host === '' ? 'localhost' : String(options.host);
    // Node looks up names only; an IP address is handed to the lookup under a name of its own
    // (that does not parse as an address), so that it is checked too.
    const checked = { ...options, path: undefined, host: net.isIP(host) ? 'checked-address.invalid' : host, lookup: checkedLookup(host, Number(options.port) || 0) };
    return callback ? connect.call(this, checked, callback) : connect.call(this, checked);
  });

  // Below the sockets, their handles (TCP and Pipe, of libuv) connect. A script reaches them
  // through any socket's _handle, and a connect request through a setter on Object.prototype, so
  // the handles' own connect methods are fenced too: a TCP handle connects only to an address the
  // host answered, a Pipe handle to nothing (the process's own pipes are connected already).
  const handleOf = (options) => {
    const probe = new net.Socket();
    probe.on('error', () => {});
    connect.call(probe, options);
    const handle = probe._handle;
    probe.destroy();
    return Object.getPrototypeOf(handle);
  };
  // A lookup that fails at once: the TCP handle is made and nothing is connected.
  const tcp = handleOf({ host: 'handle.invalid', port: 1, lookup: (_n, _o, done) => process.nextTick(done, policyError('no lookup')) });
  for (const name of ['connect', 'connect6']) {
    const original = tcp[name];
    fence(tcp, name, function checkedHandleConnect(req, address, port, ...rest) {
      if (!answered.has(String(address))) throw refuse('direct connection', `${address}:${port}`);
      return original.call(this, req, address, port, ...rest);
    });
  }
  const stdio = process.stdout && process.stdout._handle;
  const pipe = stdio && stdio.constructor && stdio.constructor.name === 'Pipe'
    ? Object.getPrototypeOf(stdio)
    : handleOf({ path: `vigil-fence-${randomUUID()}.sock` });
  fence(pipe, 'connect', function refusedPipeConnect(_req, path) {
    throw refuse('local socket', path);
  });

  const udp = (name) => function refusedUdp() {
    throw refuse('UDP socket', `(dgram ${name})`);
  };
  for (const name of ['bind', 'connect', 'send']) fence(dgram.Socket.prototype, name, udp(name));

  const servers = function refusedSetServers(list) {
    throw refuse('DNS servers', Array.isArray(list) ? list.join(', ') : String(list));
  };
  fence(dns, 'setServers', servers);
  fence(dns.Resolver.prototype, 'setServers', servers);
  fence(dns.promises, 'setServers', servers);
  fence(dns.promises.Resolver.prototype, 'setServers', servers);
  // The resolvers' own handle (c-ares), which a script reaches through resolver._handle.
  fence(Object.getPrototypeOf(new dns.Resolver()._handle), 'setServers', servers);
}

module.exports = { installTargetFence };
