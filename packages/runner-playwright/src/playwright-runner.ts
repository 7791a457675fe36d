import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import {
  applyShouldFail,
  MAX_SUITE_TIMEOUT_MS,
  positiveOption,
  RUNNERS,
  runChecked,
  runResult,
  type ArtifactStore,
  type PlaywrightCheck,
  type PluginRegistry,
  type Runner,
  type RunJob,
  type RunResult,
  TargetProxy,
  type RefusedTarget,
} from '@vigil/core';
import { storeArtifacts, type StoredArtifacts } from './artifact-files.js';
import { AccountBrowsers, SharedBrowser, type LentBrowser } from './browser-server.js';
import { killLeftovers } from './leftovers.js';
import { playwrightInstall } from './playwright-install.js';
import { parseReport, type ParsedReport } from './report.js';
import { suiteEnvironment } from './suite-env.js';
import { runSuiteProcess } from './suite-process.js';
import { SuitePathError, writeSuiteFolder, type SuiteFolder } from './suite-folder.js';
import { suiteVerdict } from './verdict.js';
import { validatePlaywrightCheck } from './validate.js';

export const PLAYWRIGHT_CHECK_TYPE = 'PLAYWRIGHT' as const;

export interface PlaywrightRunnerOptions {
  /** The Chromium to run: this, else `PUPPETEER_EXECUTABLE_PATH`, else `/usr/bin/chromium`. Playwright never downloads a browser. */
  executablePath?: string;
  /** Where screenshots of failed tests and their traces go. Default: none (no files are kept, and the result says so). */
  artifacts?: ArtifactStore;
  /** Playwright workers of one run (tests of a suite at the same time). Default 1. */
  workers?: number;
  /** Most bytes of artifacts one run may store; a file past it is refused. Default 150 MB. */
  maxArtifactBytes?: number;
  /**
   * Run the suites of one account in one Chromium that the runner keeps for that account
   * (Playwright's browser server: each test still gets a fresh context); runs of different accounts
   * never share one. Default true; false launches a Chromium per worker of each run.
   */
  shareBrowser?: boolean;
}

export interface PlaywrightRunner extends Runner {
  readonly checkType: typeof PLAYWRIGHT_CHECK_TYPE;
  /** The engine's limit of one run: the longest `globalTimeout` and a margin, so that a suite always ends inside its own limit first. */
  readonly timeoutMs: number;
  /** The version of `@playwright/test` the suites run with. */
  playwrightVersion(): string;
  /** How many times an account's shared browser was started (once an account, unless it died or was closed). */
  browserLaunches(): number;
  /** The pid of the browser the runs of `accountId` share, while it runs. */
  browserPid(accountId: string): Promise<number | null>;
  /** Ends the runs in progress and the shared browsers. */
  close(): Promise<void>;
}

const MB = 1024 * 1024;
/** How long after its `globalTimeout` a suite still running is killed (Playwright ends it itself at the limit). */
const GRACE_MS = 5_000;
/** The engine's margin past the longest suite: the grace, starting, and storing the artifacts. */
const RUN_MARGIN_MS = 60_000;
const NO_STORE = 'Screenshots and traces are not kept: the runner has no artifact store (its artifacts option)';
/** Accounts whose browsers run at once; a browser idle this long is closed. */
const MAX_ACCOUNT_BROWSERS = 4;
const BROWSER_IDLE_MS = 5 * 60_000;
/** Playwright's JSON report past this size is not read (a test that printed hundreds of MB). */
export const MAX_REPORT_BYTES = 20 * MB;

function defaultExecutable(): string {
  return process.env.PUPPETEER_EXECUTABLE_PATH || '/usr/bin/chromium';
}

/**
 * Runs Playwright checks: the check's suite in a fresh folder, by the host's `@playwright/test`
 * in a process group of its own (no environment but the check's variables), against Chromium,
 * held to the check's `globalTimeout`; each test's outcome, error, screenshot and trace recorded.
 */
export function playwrightRunner(options: PlaywrightRunnerOptions = {}): PlaywrightRunner {
  const executablePath = options.executablePath ?? defaultExecutable();
  const workers = Math.floor(positiveOption('playwrightRunner', 'workers', options.workers, 1));
  const maxArtifactBytes = positiveOption('playwrightRunner', 'maxArtifactBytes', options.maxArtifactBytes, 150 * MB);
  const browsers = options.shareBrowser === false ? null : new AccountBrowsers(executablePath, MAX_ACCOUNT_BROWSERS, BROWSER_IDLE_MS);
  const running = new Set<AbortController>();
  const inFlight = new Set<Promise<RunResult>>();
  let closed = false;

  async function keepArtifacts(job: RunJob, check: PlaywrightCheck, report: ParsedReport, folder: SuiteFolder, signal: AbortSignal): Promise<StoredArtifacts> {
    if (report.attachments.length === 0) return { errors: [], kept: options.artifacts !== undefined };
    if (!options.artifacts) return { errors: [NO_STORE], kept: false };
    return storeArtifacts({ store: options.artifacts, job, checkId: check.id, attachments: report.attachments, outputDir: folder.outputDir, maxBytes: maxArtifactBytes, signal });
  }

  async function runCheck(job: RunJob, check: PlaywrightCheck, signal: AbortSignal): Promise<RunResult> {
    const install = playwrightInstall();
    const stop = new AbortController();
    running.add(stop);
    const abort = AbortSignal.any([signal, stop.signal]);
    const policy = job.targetPolicy?.refuseInternalAddresses ? job.targetPolicy : null;
    let proxy: TargetProxy | null = null;
    let folder: SuiteFolder | null = null;
    let lent: LentBrowser | null = null;
    let own: SharedBrowser | null = null;
    try {
      if (closed) return runResult({ hasErrors: true, errorMessage: 'The Playwright runner is closed', failureKind: 'OTHER' });
      if (!existsSync(executablePath)) {
        return runResult({ hasErrors: true, errorMessage: `The browser could not be started: there is no Chromium at ${executablePath} (on Debian: apt-get install chromium; executablePath or PUPPETEER_EXECUTABLE_PATH names another)`, failureKind: 'OTHER' });
      }
      proxy = policy ? await TargetProxy.start() : null;
      const proxyRun = proxy && policy ? proxy.beginRun(policy) : null;
      let wsEndpoint: string | null = null;
      // Under a target policy the run has a browser of its own, launched with the policy's proxy (so
      // that a context without a proxy of its own still goes through it); else its account's, shared.
      lent = proxy ? null : (browsers?.lend(job.accountId) ?? null);
      if (proxy || (browsers && !lent)) own = new SharedBrowser(executablePath, proxy ? proxy.url : null);
      const browser = lent?.browser ?? own;
      if (browser) {
        try {
          wsEndpoint = await browser.endpoint();
        } catch (err) {
          return runResult({ hasErrors: true, errorMessage: `The browser could not be started: ${err instanceof Error ? err.message : String(err)}`, failureKind: 'OTHER' });
        }
      }
      if (abort.aborted) return runResult({ hasFailures: true, errorMessage: 'The run was stopped before the suite started', failureKind: 'TIMEOUT' });
      try {
        folder = await writeSuiteFolder(check.files, install.nodeModules, {
          globalTimeoutMs: check.globalTimeout,
          workers,
          wsEndpoint,
          executablePath,
          proxyServer: proxy ? proxy.url : null,
        });
      } catch (err) {
        if (!(err instanceof SuitePathError)) throw err;
        return runResult({ hasFailures: true, errorMessage: `The suite cannot be written: ${err.message}`, failureKind: 'OTHER' });
      }
      const args: string[] = [];
      // One argument each (`--grep=...`), so that a pattern that starts with - is not read as an option.
      for (const project of check.projects) args.push(`--project=${project}`);
      if (check.grep) args.push(`--grep=${check.grep}`);
      if (check.grepInvert) args.push(`--grep-invert=${check.grepInvert}`);
      const env = suiteEnvironment(job.environment, folder.dir);
      const outcome = await runSuiteProcess({
        cli: install.cli,
        dir: folder.dir,
        configFile: folder.configFile,
        args,
        env,
        limitMs: check.globalTimeout + GRACE_MS,
        signal: abort,
      });
      // What the pages tried until now counts; the proxy refuses everything after.
      proxyRun?.end();
      const refused: RefusedTarget[] = proxyRun ? [...proxyRun.refused] : [];
      let report: ParsedReport | null = null;
      let reportError: string | null = null;
      if (existsSync(folder.reportFile)) {
        try {
          const { size } = await stat(folder.reportFile);
          if (size > MAX_REPORT_BYTES) {
            reportError = `Playwright's report (${(size / MB).toFixed(0)} MB) is past the limit of ${MAX_REPORT_BYTES / MB} MB and was not read: the suite's tests printed too much, or it ran too many tests`;
          } else {
            report = parseReport(await readFile(folder.reportFile, 'utf8'), folder.dir, job.secrets);
          }
        } catch (err) {
          reportError = `Playwright's report could not be read: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      const stored = report && outcome.end !== 'aborted' ? await keepArtifacts(job, check, report, folder, abort) : { errors: [], kept: options.artifacts !== undefined };
      const result = suiteVerdict({
        outcome,
        report,
        reportError,
        refused,
        globalTimeoutMs: check.globalTimeout,
        artifactErrors: stored.errors,
        artifactsKept: stored.kept,
        secrets: job.secrets,
      });
      // A refused target or a stopped run tells nothing about whether the suite should have failed.
      return refused.length > 0 || outcome.end === 'aborted' ? result : applyShouldFail(result, check.shouldFail, signal);
    } finally {
      running.delete(stop);
      lent?.release();
      await own?.close().catch(() => {});
      proxy?.close();
      if (folder) {
        // What a test started outside the suite's process group (setsid, detached) goes before its folder.
        await killLeftovers(folder.dir);
        await folder.remove().catch(() => {});
      }
    }
  }

  return {
    checkType: PLAYWRIGHT_CHECK_TYPE,
    timeoutMs: MAX_SUITE_TIMEOUT_MS + RUN_MARGIN_MS,
    // One suite's attempt: its own globalTimeout and the margin, so that the engine can plan a
    // retry of a short suite inside the lease that the longest one needs.
    timeoutFor: (check: unknown) => {
      const own = (check as { globalTimeout?: unknown } | null)?.globalTimeout;
      return typeof own === 'number' && own > 0 ? Math.min(own, MAX_SUITE_TIMEOUT_MS) + RUN_MARGIN_MS : MAX_SUITE_TIMEOUT_MS + RUN_MARGIN_MS;
    },
    validate: validatePlaywrightCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      const run = runChecked('Playwright runner', PLAYWRIGHT_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
      return run;
    },
    playwrightVersion: () => playwrightInstall().version,
    browserLaunches: () => browsers?.launches ?? 0,
    browserPid: async (accountId: string) => (browsers ? browsers.pid(accountId) : null),
    async close() {
      closed = true;
      // The runs in progress end (their suites killed) before the browser they use does.
      for (const stop of running) stop.abort();
      await Promise.allSettled([...inFlight]);
      await browsers?.close();
    },
  };
}

/** Creates a Playwright runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerPlaywrightRunner(container: PluginRegistry, options: PlaywrightRunnerOptions = {}): PlaywrightRunner {
  const runner = playwrightRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
