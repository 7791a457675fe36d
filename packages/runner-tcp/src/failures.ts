import { targetRefusalMessage, type FailureKind, type TargetRefusal } from '@vigil/core';

/** Where an exchange was when it ended. */
export type Stage = 'dns' | 'connect' | 'response';

export interface ExchangeFailure {
  kind: FailureKind;
  /** ECONNREFUSED, ENOTFOUND, ... or TIMEOUT / ABORTED for the limits this side sets. */
  code: string;
  message: string;
  stage: Stage;
  timedOut: boolean;
  aborted: boolean;
}

export interface Target {
  hostname: string;
  address: string | null;
  port: number;
  family: 4 | 6;
}

const familyName = (family: 4 | 6) => (family === 6 ? 'IPv6' : 'IPv4');

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** `127.0.0.1:5999`, `[::1]:5999`, or `db.example.com:5432 (10.0.0.5)` when a name was looked up. */
export function describeTarget(t: Target): string {
  if (t.address === null) return hostPort(t.hostname, t.port);
  if (t.address === t.hostname) return hostPort(t.address, t.port);
  return `${hostPort(t.hostname, t.port)} (${t.address})`;
}

const network = (code: string, message: string, stage: Stage): ExchangeFailure =>
  ({ kind: 'NETWORK_ERROR', code, message, stage, timedOut: false, aborted: false });

export function lookupFailure(err: NodeJS.ErrnoException, hostname: string, family: 4 | 6): ExchangeFailure {
  const code = String(err.code ?? 'EDNS');
  const record = family === 6 ? 'AAAA' : 'A';
  switch (code) {
    case 'ENOTFOUND':
    case 'ENODATA':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return network(code, `DNS lookup of "${hostname}" found no ${familyName(family)} address (${code}): check the hostname, and that it has an ${record} record`, 'dns');
    case 'EAI_AGAIN':
      return network(code, `DNS lookup of "${hostname}" failed for now (EAI_AGAIN): the DNS server did not answer; it may be down or unreachable from this location`, 'dns');
    default:
      return network(code, `DNS lookup of "${hostname}" failed (${code}): ${err.message}`, 'dns');
  }
}

export function literalFamilyFailure(address: string, family: 4 | 6): ExchangeFailure {
  const other = family === 6 ? 4 : 6;
  return {
    kind: 'OTHER',
    code: 'EFAMILY',
    message: `${address} is an ${familyName(other)} address, but the check's ipFamily is ${familyName(family)}: change one of them`,
    stage: 'dns',
    timedOut: false,
    aborted: false,
  };
}

/**
 * The host's target policy refuses the address: the run fails without connecting. Not a network
 * error, so `onlyOn: NETWORK_ERROR` retries and shouldFail do not treat it as an unreachable target.
 */
export function policyFailure(refusal: TargetRefusal, hostname: string): ExchangeFailure {
  return { kind: 'OTHER', code: 'ETARGETPOLICY', message: targetRefusalMessage(refusal, hostname), stage: 'connect', timedOut: false, aborted: false };
}

/** A socket error, in words that say what happened and what to look at. */
export function socketFailure(err: NodeJS.ErrnoException, stage: Stage, t: Target, received: number): ExchangeFailure {
  const code = String(err.code ?? 'ESOCKET');
  const where = describeTarget(t);
  switch (code) {
    case 'ECONNREFUSED':
      return network(code, `Connection refused by ${where}: nothing is listening on that port`, stage);
    case 'ECONNRESET':
      return stage === 'response'
        ? network(code, `Connection reset by ${where} after ${received} bytes of response: the server dropped the connection (ECONNRESET)`, stage)
        : network(code, `Connection reset by ${where} while connecting (ECONNRESET): a firewall or the server rejected it`, stage);
    case 'EPIPE':
      return network(code, `Connection closed by ${where} while the request was being sent (EPIPE)`, stage);
    case 'EHOSTUNREACH':
      return network(code, `No route to ${where} (EHOSTUNREACH): the host is unreachable from this location`, stage);
    case 'ENETUNREACH':
      return network(code, `Network unreachable for ${where} (ENETUNREACH): this location has no ${familyName(t.family)} route to it`, stage);
    case 'EADDRNOTAVAIL':
      return network(code, `Cannot connect to ${where} (EADDRNOTAVAIL): the address is not available from this location`, stage);
    case 'ETIMEDOUT':
      return { ...network(code, `Connection to ${where} timed out in the operating system (ETIMEDOUT): the host did not answer`, stage), kind: 'TIMEOUT' };
    default:
      return network(code, `Connection to ${where} failed (${code}): ${err.message}`, stage);
  }
}

export function timeoutFailure(
  stage: Stage,
  t: Target,
  progress: { bytesSent: number; received: number; limitLabel: string },
): ExchangeFailure {
  const where = describeTarget(t);
  const within = `within ${progress.limitLabel}`;
  let message: string;
  if (stage === 'dns') {
    message = `DNS lookup of "${t.hostname}" did not finish ${within}`;
  } else if (stage === 'connect') {
    message = `No answer from ${where} ${within}: the connection was not accepted (the host may be down, or a firewall may drop the packets)`;
  } else if (progress.received > 0) {
    message = `The response from ${where} did not end ${within}: ${progress.received} bytes arrived, but the server neither closed the connection nor paused`;
  } else if (progress.bytesSent > 0) {
    message = `Connected to ${where} and sent ${progress.bytesSent} bytes, but no response arrived ${within}`;
  } else {
    message = `Connected to ${where}, but the server sent nothing ${within}`;
  }
  return { kind: 'TIMEOUT', code: 'TIMEOUT', message, stage, timedOut: true, aborted: false };
}

export function abortFailure(stage: Stage, t: Target, elapsedMs: number): ExchangeFailure {
  const doing = stage === 'dns'
    ? `looking up "${t.hostname}"`
    : stage === 'connect' ? `connecting to ${describeTarget(t)}` : `waiting for the response from ${describeTarget(t)}`;
  return {
    kind: 'TIMEOUT',
    code: 'ABORTED',
    message: `The run was stopped after ${Math.round(elapsedMs)} ms while ${doing}`,
    stage,
    timedOut: false,
    aborted: true,
  };
}
