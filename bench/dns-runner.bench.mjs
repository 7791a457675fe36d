// DNS checks per second of @vigil/runner-dns against a name server on 127.0.0.1 in a child
// process, beside a plain resolver loop in the same run: node:dns's Resolver (c-ares) asking the
// same server the same question (shop.test A). Both keep the same number of queries in flight and
// both check the answer holds 192.0.2.10.
import { fork } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { fileURLToPath } from 'node:url';
import { alternate, passingRun } from './throughput.mjs';

const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 50);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ADDRESS = '192.0.2.10';

async function serve() {
  const packet = (await import('dns-packet')).default;
  const socket = createSocket('udp4');
  socket.on('message', (msg, from) => {
    const query = packet.decode(msg);
    const question = query.questions[0];
    const answers = question.name === 'shop.test' && question.type === 'A' ? [{ name: question.name, type: 'A', ttl: 300, class: 'IN', data: ADDRESS }] : [];
    const out = packet.encode({ type: 'response', id: query.id, flags: packet.AUTHORITATIVE_ANSWER | (answers.length ? 0 : 3), questions: query.questions, answers });
    socket.send(out, from.port, from.address);
  });
  socket.bind(0, '127.0.0.1', () => process.send({ port: socket.address().port }));
  process.on('disconnect', () => process.exit(0));
}


async function main() {
  const { dnsRunner } = await import('@vigil/runner-dns');
  const { dnsCheckFixture } = await import('@vigil/core/testing');
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit' });
  const { port } = await new Promise((resolve) => child.once('message', resolve));

  const runner = dnsRunner();
  const check = dnsCheckFixture({
    accountId: 'bench',
    request: {
      query: 'shop.test', recordType: 'A', nameServer: '127.0.0.1', port, protocol: 'UDP',
      assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: ADDRESS, regex: null }],
    },
  });
  const viaRunner = passingRun(runner, check);
  // One c-ares channel per worker, as the runner has one socket per query in flight.
  const resolvers = Array.from({ length: IN_FLIGHT }, () => {
    const r = new dns.Resolver({ timeout: 10_000, tries: 1 });
    r.setServers([`127.0.0.1:${port}`]);
    return r;
  });
  const viaResolver = async (_signal, worker) => {
    const answers = await resolvers[worker].resolve4('shop.test');
    if (!answers.includes(ADDRESS)) throw new Error('wrong answer');
  };

  // Warm both paths, then alternate rounds so that both see the same machine; the median round of each.
  const measured = await alternate(viaRunner, viaResolver, { inFlight: IN_FLIGHT, roundMs: ROUND_MS, rounds: ROUNDS });
  child.disconnect();

  const best = { runner: measured.vigil, resolver: measured.baseline };
  const ratio = best.runner / best.resolver;
  console.log(`${IN_FLIGHT} in flight, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each, median round of each`);
  console.log('figure                                                  vigil            baseline           vigil/baseline');
  console.log(`${'DNS check, A over UDP on 127.0.0.1 (vs node:dns loop)'.padEnd(52)} ${best.runner.toFixed(0).padStart(8)}/s   baseline ${best.resolver.toFixed(0).padStart(8)}/s   ratio ${ratio.toFixed(2)}`);
  console.log(`target: ratio >= 0.80: ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
}

if (process.argv[2] === 'serve') await serve();
else await main();
