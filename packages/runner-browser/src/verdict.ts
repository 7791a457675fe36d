import type { FailureKind, RunResult } from '@vigil/core';
import type { ScriptError, ScriptOutcome } from './script-process.js';

function classify(error: ScriptError & { assertion?: boolean }): FailureKind {
  if (error.assertion || error.name === 'AssertionError' || /^expect\(/.test(error.message)) return 'ASSERTION';
  if (error.name === 'TimeoutError') return 'TIMEOUT';
  if (/\bnet::ERR_/.test(error.message)) return 'NETWORK_ERROR';
  return 'OTHER';
}

/** "message (at tests/home.js:12:9)": the first place in the check's own files that the stack names. */
function describeError(error: ScriptError, dir: string): string {
  const prefix = `${dir}/`;
  const frame = error.stack.split('\n').find((line) => line.includes(prefix));
  const where = frame ? /\(?([^()\s]+):(\d+):(\d+)\)?\s*$/.exec(frame.slice(frame.indexOf(prefix))) : null;
  const message = error.message.trim() || error.name;
  return where ? `${message} (at ${where[1]!.slice(prefix.length)}:${where[2]}:${where[3]})` : message;
}

export interface Verdict {
  result: Partial<RunResult>;
  degradedReason: string | null;
}

/** What a script's ending means for the run. */
export function judge(outcome: ScriptOutcome, dir: string, limitMs: number, memoryLimitMb: number): Verdict {
  const fail = (errorMessage: string, failureKind: FailureKind): Verdict => ({
    result: { hasFailures: true, errorMessage, failureKind },
    degradedReason: null,
  });
  switch (outcome.kind) {
    case 'done':
      if (outcome.ok) {
        return { result: { isDegraded: outcome.degraded !== null }, degradedReason: outcome.degraded };
      }
      return fail(describeError(outcome.error, dir), classify(outcome.error));
    case 'timeout':
      return fail(`The script did not finish within the run's time limit of ${(limitMs / 1000).toFixed(1)} s and was stopped`, 'TIMEOUT');
    case 'aborted':
      return fail('The run was cancelled', 'TIMEOUT');
    case 'exited':
      if (outcome.outOfMemory) return fail(`The script ran out of memory (its limit is ${memoryLimitMb} MB)`, 'OTHER');
      return fail(
        `The script's process ended before the script finished (${outcome.signal ? `signal ${outcome.signal}` : `exit code ${outcome.code}`})`,
        'OTHER',
      );
  }
}

