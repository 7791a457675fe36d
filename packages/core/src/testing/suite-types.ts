/** The caller's test function (vitest's `it` or `test`), so suites work with any runner of that shape. */
export type TestFn = (name: string, fn: () => Promise<void>, timeout?: number) => void;

/** Throws with `message` unless `condition` holds; suites use it so they need no assertion library. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`Conformance: ${message}`);
}
