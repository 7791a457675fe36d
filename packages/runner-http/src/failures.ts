import type { FailureKind } from '@vigil/core';
import type { StagedError } from './connector.js';
import type { Hop } from './exchange.js';

export interface RunFailure {
  kind: FailureKind;
  /** ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED, ... or TIMEOUT / ABORTED for the limits this side sets. */
  code: string;
  message: string;
  /** Failing because of Vigil's side (a stored certificate it cannot use), not the target's. */
  ours?: boolean;
}

/** Why the run's signal fired: its time limit, or an abort from outside. */
export type StopReason = { kind: 'limit'; label: string } | { kind: 'abort' };

const TLS_VERIFY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
]);

const network = (code: string, message: string): RunFailure => ({ kind: 'NETWORK_ERROR', code, message });

/** `api.example.com:443`, or with the address when it was looked up. */
export function describeTarget(url: URL, address: string | null): string {
  const host = url.hostname;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const where = `${host}:${port}`;
  return address && address !== host.replace(/^\[|\]$/g, '') ? `${where} (${address})` : where;
}

/** Where a hop was: looking up, connecting, shaking hands, waiting for headers, or reading the body. */
function doing(hop: Hop | null, where: string): string {
  const c = hop?.connection;
  if (!hop || (c && c.lookupEnd === null)) return `looking up ${where.split(':')[0]}`;
  if (c && c.connectEnd === null) return `connecting to ${where}`;
  if (c && c.https && c.secureEnd === null) return `in the TLS handshake with ${where}`;
  if (hop.headersAt === null) return `waiting for the response of ${where}`;
  return `reading the response body of ${where}`;
}

/**
 * A failed request in words that say what happened and what to look at, and its kind for retry
 * strategies: no answer at all (DNS, connection, TLS, a dropped connection) is a NETWORK_ERROR, a
 * limit reached a TIMEOUT, a request that could not be made an OTHER.
 */
export function requestFailure(
  err: StagedError,
  ctx: {
    url: URL;
    hop: Hop | null;
    address: string | null;
    stop: StopReason | null;
    elapsedMs: number;
    clientCertificate: string | null;
    family: 4 | 6;
    lateError: StagedError | null;
  },
): RunFailure {
  const where = describeTarget(ctx.url, ctx.address);
  if (ctx.stop?.kind === 'limit') {
    return { kind: 'TIMEOUT', code: 'TIMEOUT', message: `No complete response within ${ctx.stop.label}: the run stopped while ${doing(ctx.hop, where)}` };
  }
  if (ctx.stop?.kind === 'abort') {
    return { kind: 'TIMEOUT', code: 'ABORTED', message: `The run was stopped after ${Math.round(ctx.elapsedMs)} ms while ${doing(ctx.hop, where)}` };
  }
  // undici reports a connection the server dropped as "other side closed"; the socket may know why.
  if ((err.code === 'UND_ERR_SOCKET' || err.code === 'ECONNRESET') && ctx.lateError) err = ctx.lateError;
  const code = String(err.code ?? 'EREQUEST');
  const text = err.message ?? String(err);
  const host = ctx.url.hostname;
  if (code === 'ETARGETPOLICY') {
    // Not a network error: retries onlyOn NETWORK_ERROR leave it, and it is the host's rule, not the target's state.
    return { kind: 'OTHER', code, message: text };
  }
  if (err.stage === 'client-certificate') {
    return { kind: 'OTHER', code: 'ECLIENTCERT', message: `The client certificate stored for ${ctx.clientCertificate ?? host} could not be used: ${text}`, ours: true };
  }
  switch (code) {
    case 'ENOTFOUND':
    case 'ENODATA':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return network(code, `DNS lookup of "${host}" found no IPv${ctx.family} address (${code}): check the host name in the url`);
    case 'EAI_AGAIN':
      return network(code, `DNS lookup of "${host}" failed for now (EAI_AGAIN): the DNS server did not answer`);
    case 'ECONNREFUSED':
      return network(code, `Connection refused by ${where}: nothing is listening on that port`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return network(code, `No route to ${where} (${code}): the host is unreachable from this location`);
    case 'ETIMEDOUT':
      return { kind: 'TIMEOUT', code, message: `Connection to ${where} timed out in the operating system (ETIMEDOUT)` };
    default:
      break;
  }
  if (TLS_VERIFY.has(code)) {
    return network(code, `The TLS certificate of ${where} could not be verified (${code}): ${text}. Fix the certificate, or turn on skipSSL if this target is meant to be reached without verification`);
  }
  if (/certificate required|alert bad certificate|alert unknown ca|alert certificate unknown|alert access denied/i.test(`${code} ${text}`)) {
    return network(code, ctx.clientCertificate
      ? `${where} did not accept the client certificate stored for ${ctx.clientCertificate} (${code})`
      : `${where} asked for a client certificate, and none of the account's client certificates is for ${host} (${code})`);
  }
  if (err.stage === 'tls' || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) {
    return network(code, `The TLS handshake with ${where} failed (${code}): ${text}`);
  }
  const dropped = code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED';
  if (dropped && ctx.clientCertificate && ctx.hop?.connection?.https && ctx.hop.headersAt === null) {
    // A TLS 1.3 server may refuse a client certificate by just closing, after the handshake.
    return network(code, `${where} closed the connection without answering, right after the TLS handshake: it may not accept the client certificate stored for ${ctx.clientCertificate} (${code})`);
  }
  if (dropped) {
    return network(code, `The connection to ${where} was closed by the server while ${doing(ctx.hop, where)} (${code})`);
  }
  if (code.startsWith('UND_ERR_INVALID') || code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return { kind: 'OTHER', code, message: `The request could not be sent as written (${code}): ${text}` };
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE' || code === 'UND_ERR_INFO') {
    return network(code, `${where} answered with a response that is not valid HTTP (${code}): ${text}`);
  }
  return network(code, `The request to ${where} failed (${code}): ${text}`);
}
