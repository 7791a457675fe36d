'use strict';
/*
 * The script's own network under a target policy. A browser check's pages reach the network
 * through the host's proxy, which checks every address they connect to; the script's process
 * itself opens no connection at all: every TCP connection (http, https, fetch, WebSocket clients,
 * raw sockets however obtained) and unix socket, every UDP socket, and DNS servers of the
 * script's choosing are refused, and each refusal is reported to the host, so that the run fails
 * even when the script catches the error. The worker itself talks to the browser over its IPC
 * channel and needs none of them.
 *
 * Installed before the script's code runs, on the functions every such connection goes through
 * (net.Socket.prototype.connect, which tls and Node's fetch use too), made read-only. Like the
 * withheld modules it is a fence in JavaScript, not a wall (see the README).
 */
const net = require('node:net');
const dgram = require('node:dgram');
const dns = require('node:dns');

const REASON = 'under the host\'s target policy a browser check\'s script opens no connection of its own; its pages reach the network through the browser, whose every connection is checked';

function refusal(what) {
  return Object.assign(new Error(`The target policy refused the script's connection to ${what}: ${REASON}`), { code: 'ETARGETPOLICY' });
}

/** Replaces `name` where the chain of `object` defines it, read-only, so neither a subclass nor a prototype further up is a way around it. */
function fence(object, name, replacement) {
  let owner = object;
  while (owner && !Object.prototype.hasOwnProperty.call(owner, name)) owner = Object.getPrototypeOf(owner);
  Object.defineProperty(owner || object, name, { value: replacement, writable: false, configurable: false, enumerable: false });
}

/** The connection `net.Socket#connect` was asked for, as `{ host, port }` or `{ path }`. */
function target(args) {
  // net.connect() hands over its normalized [options, callback].
  let first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) };
  if (typeof first === 'string') return { path: first };
  if (!first || typeof first !== 'object') first = {};
  // As net does: a path (http's options carry `path: null`) makes it a unix socket or pipe.
  if (first.path) return { path: String(first.path) };
  return { host: first.host === undefined ? 'localhost' : String(first.host), port: Number(first.port) || 0 };
}

/**
 * Turns the fence on. `report({ host, port })` tells the host of each refused connection.
 * Called once, before the script runs.
 */
function installNetworkFence(report) {
  const connect = net.Socket.prototype.connect;
  fence(net.Socket.prototype, 'connect', function fencedConnect(...args) {
    const to = target(args);
    const what = to.path !== undefined ? `the local socket ${to.path}` : `${to.host}:${to.port}`;
    report(to.path !== undefined ? { host: to.path, port: 0 } : { host: to.host, port: to.port });
    const error = refusal(what);
    // As a failed connection does: an 'error' event, after the caller has its socket.
    process.nextTick(() => this.destroy(error));
    return this;
  });

  // Below the sockets, their handles (TCP and Pipe, of libuv) connect. A script reaches a handle
  // through a stream's _handle (process.stdout's is a Pipe) and a request object through a setter
  // on Object.prototype, so the handles' own connect methods are fenced too.
  const handleOf = (options) => {
    const probe = new net.Socket();
    probe.on('error', () => {});
    connect.call(probe, options);
    const handle = probe._handle;
    probe.destroy();
    return Object.getPrototypeOf(handle);
  };
  // A lookup that fails at once: the TCP handle is made and nothing is connected.
  const tcp = handleOf({ host: 'handle.invalid', port: 1, lookup: (_n, _o, done) => process.nextTick(done, new Error('no lookup')) });
  for (const name of ['connect', 'connect6']) {
    fence(tcp, name, function fencedHandleConnect(_req, address, port) {
      report({ host: String(address), port: Number(port) || 0 });
      throw refusal(`${address}:${port}`);
    });
  }
  const stdio = process.stdout && process.stdout._handle;
  const pipe = stdio && stdio.constructor && stdio.constructor.name === 'Pipe'
    ? Object.getPrototypeOf(stdio)
    : handleOf({ path: `vigil-fence-${process.pid}.sock` });
  fence(pipe, 'connect', function fencedPipeConnect(_req, path) {
    report({ host: String(path), port: 0 });
    throw refusal(`the local socket ${path}`);
  });

  const udp = (name) => function fencedUdp() {
    report({ host: 'udp', port: 0 });
    throw refusal(`UDP (dgram ${name})`);
  };
  for (const name of ['bind', 'connect', 'send']) fence(dgram.Socket.prototype, name, udp(name));

  const servers = function fencedSetServers(list) {
    report({ host: `DNS servers ${Array.isArray(list) ? list.join(', ') : String(list)}`, port: 0 });
    throw refusal('DNS servers of its own (setServers)');
  };
  fence(dns, 'setServers', servers);
  fence(dns.Resolver.prototype, 'setServers', servers);
  fence(dns.promises, 'setServers', servers);
  fence(dns.promises.Resolver.prototype, 'setServers', servers);
}

module.exports = { installNetworkFence };
