// TCP checks per second of @vigil/runner-tcp against a local echo server in a child process,
// beside a plain net.connect loop doing the same exchange in the same run: connect to 127.0.0.1,
// send "PING\r\n", read until the server closes, see that the answer holds PING. Both keep the
// same number of exchanges in flight. The server answers each request and closes, as
// request/response services do; a server that keeps the connection open would add the runner's
// quiet period (responseQuietMs) to each check's wall time, though not to its response time.
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { alternate, passingRun } from './throughput.mjs';

const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 50);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const DATA = 'PING\r\n';
/** The runner's checks/s over the plain loop's, measured in the same run. */
const RATIO_GOAL = 0.85;

function serve() {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (chunk) => socket.end(chunk));
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
}

/** One exchange with nothing but node:net: what the runner does, minus the runner. */
function plainExchange(port) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    socket.once('connect', () => socket.write(DATA));
    socket.on('data', (c) => chunks.push(c));
    socket.once('end', () => {
      socket.destroy();
      const ok = Buffer.concat(chunks).toString('utf8').includes('PING');
      ok ? resolve() : reject(new Error('wrong answer'));
    });
    socket.once('error', reject);
  });
}


async function main() {
  const { tcpRunner } = await import('@vigil/runner-tcp');
  const { tcpCheckFixture } = await import('@vigil/core/testing');
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit' });
  const { port } = await new Promise((resolve) => child.once('message', resolve));

  const runner = tcpRunner();
  const check = tcpCheckFixture({
    accountId: 'bench',
    request: { hostname: '127.0.0.1', port, data: DATA, ipFamily: 'IPv4', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PING', property: '', regex: null }] },
  });
  const viaRunner = passingRun(runner, check);
  const viaNet = () => plainExchange(port);

  // Warm both paths (JIT, sockets) before measuring; then alternate rounds, so that both see the
  // same machine, and take the median round of each (loopback figures wander by 20 % here).
  const measured = await alternate(viaRunner, viaNet, { inFlight: IN_FLIGHT, roundMs: ROUND_MS, rounds: ROUNDS });
  child.disconnect();

  const best = { runner: measured.vigil, net: measured.baseline };
  const ratio = best.runner / best.net;
  const row = (what, vigil, base) => console.log(`${what.padEnd(52)} ${vigil.toFixed(0).padStart(8)}/s   baseline ${base.toFixed(0).padStart(8)}/s   ratio ${(vigil / base).toFixed(2)} (goal >= ${RATIO_GOAL.toFixed(2)}: ${vigil / base >= RATIO_GOAL ? 'met' : 'NOT met'})`);
  console.log(`${IN_FLIGHT} in flight, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each, median round of each`);
  console.log('figure                                                  vigil            baseline           vigil/baseline');
  row('TCP check, echo on 127.0.0.1 (vs net.connect loop)', best.runner, best.net);
  const met = best.runner >= 2_000 && ratio >= RATIO_GOAL;
  console.log(`targets: >= 2,000 checks/s and ratio >= ${RATIO_GOAL.toFixed(2)}: ${met ? 'met' : 'NOT met'}`);
}

if (process.argv[2] === 'serve') serve();
else await main();
