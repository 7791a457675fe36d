import { seededRandom } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { decodeStats, encodeStats } from '../src/rollup-codec.js';
import { addBins, binsOf, decodeSketch, encodeSketch, fieldStats, mergeStats, newSketch, toFieldStats } from '../src/sketch.js';

describe('roll-up sketches', () => {
  it('come back from their text with the same count and quantiles, zeros and negative values too', () => {
    const sketch = newSketch();
    const values = [0, 0, -3.5, 0.2, 1, 7.25, 120, 121, 4000, 60_000];
    for (const v of values) sketch.accept(v);
    const back = decodeSketch(encodeSketch(sketch));
    expect(back.count).toBe(values.length);
    for (const q of [0, 0.1, 0.25, 0.5, 0.9, 0.99, 1]) expect(back.getValueAtQuantile(q)).toBe(sketch.getValueAtQuantile(q));
    expect(encodeSketch(back)).toBe(encodeSketch(sketch));
  });

  it('merge as the sketches themselves do, with counts, sums and squared deviations of the whole', () => {
    const a = [10, 20, 30, 40, -2, 0];
    const b = [1000, 1001, 1002, -2, 0, 0];
    const merged = mergeStats(fieldStats(a), fieldStats(b))!;
    const whole = fieldStats([...a, ...b]);
    expect(merged).toEqual({ ...whole, m2: expect.closeTo(whole.m2, 6) });
    const viaSketch = addBins(addBins(newSketch(), fieldStats(a).bins), fieldStats(b).bins);
    expect(binsOf(viaSketch)).toEqual(whole.bins);
  });
});

describe('roll-up stats in binary', () => {
  const random = seededRandom(7);
  const hour = (f: (i: number) => number) => fieldStats(Array.from({ length: 60 }, (_, i) => f(i)));

  it('come back as they were: hundredths exactly, other values as float64, any field name', () => {
    const stats = {
      responseTime: hour(() => Math.round(random() * 40_000) / 100 + 12),
      attempts: hour(() => 1),
      dns: hour(() => 0),
      fractional: hour(() => random() * 1e-3),
      'my phase ✓': hour((i) => (i % 2 ? -1.25 : 3e9)),
    };
    const back = decodeStats(encodeStats(stats));
    expect(Object.keys(back)).toEqual(Object.keys(stats));
    for (const [field, s] of Object.entries(stats)) {
      expect(back[field]).toEqual({ ...s, sum: expect.any(Number), m2: expect.any(Number) });
      // Sums of hundredths come back as hundredths: within a billionth of the float sum.
      for (const k of ['sum', 'm2'] as const) expect(Math.abs(back[field]![k] - s[k])).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(s[k])));
      expect(toFieldStats(back[field]!).sketch).toBe(toFieldStats(s).sketch);
    }
    expect(back.fractional!.min).toBe(stats.fractional.min);
  });

  it('take a quarter of the JSON roll-ups kept before, or less', () => {
    const stats = {
      responseTime: hour(() => Math.round(20 + random() * 3000) / 100),
      attempts: hour(() => 1),
      dns: hour(() => 0),
      connection: hour(() => Math.round(30 + random() * 50) / 100),
      data: hour(() => Math.round(random() * 3000) / 100),
    };
    const json = JSON.stringify(Object.fromEntries(Object.entries(stats).map(([f, s]) => [f, toFieldStats(s)])));
    expect(encodeStats(stats).length).toBeLessThan(json.length / 4);
  });

  it('refuse a damaged or unknown value instead of reading nonsense', () => {
    const bytes = encodeStats({ responseTime: hour(() => 12.5) });
    expect(() => decodeStats(bytes.subarray(0, bytes.length - 2))).toThrow(/end early/);
    expect(() => decodeStats(Buffer.from([9]))).toThrow(/version 9/);
  });
});
