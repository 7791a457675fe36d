// What the runner benches share: a rate measured with a number of workers in flight, alternating
// rounds of the runner and its baseline, and the median round of each.

/** Runs `once(signal, worker)` with `inFlight` workers for `roundMs`; answers completions per second. */
export async function rate(once, { inFlight, roundMs }) {
  let count = 0;
  const until = performance.now() + roundMs;
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async (_, worker) => {
    // One signal per worker, as the engine gives one per attempt; making it is the caller's cost.
    const { signal } = new AbortController();
    while (performance.now() < until) {
      await once(signal, worker);
      count++;
    }
  }));
  return count / ((performance.now() - started) / 1000);
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Warms both paths, then alternates `rounds` rounds (baseline first) so that both see the same
 * machine; answers the median round of each.
 */
export async function alternate(vigil, baseline, { inFlight, roundMs, rounds }) {
  const settings = { inFlight, roundMs };
  await rate(vigil, settings);
  await rate(baseline, settings);
  const seen = { vigil: [], baseline: [] };
  for (let r = 0; r < rounds; r++) {
    globalThis.gc?.();
    seen.baseline.push(await rate(baseline, settings));
    globalThis.gc?.();
    seen.vigil.push(await rate(vigil, settings));
  }
  return { vigil: median(seen.vigil), baseline: median(seen.baseline) };
}

/**
 * One run of `runner` on `check`, as the engine hands a scheduled job to a runner; it throws when
 * the run does not pass, so a bench never counts a failure as a check done.
 */
export function passingRun(runner, check) {
  const job = {
    runId: 'bench', accountId: 'bench', check, group: null, location: 'local', attempt: 1, dueAt: new Date().toISOString(),
    runSource: 'TEST', checkSessionId: null, sequenceId: null, environment: {}, secrets: [], timeoutMs: 10_000,
  };
  return async (signal) => {
    const result = await runner.run(job, signal);
    if (result.hasFailures || result.hasErrors) throw new Error(`check failed: ${result.errorMessage}`);
  };
}
