import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SecureContextOptions } from 'node:tls';
import {
  applyShouldFail,
  isDegradedRun,
  isOverMaxResponseTime,
  lookupChecked,
  runChecked,
  runResult,
  systemLookupAll,
  targetRefusalMessage,
  ValidationError,
  type LookupAllFunction,
  type Runner,
  type RunJob,
  type RunResult,
} from '@vigil/core';
import { smtpCheckType, type SmtpCheck } from './smtp-check-type.js';
import { SmtpConversation, SmtpFailure, stageInWords, type SmtpReply } from './smtp-conversation.js';

/** The name the runner gives itself in EHLO. */
export const EHLO_NAME = 'vigil.local';

/** How long the runner waits for the server's answer to QUIT; the run's verdict is known before it. */
const QUIT_GRACE_MS = 1_000;
/** The time limit of a run whose job and check set none. */
const DEFAULT_LIMIT_MS = 30_000;

export interface SmtpRunnerOptions {
  /**
   * Certificate authorities trusted for STARTTLS, in place of Node's (a private CA, a test's
   * self-signed certificate). Default: Node's bundled CAs. The certificate is always verified.
   */
  ca?: SecureContextOptions['ca'];
  /** How names are resolved, every address of a name (`dns.lookup` with `all: true`, the default). */
  lookupAll?: LookupAllFunction;
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const round = (ms: number) => Math.round(ms * 100) / 100;
const unbracket = (host: string) => host.replace(/^\[(.*)\]$/, '$1');

/**
 * The SMTP rule beside the schema: port 465 is SMTPS, TLS from the first byte, where a server
 * says nothing in plain text, so neither `NONE` nor `STARTTLS` can get a greeting there.
 */
export function validateSmtpCheck(check: unknown): void {
  const request = isObject(check) ? check.request : undefined;
  if (!isObject(request)) throw new ValidationError([{ path: 'request', message: 'is required' }]);
  if (request.port === 465) {
    throw new ValidationError([{ path: 'request.port', message: 'is 465, SMTPS (TLS from the first byte), which this check does not speak: use 25 or 587, with tls STARTTLS to check TLS' }]);
  }
}

/** The first line of a reply, for messages: `"554 No service here"`. */
const firstLine = (reply: SmtpReply) => `"${reply.text.split('\n')[0]}"`;

/** Marks of a run's progress (performance.now()), from which its phases are counted. */
interface Marks {
  start: number;
  connected?: number;
  greeted?: number;
  ehloDone?: number;
}

function phasesOf(marks: Marks, end: number) {
  const { start, connected, greeted } = marks;
  return {
    connection: round((connected ?? end) - start),
    banner: connected === undefined ? 0 : round((greeted ?? end) - connected),
    ehlo: greeted === undefined ? 0 : round(end - greeted),
    total: round(end - start),
  };
}

/**
 * A runner for SMTP checks, written against `@vigil/core` alone: it connects with `node:net`,
 * reads the 220 greeting, sends `EHLO vigil.local` and reads the 250 reply (with STARTTLS: upgrades
 * with `node:tls` and reads it again), and says `QUIT`. Register it with the check type:
 * `createVigil({ checkTypes: [smtpCheckType], runners: [smtpRunner()] })`.
 */
export function smtpRunner(options: SmtpRunnerOptions = {}): Runner {
  const lookupAll = options.lookupAll ?? systemLookupAll;
  if (typeof lookupAll !== 'function') throw new TypeError('smtpRunner: lookupAll must be a function');

  async function runCheck(job: RunJob, check: SmtpCheck, signal: AbortSignal): Promise<RunResult> {
    const { port, tls: tlsMode, expectedBanner } = check.request;
    const host = unbracket(check.request.hostname);
    const conv = new SmtpConversation(host, port);
    const marks: Marks = { start: performance.now() };
    const details: Record<string, unknown> = { address: null, port, tls: tlsMode, greeting: null, extensions: [] };

    // One time limit for the whole conversation: the check's maxResponseTime (a slower run fails
    // anyway), or the run's own limit when that comes first.
    const runLimit = job.timeoutMs > 0 ? job.timeoutMs : DEFAULT_LIMIT_MS;
    const maxMs = check.maxResponseTime;
    const limitIsMax = maxMs !== null && maxMs <= runLimit;
    const limitMs = limitIsMax ? maxMs : runLimit;
    const limitLabel = limitIsMax ? `the check's maxResponseTime of ${limitMs} ms` : `the run's time limit of ${limitMs} ms`;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conv.stop(new SmtpFailure(`Gave up after ${limitMs} ms (${limitLabel}) ${stageInWords(conv.stage, conv.where)}`, 'TIMEOUT', 'ETIMEDOUT'));
    }, limitMs);
    const onAbort = () => conv.stop(new SmtpFailure(`The run was aborted while ${stageInWords(conv.stage, conv.where)}`, 'TIMEOUT', 'EABORTED'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });

    let failure: SmtpFailure | null = null;
    let refused = false;
    const problems: string[] = [];
    try {
      // The address: with a policy that refuses internal addresses, every address of the name is
      // checked before any connection, and the run connects to one of those it looked up.
      let address: string;
      const policy = job.targetPolicy?.refuseInternalAddresses ? job.targetPolicy : null;
      try {
        if (policy) {
          const checked = await conv.guard(lookupChecked(policy, host, 0, lookupAll));
          if (checked.refusal) {
            refused = true;
            throw new SmtpFailure(targetRefusalMessage(checked.refusal, host), 'OTHER', 'ETARGETPOLICY');
          }
          address = checked.addresses[0].address;
        } else if (isIP(host)) {
          address = host;
        } else {
          const found = await conv.guard(lookupAll(host, 0));
          if (found.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
          address = found[0]!.address;
        }
      } catch (err) {
        if (err instanceof SmtpFailure) throw err;
        const code = String((err as NodeJS.ErrnoException).code ?? 'EDNS');
        throw new SmtpFailure(`The name ${host} could not be resolved (${code}): check the hostname, and that it has an address`, 'NETWORK_ERROR', code);
      }
      details.address = address;

      await conv.connect(address);
      marks.connected = performance.now();

      const greeting = await conv.reply('greeting');
      marks.greeted = performance.now();
      details.greeting = greeting.text;
      if (greeting.code !== 220) throw new SmtpFailure(`${conv.where} greeted with ${firstLine(greeting)} instead of 220`, 'ASSERTION', 'EGREETING');
      if (expectedBanner !== null && !greeting.text.includes(expectedBanner)) {
        problems.push(`The greeting of ${conv.where}, ${firstLine(greeting)}, does not contain "${expectedBanner}"`);
      }

      let ehlo = await ehloExchange(conv);
      if (tlsMode === 'STARTTLS') {
        const offered = ehlo.lines.slice(1).map((line) => line.split(' ')[0]!.toUpperCase());
        if (!offered.includes('STARTTLS')) {
          throw new SmtpFailure(`${conv.where} does not offer STARTTLS (its EHLO lists ${offered.length ? offered.join(', ') : 'no extensions'})`, 'ASSERTION', 'ENOSTARTTLS');
        }
        conv.send('STARTTLS');
        const ready = await conv.reply('starttls');
        if (ready.code !== 220) throw new SmtpFailure(`${conv.where} answered STARTTLS with ${firstLine(ready)} instead of 220`, 'ASSERTION', 'ESTARTTLS');
        const secure = await conv.startTls({
          host,
          servername: isIP(host) ? undefined : host,
          ca: options.ca,
          rejectUnauthorized: true,
        });
        details.tlsProtocol = secure.getProtocol();
        details.tlsCipher = secure.getCipher().name;
        ehlo = await ehloExchange(conv);
      }
      marks.ehloDone = performance.now();
      clearTimeout(timer);
      details.extensions = ehlo.lines.slice(1);

      // The verdict is known; QUIT is a courtesy to the server, and its time is not counted.
      conv.send('QUIT');
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([conv.reply('quit'), new Promise((resolve) => (grace = setTimeout(resolve, QUIT_GRACE_MS)))]).catch(() => undefined);
      clearTimeout(grace);
    } catch (err) {
      if (!(err instanceof SmtpFailure)) throw err;
      failure = err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      conv.close();
    }

    const end = marks.ehloDone ?? performance.now();
    const phases = phasesOf(marks, end);
    const responseTime = phases.total;
    if (failure) details.errorCode = failure.code;

    if (refused) {
      // Not tried, so not found down: shouldFail does not turn a refusal into a pass.
      return runResult({ hasFailures: true, responseTime, phases, errorMessage: failure!.message, failureKind: 'OTHER', details });
    }
    const overMax = (timedOut && limitIsMax) || isOverMaxResponseTime(responseTime, maxMs);
    if (!failure && overMax) problems.push(`The conversation took ${responseTime} ms, over the check's maxResponseTime of ${maxMs} ms`);
    const messages = failure ? [failure.message, ...problems] : problems;
    const kind = failure?.kind ?? (problems.length === 0 ? null : overMax && problems.length === 1 ? 'TIMEOUT' : 'ASSERTION');
    const result = applyShouldFail(runResult({
      hasFailures: messages.length > 0,
      overMaxResponseTime: overMax,
      responseTime,
      phases,
      errorMessage: messages.length > 0 ? messages.join('; ') : null,
      failureKind: messages.length > 0 ? kind : null,
      details,
    }), check.shouldFail, signal);
    // Core's rule for response times: a passing run slower than degradedResponseTime is degraded;
    // a failing one is a failure only.
    return { ...result, isDegraded: isDegradedRun(result, check) };
  }

  return {
    checkType: smtpCheckType.checkType,
    validate: validateSmtpCheck,
    run: (job, signal) => runChecked('SMTP runner', smtpCheckType, job, (check) => runCheck(job, check, signal)),
  };
}

/** `EHLO vigil.local` and its 250 reply: the greeting line, then one extension a line. */
async function ehloExchange(conv: SmtpConversation): Promise<SmtpReply> {
  conv.send(`EHLO ${EHLO_NAME}`);
  const reply = await conv.reply('ehlo');
  if (reply.code !== 250) throw new SmtpFailure(`${conv.where} answered EHLO with ${firstLine(reply)} instead of 250`, 'ASSERTION', 'EEHLO');
  return reply;
}
