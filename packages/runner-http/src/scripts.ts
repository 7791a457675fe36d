import { apiScriptSource, HTTP_METHODS, SECRET_ENV_PREFIX, type FailureKind, type HttpMethod, type RunJob } from '@vigil/core';
import type { HopRequest, HopResponse } from './exchange.js';
import { withQuery, type OutgoingRequest } from './request.js';
import type { PhaseOutcome, PhaseScript, ScriptPhase } from './script-process.js';
import type { RefusedConnection } from './script-targets.js';

export interface PhaseScripts {
  setup: PhaseScript[];
  teardown: PhaseScript[];
}

type Pairs = Record<string, string | string[]>;

/** The request as setup code sees and changes it. */
export interface ScriptRequest {
  method: string;
  /** The url as written (variables filled), without `queryParameters`. */
  url: string;
  headers: Pairs;
  queryParameters: Pairs;
  /** Text, or null for none. */
  body: string | null;
}

/** What teardown code reads of the answer. */
export interface ScriptResponse {
  statusCode: number;
  statusText: string;
  /** Lower-case names; a repeated header is a list. */
  headers: Pairs;
  /** The body as text, up to the runner's maxResponseBytes. */
  body: string;
  /** Milliseconds per phase: wait, dns, tcp, tls (https), firstByte, download, total. */
  timings: Record<string, number>;
  responseTime: number;
}

const PHASE_NAME: Record<ScriptPhase, string> = { setup: 'Setup', teardown: 'Teardown' };
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function script(phase: ScriptPhase, kind: 'snippet' | 'local', id: number | null, name: string, code: string): PhaseScript {
  const field = phase === 'setup' ? 'localSetupScript' : 'localTearDownScript';
  return kind === 'snippet'
    ? { label: `${phase} snippet ${id} (${JSON.stringify(name)})`, filename: `${phase}-snippet-${id}.js`, source: apiScriptSource(code) }
    : { label: `the group's ${field}`, filename: `${field}.js`, source: apiScriptSource(code) };
}

/**
 * The code of each phase: the group's snippet first, then its local script, both on the same
 * request. The spec gives these fields to groups only ("member API checks"); an API check outside
 * a group has none.
 */
export async function groupScripts(job: RunJob): Promise<{ ok: true; scripts: PhaseScripts } | { ok: false; message: string }> {
  const group = job.group;
  const out: PhaseScripts = { setup: [], teardown: [] };
  if (!group) return { ok: true, scripts: out };
  const phases: [ScriptPhase, number | null, string | null][] = [
    ['setup', group.setupSnippetId, group.localSetupScript],
    ['teardown', group.tearDownSnippetId, group.localTearDownScript],
  ];
  for (const [phase, snippetId, local] of phases) {
    if (snippetId !== null) {
      const snippet = job.snippets ? await job.snippets.get(snippetId) : null;
      if (!snippet) return { ok: false, message: `The group's ${phase} snippet ${snippetId} was not found, so its API checks cannot run` };
      if (snippet.script.trim() !== '') out[phase].push(script(phase, 'snippet', snippet.id, snippet.name, snippet.script));
    }
    if (local !== null && local.trim() !== '') out[phase].push(script(phase, 'local', null, '', local));
  }
  return { ok: true, scripts: out };
}

/** Name/value pairs as an object: the first spelling of a name is its key, a repeated name a list. */
function pairsOf(list: readonly (readonly [string, string])[], lower = false): Pairs {
  const out: Pairs = {};
  const keys = new Map<string, string>();
  for (const [rawName, value] of list) {
    const name = lower ? rawName.toLowerCase() : rawName;
    const key = keys.get(name.toLowerCase()) ?? name;
    keys.set(name.toLowerCase(), key);
    const seen = out[key];
    out[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return out;
}

export function scriptRequestOf(request: OutgoingRequest): ScriptRequest {
  return {
    method: request.method,
    url: request.baseUrl.href,
    headers: pairsOf(request.headers),
    queryParameters: pairsOf(request.queryParameters.map((p) => [p.key, p.value] as const)),
    body: request.body,
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
/** A value the setup's process sent, as text; one whose shape JSON cannot turn into text (`{ toString: 1 }`) is empty. */
const str = (v: unknown): string => {
  try {
    return String(v);
  } catch {
    return '';
  }
};
const values = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : [str(v)]);

/**
 * The request the setup left, checked as the check's own would be: a method Vigil sends, an
 * absolute http(s) url, header names that are HTTP tokens and values without line breaks. Header
 * names are matched without case: of two that differ only in case, the one set last is sent.
 */
export function requestFromScript(value: unknown, previous: OutgoingRequest): { ok: true; request: OutgoingRequest } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message: `Setup left a request that cannot be sent: ${message}` });
  if (!isObject(value)) return bad('`request` is not an object');
  const method = str(value.method ?? '').toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method)) return bad(`request.method "${str(value.method)}" is not one of ${HTTP_METHODS.join(', ')}`);
  let baseUrl: URL;
  try {
    baseUrl = new URL(str(value.url ?? ''));
  } catch {
    return bad(`request.url "${str(value.url)}" is not an absolute URL`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') return bad(`request.url "${baseUrl.href}" is not an http:// or https:// URL`);

  const byName = new Map<string, [string, string][]>();
  for (const [name, v] of Object.entries(isObject(value.headers) ? value.headers : {})) {
    if (!HEADER_NAME.test(name)) return bad(`request.headers has "${name}", which is not an HTTP header name`);
    const list = values(v);
    if (list.some((x) => /[\r\n\0]/.test(x))) return bad(`request.headers["${name}"] holds a line break`);
    byName.set(name.toLowerCase(), list.map((x) => [name, x]));
  }
  const queryParameters = Object.entries(isObject(value.queryParameters) ? value.queryParameters : {})
    .flatMap(([key, v]) => values(v).map((x) => ({ key, value: x })));
  const body = method === 'HEAD' || value.body === null || value.body === undefined ? null : str(value.body);
  return {
    ok: true,
    request: {
      method: method as HttpMethod,
      url: withQuery(baseUrl, queryParameters),
      baseUrl,
      queryParameters,
      headers: [...byName.values()].flat(),
      body,
      assertions: previous.assertions,
    },
  };
}

/** The request as it was sent (the last hop, after redirects), for teardown code to read. */
export function sentRequestOf(request: HopRequest): Omit<ScriptRequest, 'queryParameters'> {
  return { method: request.method, url: request.url.href, headers: pairsOf(request.headers), body: request.body };
}

export function scriptResponseOf(response: HopResponse, text: string, timings: Record<string, number>, responseTime: number): ScriptResponse {
  const headers: Pairs = {};
  for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
  return { statusCode: response.statusCode, statusText: response.statusText, headers, body: text, timings, responseTime };
}

/**
 * Values the run must scrub that setup code made: the new value of any variable named
 * SERVICE_SECRET_*, or of a variable whose value was a secret. A setup that fetches a token and
 * keeps it as `process.env.SERVICE_SECRET_TOKEN` has it scrubbed from what the run records.
 */
export function secretsMadeBy(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>, secrets: readonly string[]): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(after)) {
    if (value === before[key] || value.length === 0) continue;
    const wasSecret = before[key] !== undefined && secrets.includes(before[key]);
    if (key.startsWith(SECRET_ENV_PREFIX) || wasSecret) out.push(value);
  }
  return out;
}

export interface PhaseFailure {
  message: string;
  kind: FailureKind;
  /** Vigil's side (the process would not start, a snippet is gone), not the check's code. */
  ours: boolean;
  /** Added to the run's details: `errorCode` and `refusedTargets` of a connection the target policy refused. */
  details?: Record<string, unknown>;
}

/** Where in a script an error was thrown: its line, from the stack. */
function lineOf(stack: string, scripts: readonly PhaseScript[], label: string | null): number | null {
  const file = scripts.find((s) => s.label === label)?.filename;
  if (!file) return null;
  const at = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+)`).exec(stack);
  return at ? Number(at[1]) : null;
}

/**
 * A phase whose scripts made a connection the target policy refused: it fails the run whatever the
 * scripts did with the error (`OTHER`, `details.errorCode` ETARGETPOLICY), named by the first refusal.
 */
export function refusalFailure(phase: ScriptPhase, refused: readonly RefusedConnection[]): PhaseFailure | null {
  const [first] = refused;
  if (!first) return null;
  return {
    message: `${PHASE_NAME[phase]} failed: ${first.message}${first.label ? ` (${first.label})` : ''}`,
    kind: 'OTHER',
    ours: false,
    details: { errorCode: 'ETARGETPOLICY', refusedTargets: refused.map(({ message: _, ...r }) => ({ phase, ...r })) },
  };
}

/** A phase that did not end well, in words that say which phase, which script and what happened. */
export function phaseFailure(
  phase: ScriptPhase,
  outcome: Exclude<PhaseOutcome, { kind: 'done' }>,
  context: { scripts: readonly PhaseScript[]; limitMs: number; memoryLimitMb: number },
): PhaseFailure {
  const Phase = PHASE_NAME[phase];
  const where = (label: string | null, line: number | null = null) => (label ? ` (${label}${line ? `, line ${line}` : ''})` : '');
  switch (outcome.kind) {
    case 'failed': {
      const e = outcome.error;
      const text = e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message;
      return { message: `${Phase} failed: ${text}${where(e.label, lineOf(e.stack, context.scripts, e.label))}`, kind: e.assertion ? 'ASSERTION' : 'OTHER', ours: false };
    }
    case 'timeout':
      return { message: `${Phase} did not finish within its time limit of ${context.limitMs} ms and was stopped${where(outcome.label)}`, kind: 'TIMEOUT', ours: false };
    case 'aborted':
      return { message: `The run was stopped during ${phase}${where(outcome.label)}`, kind: 'TIMEOUT', ours: false };
    case 'exited':
      return outcome.outOfMemory
        ? { message: `${Phase} ran out of memory (its limit is ${context.memoryLimitMb} MB)${where(outcome.label)}`, kind: 'OTHER', ours: false }
        : { message: `${Phase}'s process ended before its scripts did (${outcome.signal ?? `exit code ${outcome.code}`})${where(outcome.label)}`, kind: 'OTHER', ours: false };
    case 'not-started':
      return { message: `${Phase} could not run: ${outcome.message}`, kind: 'OTHER', ours: true };
  }
}
