import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import {
  applyShouldFail,
  MAX_SUITE_TIMEOUT_MS,
  positiveOption,
  RunArtifacts,
  RUNNERS,
  runChecked,
  runResult,
  type ArtifactRecord,
  type ArtifactStore,
  type PlaywrightCheck,
  type PluginRegistry,
  type Runner,
  type RunJob,
  type RunResult,
} from '@vigil/core';
import { SharedBrowser } from './browser-server.js';
import { playwrightInstall } from './playwright-install.js';
import { parseReport, type ParsedReport } from './report.js';
import { runSuiteProcess } from './suite-process.js';
import { SuitePathError, writeSuiteFolder, type SuiteFolder } from './suite-folder.js';
import { TargetProxy, type RefusedTarget } from './target-proxy.js';
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
   * Run every suite's tests in one Chromium that the runner keeps (Playwright's browser server:
   * each test still gets a fresh context). Default true; false launches a Chromium per worker of each run.
   */
  shareBrowser?: boolean;
}

export interface PlaywrightRunner extends Runner {
  readonly checkType: typeof PLAYWRIGHT_CHECK_TYPE;
  /** The engine's limit of one run: the longest `globalTimeout` and a margin, so that a suite always ends inside its own limit first. */
  readonly timeoutMs: number;
  /** The version of `@playwright/test` the suites run with. */
  playwrightVersion(): string;
  /** How many times the shared browser was started (once, unless it died). */
  browserLaunches(): number;
  /** The shared browser's pid, while it runs. */
  browserPid(): Promise<number | null>;
  /** Ends the runs in progress and the shared browser. */
  close(): Promise<void>;
}

const MB = 1024 * 1024;
/** How long after its `globalTimeout` a suite still running is killed (Playwright ends it itself at the limit). */
const GRACE_MS = 5_000;
/** The engine's margin past the longest suite: the grace, starting, and storing the artifacts. */
const RUN_MARGIN_MS = 60_000;
const NO_STORE = 'Screenshots and traces are not kept: the runner has no artifact store (its artifacts option)';

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
  const browser = options.shareBrowser === false ? null : new SharedBrowser(executablePath);
  const running = new Set<AbortController>();
  const inFlight = new Set<Promise<RunResult>>();
  let closed = false;

  async function storeArtifacts(job: RunJob, check: PlaywrightCheck, report: ParsedReport, folder: SuiteFolder): Promise<{ errors: string[]; kept: boolean }> {
    if (report.attachments.length === 0) return { errors: [], kept: options.artifacts !== undefined };
    if (!options.artifacts) return { errors: [NO_STORE], kept: false };
    const store = new RunArtifacts(options.artifacts, { accountId: job.accountId, checkId: check.id, runId: job.runId }, maxArtifactBytes);
    const owned = new Map<ArtifactRecord, ArtifactRecord[]>();
    for (const [i, a] of report.attachments.entries()) {
      // Only files Playwright wrote in the run's output folder.
      if (!a.path.startsWith(folder.outputDir + '/')) continue;
      const ext = a.contentType === 'image/png' ? 'png' : a.contentType === 'application/zip' ? 'zip' : 'bin';
      const name = `test-${i + 1}-${a.name}.${ext}`;
      try {
        const { size } = await stat(a.path);
        if (size > maxArtifactBytes) {
          store.errors.push(`${name} (${(size / MB).toFixed(1)} MB) was not stored: it is past the limit of ${(maxArtifactBytes / MB).toFixed(0)} MB`);
          continue;
        }
        const before = store.records.length;
        store.add({ name, contentType: a.contentType, data: await readFile(a.path) });
        if (store.records.length > before) owned.set(store.records[store.records.length - 1]!, a.test.artifacts);
      } catch (err) {
        store.errors.push(`${name} was not read: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    await store.settle();
    for (const [record, list] of owned) if (store.records.includes(record)) list.push(record);
    return { errors: store.errors, kept: true };
  }

  async function runCheck(job: RunJob, check: PlaywrightCheck, signal: AbortSignal): Promise<RunResult> {
    const started = Date.now();
    const install = playwrightInstall();
    const stop = new AbortController();
    running.add(stop);
    const abort = AbortSignal.any([signal, stop.signal]);
    const policy = job.targetPolicy?.refuseInternalAddresses ? job.targetPolicy : null;
    let proxy: TargetProxy | null = null;
    let folder: SuiteFolder | null = null;
    try {
      if (closed) return runResult({ hasErrors: true, errorMessage: 'The Playwright runner is closed', failureKind: 'OTHER' });
      let wsEndpoint: string | null = null;
      if (browser) {
        try {
          wsEndpoint = await browser.endpoint();
        } catch (err) {
          return runResult({ hasErrors: true, errorMessage: `The browser could not be started: ${err instanceof Error ? err.message : String(err)}`, failureKind: 'OTHER' });
        }
      } else if (!existsSync(executablePath)) {
        return runResult({ hasErrors: true, errorMessage: `The browser could not be started: there is no Chromium at ${executablePath} (on Debian: apt-get install chromium; executablePath or PUPPETEER_EXECUTABLE_PATH names another)`, failureKind: 'OTHER' });
      }
      if (abort.aborted) return runResult({ hasFailures: true, errorMessage: 'The run was stopped before the suite started', failureKind: 'TIMEOUT' });
      proxy = policy ? await TargetProxy.start() : null;
      const proxyRun = proxy && policy ? proxy.beginRun(policy) : null;
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
      const env: Record<string, string> = {
        ...job.environment,
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        HOME: folder.dir,
        TMPDIR: folder.dir,
        CI: '1',
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
        FORCE_COLOR: '0',
      };
      delete env.PLAYWRIGHT_BROWSERS_PATH;
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
          report = parseReport(await readFile(folder.reportFile, 'utf8'), folder.dir, job.secrets);
        } catch (err) {
          reportError = `Playwright's report could not be read: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      const stored = report && outcome.end !== 'aborted' ? await storeArtifacts(job, check, report, folder) : { errors: [], kept: options.artifacts !== undefined };
      const result = suiteVerdict({
        outcome,
        report,
        reportError,
        refused,
        globalTimeoutMs: check.globalTimeout,
        artifactErrors: stored.errors,
        artifactsKept: stored.kept,
        secrets: job.secrets,
        elapsedMs: Date.now() - started,
      });
      // A refused target or a stopped run tells nothing about whether the suite should have failed.
      return refused.length > 0 || outcome.end === 'aborted' ? result : applyShouldFail(result, check.shouldFail, signal);
    } finally {
      running.delete(stop);
      proxy?.close();
      await folder?.remove().catch(() => {});
    }
  }

  return {
    checkType: PLAYWRIGHT_CHECK_TYPE,
    timeoutMs: MAX_SUITE_TIMEOUT_MS + RUN_MARGIN_MS,
    validate: validatePlaywrightCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      const run = runChecked('Playwright runner', PLAYWRIGHT_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
      return run;
    },
    playwrightVersion: () => playwrightInstall().version,
    browserLaunches: () => browser?.launches ?? 0,
    browserPid: async () => (browser ? browser.pid() : null),
    async close() {
      closed = true;
      // The runs in progress end (their suites killed) before the browser they use does.
      for (const stop of running) stop.abort();
      await Promise.allSettled([...inFlight]);
      await browser?.close();
    },
  };
}

/** Creates a Playwright runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerPlaywrightRunner(container: PluginRegistry, options: PlaywrightRunnerOptions = {}): PlaywrightRunner {
  const runner = playwrightRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
