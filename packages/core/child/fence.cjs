'use strict';
/*
 * What every process that runs a check's own code (an API check's setup and teardown, a browser
 * check's script) sets up before that code runs, shared by the runners' child files: plain
 * CommonJS that loads Node's own modules only, so it needs no build and is read as it is shipped
 * (`@vigil/core/child/fence.cjs`). A runner's host lets the process read this file.
 *
 * - exitWithHost(): the process ends with its host.
 * - installNetworkFence(rules): the script's own network under the host's target policy. Every
 *   TCP connection (http, https, fetch, WebSocket clients, raw sockets however obtained) goes
 *   through `rules.connectTcp`, which the runner decides on; unix sockets, UDP sockets and DNS
 *   servers of the script's own choosing are refused outright, also when reached below the
 *   sockets, through the libuv handles (TCP, Pipe) and the resolvers' c-ares handle.
 *
 * The fence is installed on the functions every such connection goes through
 * (net.Socket.prototype.connect, which tls and Node's fetch use too), made read-only. Like the
 * withheld modules it is a fence in JavaScript, not a wall (see the runners' READMEs).
 */
const net = require('node:net');
const dgram = require('node:dgram');
const dns = require('node:dns');
const { randomUUID } = require('node:crypto');

/*
 * The process ends with its host: at once when the IPC channel closes (the host exited or was
 * killed), and within a second when its parent is no longer the host (a channel held open
 * elsewhere), without running any exit handler a script left behind. Code stuck in a synchronous
 * loop notices neither: the host's watcher (endWithHost of @vigil/core) kills it then. Call it
 * first, before any script runs: Node's own exit is taken then (process.exit and process.kill
 * look up process.reallyExit and process._kill when called, and both may be replaced or taken
 * away later).
 */
function exitWithHost() {
  const reallyExit = process.reallyExit;
  const endProcess = () => reallyExit.call(process, 1);
  const host = process.ppid;
  if (!process.connected) endProcess();
  process.on('disconnect', endProcess);
  setInterval(() => {
    if (process.ppid !== host) endProcess();
  }, 1_000).unref();
}

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

/** A refused connection's error: code ETARGETPOLICY unless another is given. */
function policyError(message, code) {
  return Object.assign(new Error(message), { code: code || 'ETARGETPOLICY' });
}

/**
 * Turns the fence on, once, before the script runs. The runner's `rules`:
 *
 * - `connectTcp({ host, port, options })`: a socket's TCP connection (`host` 'localhost' when the
 *   caller gave none; `options` a plain copy of the caller's, each property read once, so what is
 *   checked is what connects). It answers the options to connect with, or an Error: the socket
 *   then fails with it, as a failed connection does (an 'error' event, after the caller has it).
 * - `allowsAddress(address)`: whether a TCP handle may connect to this IP address directly.
 * - `refuse({ kind, what, host, port })`: the Error for what is refused outright; the runner
 *   tells its host of it here. `kind` is 'local socket' (what: the path), 'direct connection'
 *   (what: address:port), 'UDP socket' (what: "(dgram bind)") or 'DNS servers' (what: the list).
 */
function installNetworkFence(rules) {
  const connect = net.Socket.prototype.connect;
  fence(net.Socket.prototype, 'connect', function fencedConnect(...args) {
    const given = connectArgs(args);
    const options = { ...given.options };
    const host = options.host === undefined || options.host === null || options.host === '' ? 'localhost' : String(options.host);
    const decided = options.path
      ? rules.refuse({ kind: 'local socket', what: String(options.path), host: String(options.path), port: 0 })
      : rules.connectTcp({ host, port: Number(options.port) || 0, options });
    if (decided instanceof Error) {
      process.nextTick(() => this.destroy(decided));
      return this;
    }
    return given.callback ? connect.call(this, decided, given.callback) : connect.call(this, decided);
  });

  // Below the sockets, their handles (TCP and Pipe, of libuv) connect. A script reaches a handle
  // through any stream's _handle (process.stdout's is a Pipe) and a connect request through a
  // setter on Object.prototype, so the handles' own connect methods are fenced too: a TCP handle
  // connects only to an address the rules allow, a Pipe handle to nothing (the process's own
  // pipes are connected already).
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
    fence(tcp, name, function fencedHandleConnect(req, address, port, ...rest) {
      if (!rules.allowsAddress(String(address))) {
        throw rules.refuse({ kind: 'direct connection', what: `${address}:${port}`, host: String(address), port: Number(port) || 0 });
      }
      return original.call(this, req, address, port, ...rest);
    });
  }
  const stdio = process.stdout && process.stdout._handle;
  const pipe = stdio && stdio.constructor && stdio.constructor.name === 'Pipe'
    ? Object.getPrototypeOf(stdio)
    : handleOf({ path: `vigil-fence-${randomUUID()}.sock` });
  fence(pipe, 'connect', function fencedPipeConnect(_req, path) {
    throw rules.refuse({ kind: 'local socket', what: String(path), host: String(path), port: 0 });
  });

  const udp = (name) => function fencedUdp() {
    throw rules.refuse({ kind: 'UDP socket', what: `(dgram ${name})`, host: 'udp', port: 0 });
  };
  for (const name of ['bind', 'connect', 'send']) fence(dgram.Socket.prototype, name, udp(name));

  // A DNS server is set synchronously, with no time to ask the host: refused outright.
  const servers = function fencedSetServers(list) {
    const what = Array.isArray(list) ? list.join(', ') : String(list);
    throw rules.refuse({ kind: 'DNS servers', what, host: `DNS servers ${what}`, port: 0 });
  };
  fence(dns, 'setServers', servers);
  fence(dns.Resolver.prototype, 'setServers', servers);
  fence(dns.promises, 'setServers', servers);
  fence(dns.promises.Resolver.prototype, 'setServers', servers);
  // The resolvers' own handle (c-ares), which a script reaches through resolver._handle.
  fence(Object.getPrototypeOf(new dns.Resolver()._handle), 'setServers', servers);
}

module.exports = { exitWithHost, installNetworkFence, policyError };
