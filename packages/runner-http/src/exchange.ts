import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import type { Agent } from 'undici';
import type { ConnectionTiming, RunConnections } from './connector.js';

/** One request and its response: a run has one, or one per redirect followed. */
export interface Hop {
  start: number;
  /** The connection this request opened; null when it reused one (a redirect to the same origin). */
  connection: ConnectionTiming | null;
  headersAt: number | null;
  end: number | null;
}

export interface HopRequest {
  method: string;
  url: URL;
  headers: [string, string][];
  body: string | null;
}

export interface HopResponse {
  statusCode: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent (decompressed when it came with a Content-Encoding), up to the byte limit. */
  body: Buffer;
  /** Bytes that arrived on the wire. */
  bytesReceived: number;
  truncated: boolean;
  /** Why a compressed body could not be read, if it could not. */
  decodeProblem: string | null;
}

export type HopOutcome = { ok: true; response: HopResponse } | { ok: false; error: Error & { code?: string } };

const now = () => performance.now();

/** Decompresses a body of a Content-Encoding Node knows, within the byte limit; other encodings are left as they came. */
function decode(raw: Buffer, encoding: string | undefined, maxBytes: number): { body: Buffer; problem: string | null } {
  const name = (encoding ?? '').trim().toLowerCase();
  const options = { maxOutputLength: maxBytes, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  try {
    if (name === 'gzip' || name === 'x-gzip') return { body: zlib.gunzipSync(raw, options), problem: null };
    if (name === 'deflate') return { body: zlib.inflateSync(raw, options), problem: null };
    if (name === 'br') return { body: zlib.brotliDecompressSync(raw, { maxOutputLength: maxBytes }), problem: null };
  } catch (err) {
    return { body: raw, problem: `the ${name} body could not be decompressed: ${(err as Error).message}` };
  }
  return { body: raw, problem: null };
}

/** Sends one request on the run's agent and reads the response body up to `maxBytes`. */
export async function sendHop(
  agent: Agent,
  connections: RunConnections,
  hop: Hop,
  request: HopRequest,
  signal: AbortSignal,
  maxBytes: number,
): Promise<HopOutcome> {
  connections.onConnection = (timing) => {
    hop.connection = timing;
  };
  hop.start = now();
  try {
    const res = await agent.request({
      origin: request.url.origin,
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method as never,
      headers: request.headers.flat(),
      body: request.body,
      signal,
      // The run's own time limit ends the request; undici's 300 s defaults would only be later.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    hop.headersAt = now();
    const chunks: Buffer[] = [];
    let received = 0;
    let truncated = false;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > maxBytes) {
        chunks.push(chunk.subarray(0, chunk.length - (received - maxBytes)));
        truncated = true;
        break;
      }
      chunks.push(chunk);
    }
    hop.end = now();
    const headers = res.headers as HopResponse['headers'];
    const encoding = headers['content-encoding'];
    const { body, problem } = decode(Buffer.concat(chunks), Array.isArray(encoding) ? encoding[0] : encoding, maxBytes);
    return {
      ok: true,
      response: { statusCode: res.statusCode, statusText: res.statusText ?? '', headers, body, bytesReceived: received, truncated, decodeProblem: problem },
    };
  } catch (err) {
    return { ok: false, error: err as Error & { code?: string } };
  } finally {
    connections.onConnection = null;
  }
}

export const PHASES = ['wait', 'dns', 'tcp', 'tls', 'firstByte', 'download'] as const;
export type Phase = (typeof PHASES)[number];

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * The phases of one hop in milliseconds, consecutive so that they add up to its total: wait
 * (until its connection starts), dns, tcp, tls (https), firstByte (connection ready to response
 * headers), download (headers to the body's end). A hop that reused a connection spends it all in
 * firstByte and download. When the hop failed at `failedAt`, the phase it was in runs to then and
 * later phases are 0.
 */
export function hopPhases(hop: Hop, failedAt: number | null): Record<Phase, number> & { total: number } {
  const c = hop.connection;
  const marks: [Phase, number | null][] = c
    ? [['wait', c.start], ['dns', c.lookupEnd], ['tcp', c.connectEnd], ['tls', c.https ? c.secureEnd : c.connectEnd], ['firstByte', hop.headersAt], ['download', hop.end]]
    : [['wait', hop.start], ['dns', hop.start], ['tcp', hop.start], ['tls', hop.start], ['firstByte', hop.headersAt], ['download', hop.end]];
  const out = { wait: 0, dns: 0, tcp: 0, tls: 0, firstByte: 0, download: 0, total: 0 };
  let last = hop.start;
  for (const [phase, at] of marks) {
    if (at === null) {
      if (failedAt !== null) out[phase] = round(Math.max(0, failedAt - last));
      break;
    }
    out[phase] = round(Math.max(0, at - last));
    last = at;
  }
  out.total = round(PHASES.reduce((sum, p) => sum + out[p], 0));
  return out;
}
