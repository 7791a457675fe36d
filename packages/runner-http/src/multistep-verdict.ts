import type { FailureKind } from '@vigil/core';
import { MULTI_STEP_FILENAME } from './multistep-script.js';
import { cut, MAX_NAME, type StepRecorder } from './multistep-record.js';
import type { ScriptError, ScriptOutcome } from './script-process.js';
import type { RefusedConnection } from './script-targets.js';

/** Why a multi-step run failed, in words that name the step and what happened. */
export interface MultiStepFailure {
  message: string;
  kind: FailureKind;
  /** Vigil's side (the process would not start), not the script's. */
  ours: boolean;
  /** The script stopped before its end: the steps it did not reach are reported `not run`. */
  stopped: boolean;
  /** The target policy refused a connection: not the target's state, so shouldFail leaves it. */
  refused: boolean;
  details?: Record<string, unknown>;
}

const UNFINISHED = 'the script ended before this step did (is an `await` missing before `step(...)`?)';

/** Longest assertion message kept in `errorMessage`. */
const MAX_MESSAGE = 400;
/** Longest `errorMessage` of a run: cut once its secrets are scrubbed. */
export const MAX_ERROR_MESSAGE = 2_000;

/** What a message is made of: scrubbed (every secret the run knows), then cut. */
type Scrub = (text: string) => string;

/** Request error codes that mean the target could not be reached or spoke no valid HTTP. */
const NOT_NETWORK = new Set(['ETARGETPOLICY', 'ETOOMANYCONNECTIONS', 'ERESPONSETOOLARGE', 'EREDIRECT', 'EINVALIDURL', 'ETIMEDOUT', 'EREQUEST']);
const isNetwork = (code: string) => !NOT_NETWORK.has(code) && /^(E[A-Z_]+|UND_ERR_\w+|ERR_TLS\w*|ERR_SSL\w*|CERT_\w+|UNABLE_TO_\w+|DEPTH_ZERO_\w+|SELF_SIGNED_\w+|HPE_\w+)$/.test(code);

/** A matcher's message on one line: `expect(received).toBe(expected) … Expected: 200 Received: 401`, cut. */
export function shortAssertion(message: string): string {
  if (message.length > MAX_MESSAGE * 50) message = message.slice(0, MAX_MESSAGE * 50);
  const lines = message.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const [first = '', ...rest] = lines;
  const head = first.replace(/\s*\/\/.*$/, '');
  const text = rest.length > 0 ? `${head} … ${rest.join(' ')}` : head;
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

const lineOf = (stack: string) => new RegExp(`${MULTI_STEP_FILENAME.replace('.', '\\.')}:(\\d+)`).exec(stack)?.[1] ?? null;

/** A step's name for a message: scrubbed, then cut. */
const named = (name: string, scrub: Scrub) => cut(scrub(name), MAX_NAME);

/** A thrown error as a failure; `step` names the step it ended. */
function thrownFailure(error: ScriptError, step: string | null, scrub: Scrub): MultiStepFailure {
  const where = step === null ? '' : `Step "${named(step, scrub)}": `;
  const line = lineOf(error.stack);
  const at = line ? ` (line ${line})` : '';
  const message = scrub(error.message);
  if (error.assertion) return { message: `${where}${shortAssertion(message)}${at}`, kind: 'ASSERTION', ours: false, stopped: true, refused: false };
  const code = error.code ?? '';
  const type = error.name && error.name !== 'Error' && error.name !== 'RequestError' ? `${error.name}: ` : '';
  const kind: FailureKind = error.name === 'RequestError' && code === 'ETIMEDOUT' ? 'TIMEOUT' : error.name === 'RequestError' && isNetwork(code) ? 'NETWORK_ERROR' : 'OTHER';
  return { message: `${where}${type}${cut(message.split('\n')[0]!, MAX_ERROR_MESSAGE)}${at}`, kind, ours: false, stopped: true, refused: false };
}

/** The step a process was stopped in, as words: ` (in step "Login")`. */
const inStep = (name: string | null, scrub: Scrub) => (name === null ? '' : ` (in step "${named(name, scrub)}")`);

/**
 * What failed a run, from how its process ended and what it recorded, or null when it passed:
 * a refused connection first (it fails the run even when the script caught the error), then the
 * process's end (an error thrown out of the script, the time limit, an abort, memory), a step
 * that failed by an error the script caught, and last the soft assertions that failed.
 */
export function multiStepFailure(
  outcome: ScriptOutcome,
  recorder: StepRecorder,
  refused: readonly RefusedConnection[],
  context: { limitMs: number; memoryLimitMb: number; scrub: Scrub },
): MultiStepFailure | null {
  const { scrub } = context;
  // A step still running when the process ended: failed, with what ended it. One left running by a
  // script that ended without awaiting it never finished its work either.
  const open = recorder.endOpenStep(
    outcome.kind === 'done' ? UNFINISHED : outcome.kind === 'failed' ? outcome.error.message : outcomeText(outcome, context),
  );
  const [refusal] = refused;
  if (refusal) {
    return {
      message: `${refusal.message}${refusal.label && refusal.label !== 'the script' ? ` (in ${cut(scrub(refusal.label), MAX_NAME + 10)})` : ''}`,
      kind: 'OTHER',
      ours: false,
      stopped: outcome.kind !== 'done',
      refused: true,
      details: { errorCode: 'ETARGETPOLICY', refusedTargets: refused.map(({ message: _, ...r }) => ({ ...r, label: r.label === null ? null : cut(scrub(r.label), MAX_NAME + 10) })) },
    };
  }
  switch (outcome.kind) {
    case 'failed': {
      const last = recorder.lastFailedStep;
      const step = open ?? (last && last.error.message === outcome.error.message ? last.name : null);
      return thrownFailure(outcome.error, step, scrub);
    }
    case 'not-started':
      return { message: `The multi-step script could not run: ${outcome.message}`, kind: 'OTHER', ours: true, stopped: true, refused: false };
    case 'timeout':
    case 'aborted':
    case 'exited':
      return { message: `${outcomeText(outcome, context)}${inStep(open, scrub)}`, kind: outcome.kind === 'exited' ? 'OTHER' : 'TIMEOUT', ours: false, stopped: true, refused: false };
    case 'done':
      if (open !== null) return { message: `Step "${named(open, scrub)}": ${UNFINISHED}`, kind: 'OTHER', ours: false, stopped: false, refused: false };
      break;
  }
  if (recorder.failedStep) return { ...thrownFailure(recorder.failedStep.error, recorder.failedStep.name, scrub), stopped: false };
  const soft = recorder.firstFailedAssertion;
  if (soft) {
    const more = recorder.failedAssertions > 1 ? ` (and ${recorder.failedAssertions - 1} more failed assertion${recorder.failedAssertions > 2 ? 's' : ''})` : '';
    const where = soft.step === null ? '' : `Step "${named(soft.step, scrub)}": `;
    return { message: `${where}${shortAssertion(scrub(soft.record.message ?? `${soft.record.matcher} failed`))}${more}`, kind: 'ASSERTION', ours: false, stopped: false, refused: false };
  }
  return null;
}

function outcomeText(outcome: Exclude<ScriptOutcome, { kind: 'done' | 'failed' }>, context: { limitMs: number; memoryLimitMb: number }): string {
  switch (outcome.kind) {
    case 'timeout':
      return `The script did not finish within the run's time limit of ${context.limitMs} ms and was stopped`;
    case 'aborted':
      return 'The run was stopped before the script finished';
    case 'exited':
      return outcome.outOfMemory
        ? `The script ran out of memory (its limit is ${context.memoryLimitMb} MB)`
        : `The script's process ended before the script did (${outcome.signal ?? `exit code ${outcome.code}`})`;
    case 'not-started':
      return `The multi-step script could not run: ${outcome.message}`;
  }
}
