import { DDSketch } from '@datadog/sketches-js';

/**
 * Relative accuracy of the roll-ups' sketches: every quantile a sketch answers is within 1% of a
 * value at that rank, so a percentile merged from roll-ups is within 2% of the exact one.
 */
export const RELATIVE_ACCURACY = 0.01;

/** What a roll-up keeps of one field (response time, attempts, or a phase) over its hour. */
export interface FieldStats {
  n: number;
  sum: number;
  /** Sum of squared deviations from the mean (merged as Chan et al. do), so a spread of near-equal large values survives. */
  m2: number;
  min: number;
  max: number;
  /** The DDSketch of the values, as `encodeSketch` writes it. */
  sketch: string;
}

export const newSketch = () => new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });

type Store = DDSketch['store'];

/** A store's non-empty bins as `keyDelta:count` pairs, each key from the one before. */
function bins(store: Store): string {
  const out: string[] = [];
  let prev = 0;
  store.bins.forEach((count, i) => {
    if (!count) return;
    const key = i + store.offset;
    out.push(`${key - prev}:${count}`);
    prev = key;
  });
  return out.join(',');
}

function addBins(text: string, add: (key: number, count: number) => void): void {
  let key = 0;
  for (const pair of text ? text.split(',') : []) {
    const [delta, count] = pair.split(':');
    key += Number(delta);
    add(key, Number(count));
  }
}

/**
 * A sketch as text: `zeroCount;positive bins;negative bins`. Its protobuf (toProto) would do, but
 * reading 720 of them (30 days of an hourly roll-up) through protobuf and inflate takes a few
 * hundred milliseconds, this a few; an hour of one run a minute is about 300 characters.
 */
export function encodeSketch(sketch: DDSketch): string {
  return `${sketch.zeroCount};${bins(sketch.store)};${bins(sketch.negativeStore)}`;
}

/** The sketch back. */
export const decodeSketch = (text: string): DDSketch => addSketch(newSketch(), text);

/** Adds an encoded sketch into `sketch` (a merge): each bin's value maps to its own key again. */
export function addSketch(sketch: DDSketch, text: string): DDSketch {
  const [zero = '0', positive = '', negative = ''] = text.split(';');
  if (Number(zero) > 0) sketch.accept(0, Number(zero));
  addBins(positive, (key, count) => sketch.accept(sketch.mapping.value(key), count));
  addBins(negative, (key, count) => sketch.accept(-sketch.mapping.value(key), count));
  return sketch;
}

export function fieldStats(values: readonly number[]): FieldStats {
  const sketch = newSketch();
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sketch.accept(v);
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / values.length;
  const m2 = values.reduce((a, v) => a + (v - mean) * (v - mean), 0);
  return { n: values.length, sum, m2, min, max, sketch: encodeSketch(sketch) };
}

/** The squared deviations of two parts together, from each part's own. */
export function mergeM2(a: { n: number; sum: number; m2: number }, b: { n: number; sum: number; m2: number }): number {
  if (a.n === 0 || b.n === 0) return a.m2 + b.m2;
  const delta = b.sum / b.n - a.sum / a.n;
  return a.m2 + b.m2 + (delta * delta * a.n * b.n) / (a.n + b.n);
}

export function mergeStats(a: FieldStats | undefined, b: FieldStats | undefined): FieldStats | undefined {
  if (!a || !b) return a ?? b;
  const sketch = decodeSketch(a.sketch);
  sketch.merge(decodeSketch(b.sketch));
  return { n: a.n + b.n, sum: a.sum + b.sum, m2: mergeM2(a, b), min: Math.min(a.min, b.min), max: Math.max(a.max, b.max), sketch: encodeSketch(sketch) };
}
