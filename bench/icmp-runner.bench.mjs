// ICMP checks per second of @vigil/runner-icmp pinging 127.0.0.1, beside a plain ping loop in the
// same run: the system's ping spawned with one echo request to the same address, its output read
// for the reply. Each ICMP run is a ping process, so both pay the same spawn; the ratio is what the
// runner adds (the check's lookup, the parse, the verdict and the result).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { alternate, passingRun } from './throughput.mjs';

const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 8);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const run = promisify(execFile);

const { icmpRunner } = await import('@vigil/runner-icmp');
const { icmpCheckFixture } = await import('@vigil/core/testing');

const runner = icmpRunner();
const check = icmpCheckFixture({ accountId: 'bench', request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 1, timeout: 1000, assertions: [] } });
const viaRunner = passingRun(runner, check);
const viaPing = async () => {
  const { stdout } = await run('ping', ['-n', '-c', '1', '-W', '1', '-4', '127.0.0.1'], { env: { LC_ALL: 'C', PATH: process.env.PATH } });
  if (!/ 1 received/.test(stdout)) throw new Error('no reply');
};

// Warm both paths, then alternate rounds so that both see the same machine; the median round of each.
const measured = await alternate(viaRunner, viaPing, { inFlight: IN_FLIGHT, roundMs: ROUND_MS, rounds: ROUNDS });
const ratio = measured.vigil / measured.baseline;
console.log(`${IN_FLIGHT} in flight, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each, median round of each`);
console.log('figure                                                  vigil            baseline           vigil/baseline');
console.log(`${'ICMP check, 1 ping to 127.0.0.1 (vs a plain ping loop)'.padEnd(52)} ${measured.vigil.toFixed(0).padStart(8)}/s   baseline ${measured.baseline.toFixed(0).padStart(8)}/s   ratio ${ratio.toFixed(2)}`);
console.log(`target: ratio >= 0.80: ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
