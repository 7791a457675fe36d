import { describe, expect, it } from 'vitest';
import { addSketch, decodeSketch, encodeSketch, fieldStats, mergeStats, newSketch } from '../src/sketch.js';

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
    const a = [10, 20, 30, 40];
    const b = [1000, 1001, 1002];
    const merged = mergeStats(fieldStats(a), fieldStats(b))!;
    const whole = fieldStats([...a, ...b]);
    expect({ ...merged, sketch: undefined }).toEqual({ ...whole, m2: expect.closeTo(whole.m2, 6), sketch: undefined });
    expect(merged.sketch).toBe(whole.sketch);
    expect(encodeSketch(addSketch(decodeSketch(fieldStats(a).sketch), fieldStats(b).sketch))).toBe(whole.sketch);
  });
});
