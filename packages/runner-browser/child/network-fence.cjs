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
 * The fence, on the functions every such connection goes through and the handles below them, is
 * core's (@vigil/core/child/fence.cjs, bundled with the worker in the built package); this file
 * gives it the browser runner's rule: refuse everything.
 */
const { installNetworkFence: installCoreFence } = require('@vigil/core/child/fence.cjs');

const REASON = 'under the host\'s target policy a browser check\'s script opens no connection of its own; its pages reach the network through the browser, whose every connection is checked';

function refusal(what) {
  return Object.assign(new Error(`The target policy refused the script's connection to ${what}: ${REASON}`), { code: 'ETARGETPOLICY' });
}

/** How a refusal's message names what was refused, by the kind core's fence reports. */
const DESCRIBE = {
  'local socket': (what) => `the local socket ${what}`,
  'direct connection': (what) => what,
  'UDP socket': (what) => `UDP ${what}`,
  'DNS servers': () => 'DNS servers of its own (setServers)',
};

/**
 * Turns the fence on. `report({ host, port })` tells the host of each refused connection.
 * Called once, before the script runs.
 */
function installNetworkFence(report) {
  const refuse = ({ kind, what, host, port }) => {
    report({ host, port });
    return refusal((DESCRIBE[kind] || String)(what));
  };
  installCoreFence({
    connectTcp: ({ host, port }) => refuse({ kind: 'connection', what: `${host}:${port}`, host, port }),
    allowsAddress: () => false,
    refuse,
  });
}

module.exports = { installNetworkFence };
