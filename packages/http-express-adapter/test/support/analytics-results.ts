/**
 * The results the analytics tests store: deterministic (a seeded generator), varied, with the
 * awkward cases a real check produces (ties, missing phases, every status, edges of the window).
 */
import type { CheckResult, NewRecord } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import { seededRandom as random } from '@vigil/core/testing';

export type Result = NewRecord<CheckResult>;
export type Point = Record<string, string | number | null>;
export type Kind = 'api' | 'tcp';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** The harness clock's time; the API's quick ranges end here. */
export const NOW = Date.parse('2026-05-01T12:00:00.000Z');

export const SUFFIXES = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'];
export const BASES: Record<Kind, string[]> = {
  api: ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download'],
  tcp: ['total', 'dns', 'connection', 'data'],
};
export const allMetrics = (kind: Kind) => [
  ...BASES[kind],
  'availability',
  'retries',
  ...BASES[kind].flatMap((b) => SUFFIXES.map((s) => `${b}_${s}`)),
];

// The stored results: deterministic, varied, with the awkward cases a real check produces.

const ms3 = (x: number) => Math.round(x * 1000) / 1000;

/** Times of the runs: dense over the last day, sparse over the 40 days before, and the edges. */
function runTimes(rnd: () => number): number[] {
  const times: number[] = [];
  for (let t = NOW - DAY; t < NOW; t += 5 * MIN) times.push(t + Math.floor(rnd() * 4 * MIN));
  for (let i = 0; i < 90; i++) times.push(NOW - DAY - Math.floor(rnd() * 40 * DAY));
  // The first instant of the default window is inside it, the last (now) and later are not.
  times.push(NOW - DAY, NOW - DAY - 1, NOW, NOW + MIN);
  // On an hour's bucket edge, and the millisecond before it.
  times.push(NOW - 6 * HOUR, NOW - 6 * HOUR - 1);
  return times;
}

const LOCATIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];

export function apiResults(checkId: string, seed: number): Result[] {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  return runTimes(rnd).map((t) => {
    const roll = rnd();
    const runLocation = pick(LOCATIONS);
    // Whole-millisecond DNS times repeat often: ties for the percentiles.
    const dns = Math.floor(rnd() * 6);
    const common = { checkType: 'API', name: 'orders API', runLocation, startedAt: new Date(t).toISOString() };
    if (roll < 0.08) {
      // Connection refused: no status code, no phase after DNS, retried.
      const responseTime = ms3(dns + 1 + rnd() * 3);
      return checkResultFixture(checkId, { ...common, responseTime, hasErrors: true, statusCode: null, attempts: 1 + Math.floor(rnd() * 3), phases: { dns, total: responseTime } });
    }
    const tcp = ms3(1 + rnd() * 40);
    const tls = ms3(5 + rnd() * 60);
    const wait = ms3(20 + rnd() ** 3 * 900);
    const download = ms3(rnd() * 25);
    const firstByte = ms3(dns + tcp + tls + wait);
    const responseTime = ms3(firstByte + download);
    const failing = roll < 0.2;
    return checkResultFixture(checkId, {
      ...common,
      responseTime,
      statusCode: failing ? pick([500, 502, 404]) : pick([200, 200, 200, 201, 204]),
      hasFailures: failing,
      isDegraded: !failing && roll > 0.9,
      attempts: failing ? 1 + Math.floor(rnd() * 3) : 1,
      phases: { dns, tcp, tls, firstByte, download, wait, total: responseTime },
    });
  });
}

export function tcpResults(checkId: string, seed: number): Result[] {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  return runTimes(rnd).map((t) => {
    const roll = rnd();
    const dns = Math.floor(rnd() * 4);
    const common = { checkType: 'TCP', name: 'db', runLocation: pick(LOCATIONS), startedAt: new Date(t).toISOString() };
    if (roll < 0.1) {
      const responseTime = ms3(dns + rnd() * 2);
      return checkResultFixture(checkId, { ...common, responseTime, hasErrors: true, attempts: 1 + Math.floor(rnd() * 3), phases: { dns, total: responseTime } });
    }
    const connection = ms3(0.5 + rnd() * 30);
    // A third of the runs send no data: no data phase.
    const data = rnd() < 0.33 ? undefined : ms3(rnd() ** 2 * 400);
    const responseTime = ms3(dns + connection + (data ?? 0));
    return checkResultFixture(checkId, {
      ...common,
      responseTime,
      hasFailures: roll < 0.18,
      isDegraded: roll > 0.85,
      attempts: roll < 0.18 ? 2 : 1,
      phases: { dns, connection, ...(data === undefined ? {} : { data }), total: responseTime },
    });
  });
}

/**
 * Runs that all hit the same timeout, in a location of their own inside one hour: near-equal large
 * values, whose spread a sum-of-squares variance loses to cancellation.
 */
export function timeouts(kind: Kind, checkId: string): Result[] {
  const start = NOW - 5 * HOUR + 3 * MIN;
  return [0.125, 0.25, 0.25, 0.375, 0.5, 0.625].map((frac, i) => {
    const total = 30_000 + frac;
    const phases: Record<string, number> = kind === 'api'
      ? { dns: 2 + frac, tcp: 3 + frac, tls: 10 + frac, firstByte: 29_990 + frac, download: 10 + frac / 2, wait: 29_975 + frac, total }
      : { dns: 2 + frac, connection: 29_990 + frac, data: 8 + frac, total };
    return checkResultFixture(checkId, {
      checkType: kind.toUpperCase(),
      runLocation: 'af-south-1',
      startedAt: new Date(start + i * 7 * MIN).toISOString(),
      responseTime: total,
      statusCode: kind === 'api' ? 504 : null,
      hasFailures: true,
      attempts: 3,
      phases,
    });
  });
}

/** Rows that must never count: tries a retry followed, and results of other checks or accounts. */
export function noise(kind: Kind, checkId: string, otherCheckId: string): Result[] {
  const wild = (id: string, t: number, over: Partial<Result> = {}) => checkResultFixture(id, {
    checkType: kind.toUpperCase(),
    startedAt: new Date(t).toISOString(),
    responseTime: 99_999,
    statusCode: kind === 'api' ? 200 : null,
    phases: { dns: 9_999, tcp: 9_999, tls: 9_999, firstByte: 9_999, download: 9_999, wait: 9_999, connection: 9_999, data: 9_999, total: 99_999 },
    ...over,
  });
  return [
    wild(checkId, NOW - 3 * HOUR, { resultType: 'ATTEMPT', hasFailures: true }),
    wild(checkId, NOW - 2 * DAY, { resultType: 'ATTEMPT', hasErrors: true }),
    wild(otherCheckId, NOW - 3 * HOUR),
    wild(otherCheckId, NOW - 3 * DAY),
  ];
}
