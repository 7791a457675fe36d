import { DDSketch } from '@datadog/sketches-js';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

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
  /** The DDSketch of the values: its protobuf (toProto), deflated, in base64. */
  sketch: string;
}

export const newSketch = () => new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });

// A sketch's protobuf holds its bins as doubles, mostly zeros and ones: deflated, an hour of a
// check's runs takes about a hundred bytes instead of two thousand.
export const encodeSketch = (sketch: DDSketch): string => deflateRawSync(sketch.toProto()).toString('base64');
export const decodeSketch = (text: string): DDSketch => DDSketch.fromProto(inflateRawSync(Buffer.from(text, 'base64')));

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
