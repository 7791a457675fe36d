import type { CheckGroup } from '../model/check-group.js';
import type { Check } from '../model/check.js';
import type { CheckTypeDefinition } from '../model/check-type.js';
import type { TargetPolicy } from '../runner-kit/target-policy.js';
import type { ClientCertificateLookup } from './client-certificates.js';
import { createToken } from './token.js';

export type RunSource = 'SCHEDULER' | 'SCHEDULE_NOW' | 'TRIGGER_API' | 'TEST';

/** Why a run failed, so that retry rules (`onlyOn: NETWORK_ERROR`) can tell failures apart. */
export type FailureKind = 'NETWORK_ERROR' | 'TIMEOUT' | 'ASSERTION' | 'OTHER';

/** One run of one check in one location, as the engine hands it to a runner. */
export interface RunJob {
  runId: string;
  accountId: string;
  /** The check with its group's defaults already merged in. */
  check: Check;
  group: CheckGroup | null;
  location: string;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  dueAt: string;
  runSource: RunSource;
  checkSessionId: string | null;
  sequenceId: string | null;
  /** The script environment: the check's and group's variables, secrets decrypted. */
  environment: Record<string, string>;
  /** Secret values to scrub from everything the run records. */
  secrets: string[];
  timeoutMs: number;
  /**
   * The account's client certificates for mutual TLS, opened only when asked for a host. The
   * engine sets it; a job built elsewhere (a test, a host's own call) may leave it out.
   */
  clientCertificates?: ClientCertificateLookup;
  /**
   * The account's snippets (the code a group names by `setupSnippetId` / `tearDownSnippetId`).
   * The engine sets it; a job built elsewhere may leave it out, and then a group's snippet cannot run.
   */
  snippets?: SnippetLookup;
  /**
   * Which addresses the run may connect to (the host's `targetPolicy`). A runner that opens
   * connections checks every address it is about to connect to, after name lookup, and fails the
   * run when the policy refuses it. Absent: every address may be reached.
   */
  targetPolicy?: TargetPolicy;
}

/** A stored snippet as a run reads it. */
export interface RunSnippet {
  id: number;
  name: string;
  script: string;
}

/** Snippets of one account, read by id; another account's id reads as null. */
export interface SnippetLookup {
  get(id: number): Promise<RunSnippet | null>;
}

export interface AssertionOutcome {
  source: string;
  comparison: string;
  property: string;
  target: string;
  actual: string | number | null;
  passed: boolean;
}

/** What a runner answers. The engine adds ids, timing of retries and the check's identity. */
export interface RunResult {
  hasFailures: boolean;
  /** Failing because of an internal error of Vigil or the runner, not of the target. */
  hasErrors: boolean;
  isDegraded: boolean;
  overMaxResponseTime: boolean;
  /** Milliseconds. */
  responseTime: number;
  /** Milliseconds per phase (TCP: dns, connection, data, total). */
  phases: Record<string, number>;
  errorMessage: string | null;
  failureKind: FailureKind | null;
  statusCode?: number | null;
  sslDaysRemaining?: number | null;
  assertions?: AssertionOutcome[];
  /** Runner-specific details (logs, web vitals, artifacts' references). */
  details?: Record<string, unknown> | null;
}

/** Runs checks of one type. A plugin implements it and registers it on RUNNERS. */
export interface Runner {
  readonly checkType: string;
  /** Extra rules for the type's own fields; throws a ValidationError. */
  validate?(check: unknown): void;
  /**
   * Time limit of one attempt of this type's checks (a browser script needs longer than a TCP
   * connect). Without it the engine's `runTimeoutMs` applies.
   */
  readonly timeoutMs?: number;
  /**
   * Time limit of one attempt of this check, where it depends on the check (a Playwright suite's
   * own globalTimeout): at most `timeoutMs`, which still bounds the lease of every run. Retries
   * are planned with it, so a short suite can be retried inside a lease that a long one could not.
   */
  timeoutFor?(check: unknown): number;
  /**
   * Most runs of this type at once in one process (a browser runner: its pooled browsers). The
   * engine holds further runs back until one ends, before their time limit starts, so that a burst
   * of due runs waits its turn instead of timing out inside the runner. Without it only the
   * engine's `concurrency` applies.
   */
  readonly concurrency?: number;
  run(job: RunJob, signal: AbortSignal): Promise<RunResult>;
  /** Frees what the runner holds (browser processes, sockets); `vigil.stop()` calls it. A later run may start it again. */
  close?(): Promise<void>;
}

/** Multi-registration: every runner the host registered. */
export const RUNNERS = createToken<Runner>('vigil.runners');

/**
 * Multi-registration: the check types plugins add (see `defineCheckType`). A process that serves
 * the API registers them, so that their checks can be created, read and updated; a process that
 * runs them registers their runners.
 */
export const CHECK_TYPE_DEFINITIONS = createToken<CheckTypeDefinition>('vigil.checkTypes');

