import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyShouldFail,
  directoryArtifacts,
  RunArtifacts,
  positiveOption,
  probeCertificate,
  RUNNERS,
  runResult,
  RUNTIME_IDS,
  runChecked,
  scrubSecrets,
  targetPolicy as buildTargetPolicy,
  targetRefusalMessage,
  WITHHELD_SCRIPT_MODULES,
  type ArtifactStore,
  type BrowserCheck,
  type CertificateProbe,
  type PluginRegistry,
  type Runner,
  type RunJob,
  type RunResult,
  type RuntimeId,
  type TargetPolicy,
  type TargetPolicyOptions,
  TargetProxy,
  type ProxyRun,
  type RefusedTarget,
} from '@vigil/core';
import { BrowserPool, type Lease } from './browser-pool.js';
import { localRequire, scriptWorker } from './child-files.js';
import { chromiumArgs, defaultChromium, launchChromium } from './chromium.js';
import { CodeCache } from './code-cache.js';
import { failureScreenshot, withTimeout } from './failure-screenshot.js';
import { runPolicy, scriptRefusal } from './run-policy.js';
import type { ScriptLog, ScriptOutcome } from './script-process.js';
import { judge, type Verdict } from './verdict.js';
import { normalize, SCRIPT_PARAMETERS, validateBrowserCheck } from './validate.js';

export const BROWSER_CHECK_TYPE = 'BROWSER' as const;

export interface BrowserRunnerOptions {
  /**
   * The Chromium to run: this, else `PUPPETEER_EXECUTABLE_PATH`, else `/usr/bin/chromium`, else
   * (where only it is installed) `/usr/bin/chromium-headless-shell`. The headless shell (Debian's
   * chromium-headless-shell) is the lighter build: about 40% less CPU per run, 1.6x the runs per minute.
   */
  executablePath?: string;
  /** Extra Chromium command-line switches (after Vigil's own). */
  args?: string[];
  /** Browsers kept running, each serving one run at a time. Default 2. */
  poolSize?: number;
  /** A browser is replaced after this many runs, so that nothing builds up in it. Default 100. */
  maxRunsPerBrowser?: number;
  /**
   * Runs each browser has prepared ahead (a context with its page, a script process connected to
   * the browser), made while it waits or serves a run. Default 1; 2 shortens the wait of runs
   * that come back to back, for one more process and context per browser, but gives no more runs.
   */
  prepareAhead?: number;
  /** Time limit of one run, script and recording included. Default 120 s. */
  timeoutMs?: number;
  /** Heap limit of a script's process, in MB. Default 512. */
  memoryLimitMb?: number;
  /** The page size. Default 1280×720. */
  viewport?: { width: number; height: number };
  /** Where screenshots go. Default: files under `<tmpdir>/vigil-artifacts`. */
  artifacts?: ArtifactStore;
  /** Most bytes of artifacts one run may store; a file past it is refused. Default 150 MB (the spec's upload limit). */
  maxArtifactBytes?: number;
  /** Take a screenshot when a run fails. Default true. */
  screenshotOnFailure?: boolean;
  /**
   * Reads the certificate of `sslCheckDomain` when the script did not visit it. Without one, the
   * days left come from what the browser was served.
   */
  certificateProbe?: CertificateProbe;
  /**
   * The target policy of every run, as the host gives it to `createVigil` (which also puts it on
   * every job). Given here, the browsers are behind the policy's proxy from the first one on;
   * otherwise they are from the first job whose policy refuses internal addresses. A run is held
   * to both this and its job's policy.
   */
  targetPolicy?: TargetPolicyOptions | TargetPolicy;
}

/** What a runtime id stands for in this process. */
export interface BrowserRuntime {
  runtimeId: RuntimeId;
  puppeteer: string;
  /** Chromium's version, once a browser has started. */
  chromium: string | null;
  node: string;
}

export interface BrowserRunner extends Runner {
  readonly checkType: typeof BROWSER_CHECK_TYPE;
  readonly timeoutMs: number;
  /** The runtimes this runner accepts and the puppeteer and Chromium versions it runs each as. */
  runtimes(): Promise<BrowserRuntime[]>;
  close(): Promise<void>;
}

const DEFAULT_RUNTIME: RuntimeId = '2026.04';
const MB = 1024 * 1024;
const DAY_MS = 86_400_000;
/** Longest a failure screenshot may take (a page stuck in a loop gives none). */
const SCREENSHOT_TIMEOUT_MS = 5_000;
const MAX_LOGS = 500;
const MAX_LOG_TEXT = 4_000;

const positive = (name: string, value: number | undefined, fallback: number) => positiveOption('browserRunner', name, value, fallback);

/**
 * Runs browser checks: the check's script, with its dependency files, in a process of its own
 * (empty environment but the check's variables, a memory limit, its own folder, no child
 * processes) driving a pooled Chromium through puppeteer in a fresh incognito context.
 */
export function browserRunner(options: BrowserRunnerOptions = {}): BrowserRunner {
  const settings = {
    executablePath: options.executablePath ?? defaultChromium(),
    poolSize: Math.floor(positive('poolSize', options.poolSize, 2)),
    maxRunsPerBrowser: Math.floor(positive('maxRunsPerBrowser', options.maxRunsPerBrowser, 100)),
    prepareAhead: Math.floor(positive('prepareAhead', options.prepareAhead, 1)),
    timeoutMs: positive('timeoutMs', options.timeoutMs, 120_000),
    memoryLimitMb: Math.floor(positive('memoryLimitMb', options.memoryLimitMb, 512)),
    maxArtifactBytes: positive('maxArtifactBytes', options.maxArtifactBytes, 150 * MB),
    viewport: options.viewport ?? { width: 1280, height: 720 },
  };
  const artifacts = options.artifacts ?? directoryArtifacts(join(tmpdir(), 'vigil-artifacts'));
  const screenshotOnFailure = options.screenshotOnFailure ?? true;
  const puppeteerVersion = (localRequire('puppeteer-core/package.json') as { version: string }).version;
  let chromiumVersion: string | null = null;
  const ownPolicy = options.targetPolicy === undefined ? null
    : 'checkAddress' in options.targetPolicy ? options.targetPolicy : buildTargetPolicy(options.targetPolicy);

  const pool = new BrowserPool({
    size: settings.poolSize,
    maxRunsPerBrowser: settings.maxRunsPerBrowser,
    prepareAhead: settings.prepareAhead,
    viewport: settings.viewport,
    fenced: ownPolicy?.refuseInternalAddresses === true,
    launch: async (fenced) => {
      // A fenced browser's own proxy, closed with it.
      const proxy = fenced ? await TargetProxy.start() : null;
      try {
        const chromium = await launchChromium({
          executablePath: settings.executablePath,
          args: chromiumArgs(options.args ?? [], proxy?.url ?? null),
          viewport: settings.viewport,
          startTimeoutMs: 30_000,
          fenced: proxy !== null,
        });
        chromiumVersion ??= await chromium.browser.version();
        return {
          ...chromium,
          proxy,
          kill: () => {
            chromium.kill();
            proxy?.close();
          },
        };
      } catch (err) {
        proxy?.close();
        throw err;
      }
    },
    process: {
      ...scriptWorker(),
      codeCache: new CodeCache(),
      memoryLimitMb: settings.memoryLimitMb,
      startTimeoutMs: 20_000,
    },
  });

  /** The script and its dependencies as files in the run's folder; the script's process writes them (it may write nowhere else). */
  function runFiles(dir: string, check: BrowserCheck): { scriptFile: string; files: { path: string; content: string }[] } {
    const scriptFile = join(dir, check.scriptPath ? normalize(check.scriptPath) : 'script.js');
    const files = (check.dependencies ?? []).map((dep) => ({ path: join(dir, normalize(dep.path)), content: dep.content }));
    return { scriptFile, files: [...files, { path: scriptFile, content: check.script }] };
  }

  /**
   * The days left of the certificate of `sslCheckDomain`: as the browser was served it, else read
   * by the certificate probe under the run's policy (a refused domain is not connected to).
   */
  async function sslDaysRemaining(check: BrowserCheck, seenValidTo: number | null, policy: TargetPolicy | null, timeoutMs: number): Promise<{ days: number | null; source: string | null; error?: string }> {
    const domain = check.sslCheckDomain;
    if (!domain) return { days: null, source: null };
    const days = (validTo: number) => Math.floor((validTo - Date.now()) / DAY_MS);
    if (seenValidTo !== null) return { days: days(seenValidTo), source: 'browser' };
    if (!options.certificateProbe) return { days: null, source: null, error: `The script did not visit ${domain}, so its certificate was not seen` };
    try {
      const read = await probeCertificate(options.certificateProbe, policy, domain, 443, AbortSignal.timeout(Math.max(1, timeoutMs)));
      if (read.refusal) return { days: null, source: 'probe', error: `The certificate of ${domain} was not read: ${targetRefusalMessage(read.refusal, domain)}` };
      return { days: days(read.expiresAt.getTime()), source: 'probe' };
    } catch (err) {
      return { days: null, source: 'probe', error: `The certificate of ${domain} could not be read: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  async function runCheck(job: RunJob, check: BrowserCheck, signal: AbortSignal): Promise<RunResult> {
    const started = Date.now();
    // The script stops a little before the engine's limit, so that the runner's own result (and
    // screenshot) is what counts; everything after the script must end by `finishBy`.
    const reserve = Math.min(5_000, Math.max(1_500, job.timeoutMs * 0.2));
    const limitMs = Math.max(1, job.timeoutMs - reserve);
    const finishBy = started + job.timeoutMs - 250;
    const budget = (most: number) => Math.max(0, Math.min(most, finishBy - Date.now()));
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(limitMs)]);
    // The same limit on the monotonic clock, which a step of the wall clock does not move.
    const limitAt = performance.now() + limitMs;
    const policy = runPolicy(job, ownPolicy);
    if (policy) pool.fence();

    const cancelled = () => runResult({ hasFailures: true, errorMessage: 'The run was cancelled before a browser was free', failureKind: 'TIMEOUT' });
    const noBrowser = () => runResult({ hasFailures: true, errorMessage: `No browser was free within the run's time limit of ${(limitMs / 1000).toFixed(1)} s`, failureKind: 'TIMEOUT' });
    let acquired: Awaited<ReturnType<BrowserPool['acquire']>>;
    try {
      acquired = await pool.acquire(deadline);
    } catch (err) {
      if (signal.aborted) return cancelled();
      if (deadline.aborted) return noBrowser();
      return runResult({ hasErrors: true, errorMessage: `The browser could not be started: ${err instanceof Error ? err.message : String(err)}`, failureKind: 'OTHER' });
    }
    const { lease, release } = acquired;
    // A busy event loop fires the time limit's timer late: the clock says whether the run's time
    // went by before it got its browser, and if so the script does not start.
    if (signal.aborted || deadline.aborted || performance.now() >= limitAt) {
      release();
      return signal.aborted ? cancelled() : noBrowser();
    }
    if (policy && !lease.proxy) {
      release();
      return runResult({ hasErrors: true, errorMessage: 'The browser runner gave a run under a target policy a browser without its proxy', failureKind: 'OTHER' });
    }
    // Every connection of the run's pages from here to its end is checked against its policy.
    const proxyRun: ProxyRun | null = lease.proxy?.beginRun(policy ?? job.targetPolicy ?? buildTargetPolicy()) ?? null;
    const logs: (ScriptLog & { at: number })[] = [];
    const runArtifacts = new RunArtifacts(artifacts, { accountId: job.accountId, checkId: check.id, runId: job.runId }, settings.maxArtifactBytes);
    const { recorder } = lease;
    // A browser that crashes ends the run at once rather than at its time limit.
    const browserGone = new AbortController();
    const onGone = () => browserGone.abort();
    lease.browser.once('disconnected', onGone);
    recorder.sslDomain = check.sslCheckDomain ?? null;
    recorder.secrets = job.secrets;
    let scriptStart = 0;
    let scriptEnd = 0;
    try {
      const { scriptFile, files } = runFiles(lease.process.dir, check);
      const setupMs = Date.now() - started;
      const outcome: ScriptOutcome = await lease.process.run(
        {
          contextId: lease.context.id!,
          env: job.environment,
          scriptFile,
          files,
          code: check.script,
          params: SCRIPT_PARAMETERS,
          secrets: job.secrets,
          withheld: WITHHELD_SCRIPT_MODULES,
          fenceNetwork: policy !== null,
        },
        Math.max(1, limitMs - setupMs),
        AbortSignal.any([signal, browserGone.signal]),
        {
          started: () => {
            scriptStart = Date.now();
          },
          log: (log) => {
            // Scrubbed before it is cut, so that no piece of a secret survives at the cut.
            if (logs.length < MAX_LOGS) logs.push({ ...log, text: scrubSecrets(log.text, job.secrets, true).slice(0, MAX_LOG_TEXT), at: Date.now() - started });
          },
          artifact: (file) => runArtifacts.add(file),
          refused: ({ host, port }) => proxyRun?.refuse(scriptRefusal(host, port)),
        },
      );
      scriptEnd = Date.now();
      if (lease.browser.connected) await recorder.flush(budget(1_000));
      scriptStart ||= scriptEnd;
      const failed = !(outcome.kind === 'done' && outcome.ok);
      if (failed && screenshotOnFailure && outcome.kind !== 'aborted' && lease.browser.connected) {
        const shot = await failureScreenshot(lease.context, job.secrets, budget(SCREENSHOT_TIMEOUT_MS));
        if (shot.image) runArtifacts.add({ name: 'failure.png', contentType: 'image/png', data: shot.image });
        else if (shot.error) runArtifacts.errors.push(shot.error);
      }
      recorder.stop();
      // What the pages tried until now counts; the proxy refuses everything after.
      proxyRun?.end();
      const [ssl] = await Promise.all([
        sslDaysRemaining(check, recorder.certificateValidTo, policy, budget(10_000)),
        withTimeout(runArtifacts.settle(), budget(10_000)),
      ]);
      const scriptMs = scriptEnd - scriptStart;
      const refused: RefusedTarget[] = proxyRun ? [...proxyRun.refused] : [];
      const verdict: Verdict = refused.length > 0
        // A refused connection fails the run, also when the script caught the error it got.
        ? { result: { hasFailures: true, errorMessage: refused[0]!.message, failureKind: 'OTHER' as const }, degradedReason: null }
        : lease.browser.connected
          ? judge(outcome, lease.process.dir, limitMs, settings.memoryLimitMb)
          : { result: { hasErrors: true, errorMessage: 'The browser crashed during the run', failureKind: 'OTHER' as const }, degradedReason: null };
      const proxyErrors = proxyRun?.connectionErrors ?? [];
      if (refused.length === 0 && proxyErrors.length > 0 && /net::ERR_SOCKS_CONNECTION_FAILED|net::ERR_PROXY_CONNECTION_FAILED/.test(verdict.result.errorMessage ?? '')) {
        // Behind the proxy, Chromium names no cause: the proxy knows it.
        const [first] = proxyErrors;
        verdict.result.errorMessage = `${verdict.result.errorMessage} (${first!.host}:${first!.port}: ${first!.error})`;
      }
      const details: Record<string, unknown> = {
        runtime: { runtimeId: check.runtimeId ?? DEFAULT_RUNTIME, puppeteer: puppeteerVersion, chromium: chromiumVersion, node: process.version },
        logs,
        console: recorder.console,
        pageErrors: recorder.pageErrors,
        failedRequests: recorder.failedRequests,
        webVitals: recorder.webVitals(),
        artifacts: runArtifacts.records,
      };
      if (refused.length > 0) {
        details.errorCode = 'ETARGETPOLICY';
        details.refusedTargets = refused;
      }
      if (proxyErrors.length > 0) details.proxyConnectionErrors = proxyErrors;
      if (runArtifacts.errors.length > 0) details.artifactErrors = runArtifacts.errors;
      if (verdict.degradedReason) details.degradedReason = verdict.degradedReason;
      if (check.sslCheckDomain) details.ssl = { domain: check.sslCheckDomain, daysRemaining: ssl.days, source: ssl.source, ...(ssl.error ? { error: ssl.error } : {}) };
      const result = runResult({
        ...verdict.result,
        responseTime: scriptMs,
        phases: { setup: scriptStart - started, script: scriptMs, total: Date.now() - started },
        sslDaysRemaining: ssl.days,
        details,
      });
      // shouldFail inverts what the script found: it finished, threw, or ran out of time. A refused
      // connection, a crashed browser, a cancelled run or a script process that died say nothing
      // about the pages, so they fail as they are.
      const scriptDecided = refused.length === 0 && lease.browser.connected && (outcome.kind === 'done' || outcome.kind === 'timeout');
      return scriptDecided ? applyShouldFail(result, check.shouldFail, signal) : result;
    } finally {
      proxyRun?.end();
      lease.browser.off('disconnected', onGone);
      recorder.stop();
      release();
    }
  }

  const runner: BrowserRunner = {
    checkType: BROWSER_CHECK_TYPE,
    timeoutMs: settings.timeoutMs,
    // One run per pooled browser: the engine holds the others back before their time limit starts.
    concurrency: settings.poolSize,
    validate: validateBrowserCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('browser runner', BROWSER_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
    },
    async runtimes() {
      if (chromiumVersion === null) {
        const { release } = await pool.acquire(AbortSignal.timeout(60_000));
        release();
      }
      return RUNTIME_IDS.map((runtimeId) => ({ runtimeId, puppeteer: puppeteerVersion, chromium: chromiumVersion, node: process.version }));
    },
    close: () => pool.close(),
  };
  return runner;
}

/** Creates a browser runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerBrowserRunner(container: PluginRegistry, options: BrowserRunnerOptions = {}): BrowserRunner {
  const runner = browserRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
