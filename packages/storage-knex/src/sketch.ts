import { DDSketch } from '@datadog/sketches-js';

/**
 * Relative accuracy of the roll-ups' sketches: every quantile a sketch answers is within 1% of a
 * value at that rank, so a percentile merged from roll-ups is within 2% of the exact one.
 */
export const RELATIVE_ACCURACY = 0.01;

/** A sketch's content: how many zeros, and its non-empty bins as `[key, count, key, count, ...]`, keys ascending. */
export interface SketchBins {
  zero: number;
  positive: number[];
  negative: number[];
}

/** What a roll-up keeps of one field (response time, attempts, or a phase) over its hour. */
export interface Stats {
  n: number;
  sum: number;
  /** Sum of squared deviations from the mean (merged as Chan et al. do), so a spread of near-equal large values survives. */
  m2: number;
  min: number;
  max: number;
  bins: SketchBins;
}

/** A field's stats as `rollups()` answers them (and as roll-ups once stored them, JSON): the sketch as text. */
export interface FieldStats extends Omit<Stats, 'bins'> {
  /** The DDSketch of the values, as `encodeSketch` writes it. */
  sketch: string;
}

export const newSketch = () => new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });

type Store = DDSketch['store'];

function storeBins(store: Store): number[] {
  const out: number[] = [];
  store.bins.forEach((count, i) => {
    if (count) out.push(i + store.offset, count);
  });
  return out;
}

export const binsOf = (sketch: DDSketch): SketchBins => ({ zero: sketch.zeroCount, positive: storeBins(sketch.store), negative: storeBins(sketch.negativeStore) });

/** Adds bins into `sketch` (a merge): each bin's value maps to its own key again. */
export function addBins(sketch: DDSketch, bins: SketchBins): DDSketch {
  if (bins.zero > 0) sketch.accept(0, bins.zero);
  for (let i = 0; i < bins.positive.length; i += 2) sketch.accept(sketch.mapping.value(bins.positive[i]!), bins.positive[i + 1]!);
  for (let i = 0; i < bins.negative.length; i += 2) sketch.accept(-sketch.mapping.value(bins.negative[i]!), bins.negative[i + 1]!);
  return sketch;
}

/** Two ascending bin lists as one, counts of the same key added. */
function mergeBinList(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i]!, a[i + 1]!), (i += 2);
    else if (i >= a.length || b[j]! < a[i]!) out.push(b[j]!, b[j + 1]!), (j += 2);
    else out.push(a[i]!, a[i + 1]! + b[j + 1]!), (i += 2), (j += 2);
  }
  return out;
}

/** Bins as text, `keyDelta:count` pairs, each key from the one before. */
function binText(bins: number[]): string {
  const out: string[] = [];
  for (let i = 0, prev = 0; i < bins.length; prev = bins[i]!, i += 2) out.push(`${bins[i]! - prev}:${bins[i + 1]}`);
  return out.join(',');
}

function parseBinText(text: string): number[] {
  const out: number[] = [];
  let key = 0;
  for (const pair of text ? text.split(',') : []) {
    const [delta, count] = pair.split(':');
    key += Number(delta);
    out.push(key, Number(count));
  }
  return out;
}

/** A sketch as text: `zeroCount;positive bins;negative bins` (how `rollups()` shows it). */
export const encodeSketch = (sketch: DDSketch): string => binsText(binsOf(sketch));
const binsText = (b: SketchBins) => `${b.zero};${binText(b.positive)};${binText(b.negative)}`;

export function parseSketch(text: string): SketchBins {
  const [zero = '0', positive = '', negative = ''] = text.split(';');
  return { zero: Number(zero), positive: parseBinText(positive), negative: parseBinText(negative) };
}

/** The sketch back from its text. */
export const decodeSketch = (text: string): DDSketch => addBins(newSketch(), parseSketch(text));

export const toFieldStats = ({ bins, ...s }: Stats): FieldStats => ({ ...s, sketch: binsText(bins) });
export const fromFieldStats = ({ sketch, ...s }: FieldStats): Stats => ({ ...s, bins: parseSketch(sketch) });

export function fieldStats(values: readonly number[]): Stats {
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
  return { n: values.length, sum, m2, min, max, bins: binsOf(sketch) };
}

/** The squared deviations of two parts together, from each part's own. */
export function mergeM2(a: { n: number; sum: number; m2: number }, b: { n: number; sum: number; m2: number }): number {
  if (a.n === 0 || b.n === 0) return a.m2 + b.m2;
  const delta = b.sum / b.n - a.sum / a.n;
  return a.m2 + b.m2 + (delta * delta * a.n * b.n) / (a.n + b.n);
}

export function mergeStats(a: Stats | undefined, b: Stats | undefined): Stats | undefined {
  if (!a || !b) return a ?? b;
  const bins = { zero: a.bins.zero + b.bins.zero, positive: mergeBinList(a.bins.positive, b.bins.positive), negative: mergeBinList(a.bins.negative, b.bins.negative) };
  return { n: a.n + b.n, sum: a.sum + b.sum, m2: mergeM2(a, b), min: Math.min(a.min, b.min), max: Math.max(a.max, b.max), bins };
}

/**
 * percentile_cont read from a sketch: the values at the two ranks around q * (n - 1), each within
 * the sketch's relative accuracy of the exact one, interpolated as PostgreSQL does. (The sketch's
 * own quantile answers the lower rank only, which in a sparse tail can lie well below.)
 */
export function interpolated(sketch: DDSketch, q: number): number {
  const n = sketch.count;
  const pos = q * (n - 1);
  const lo = Math.floor(pos);
  // Halfway into a rank, so that rounding cannot tip the sketch into the rank below.
  const at = (rank: number) => sketch.getValueAtQuantile(Math.min(1, (rank + 0.5) / Math.max(1, n - 1)));
  const low = at(lo);
  return pos > lo ? low + (at(lo + 1) - low) * (pos - lo) : low;
}
