import { describe, expect, it } from 'vitest';
import { RunGate } from '../src/engine/run-gate.js';

const never = () => () => {};
/** A timer that is due at once fires inside the call, as a clock may do for a past time. */
const firesAtOnce = (_ms: number, done: () => void) => {
  done();
  return () => {};
};

describe('RunGate', () => {
  it('admits up to its limit, then in arrival order as holders release', async () => {
    const gate = new RunGate(2);
    const signal = new AbortController().signal;
    const a = (await gate.enter(signal, never))!;
    const b = (await gate.enter(signal, never))!;
    const order: string[] = [];
    const c = gate.enter(signal, never).then((r) => (order.push('c'), r));
    const d = gate.enter(signal, never).then((r) => (order.push('d'), r));
    expect(gate.queued).toBe(2);
    b();
    b(); // a second release of one permit counts once
    a();
    (await c)!();
    (await d)!();
    expect(order).toEqual(['c', 'd']);
    expect(gate.active).toBe(0);
  });

  it('gives up at the deadline or on abort, and the queue goes on without the one that left', async () => {
    const gate = new RunGate(1);
    const held = (await gate.enter(new AbortController().signal, never))!;
    expect(await gate.enter(new AbortController().signal, firesAtOnce, 0, 10)).toBeNull();
    const aborted = new AbortController();
    const leaving = gate.enter(aborted.signal, never);
    const staying = gate.enter(new AbortController().signal, never);
    aborted.abort();
    expect(await leaving).toBeNull();
    expect(gate.queued).toBe(1);
    held();
    expect(await staying).toBeTypeOf('function');
    expect(gate.active).toBe(1);
  });
});
