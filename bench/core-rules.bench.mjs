// Core rules on the hot paths of later work: validating check bodies (every API write) and
// computing next run times (the scheduler). Each figure stands beside a baseline measured here.
import { parse, TcpCheckCreateSchema } from '@vigil/core';
import { nextRunAt } from '@vigil/core/internals';

function time(fn, rounds = 5) {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return best;
}

const N = 10_000;
const bodies = Array.from({ length: N }, (_, i) => ({
  name: `check ${i}`,
  request: { hostname: `db-${i}.internal`, port: 5432, assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200' }] },
  frequency: 5,
  frequencyOffset: (i % 50) + 1,
  tags: ['prod', 'db'],
}));
const parseMs = time(() => { for (const b of bodies) parse(TcpCheckCreateSchema, b); });
const cloneMs = time(() => { for (const b of bodies) JSON.parse(JSON.stringify(b)); });

const M = 100_000;
const checks = Array.from({ length: M }, (_, i) => ({ id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, frequency: [1, 5, 10, 60][i % 4], frequencyOffset: null }));
const after = new Date('2026-05-01T12:00:00Z');
const nextMs = time(() => { for (const c of checks) nextRunAt(c, after); });
// Baseline: the same arithmetic with the phase already known (what a cached phase would cost).
const phases = checks.map((c, i) => (i * 7919) % (c.frequency * 60_000));
const plainMs = time(() => {
  for (let i = 0; i < M; i++) {
    const period = checks[i].frequency * 60_000;
    const k = Math.floor((after.getTime() - phases[i]) / period) + 1;
    new Date(phases[i] + k * period);
  }
});

const row = (what, ms, base, n) => console.log(`${what.padEnd(44)} ${(n / ms * 1000).toFixed(0).padStart(10)}/s   baseline ${(n / base * 1000).toFixed(0).padStart(10)}/s   ratio ${(base / ms).toFixed(2)}`);
console.log('figure                                             vigil        baseline              vigil/baseline');
row('TCP check body validation (vs JSON clone)', parseMs, cloneMs, N);
row('nextRunAt, 100k checks (vs cached-phase math)', nextMs, plainMs, M);
