import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { lookupChecked, targetRefusalMessage, type LookupAllFunction, type OpenedCertificate, type TargetPolicy, type TargetRefusal } from '@vigil/core';
import type { buildConnector } from 'undici';

/** Resolves a host name to one address of the family (a host's own service discovery may stand in). */
export type LookupFunction = (hostname: string, family: 4 | 6) => Promise<{ address: string; family: number }>;

export const systemLookup: LookupFunction = (hostname, family) => dnsLookup(hostname, { family });

/** Moments (performance.now()) of one connection's setup; null until reached. */
export interface ConnectionTiming {
  https: boolean;
  start: number;
  lookupEnd: number | null;
  connectEnd: number | null;
  secureEnd: number | null;
}

/** What a run learned about the connection it last opened. */
export interface ConnectionInfo {
  remoteAddress: string | null;
  tlsProtocol: string | null;
  /** When the server's certificate stops being valid (https only). */
  certificateValidTo: Date | null;
  /** The stored host pattern of the client certificate the connection presented. */
  clientCertificate: string | null;
}

/** Marks an error with where it happened, for the messages in failures.ts. */
export type ConnectStage = 'dns' | 'connect' | 'tls' | 'client-certificate' | 'target-policy';
export type StagedError = Error & { code?: string; stage?: ConnectStage };

const staged = (err: unknown, stage: ConnectStage): StagedError => {
  const e = (err instanceof Error ? err : new Error(String(err))) as StagedError;
  e.stage ??= stage;
  return e;
};

const now = () => performance.now();

export interface RunConnectionOptions {
  family: 4 | 6;
  lookup: LookupFunction;
  /** TLS verification off: only when the check asks for it (skipSSL). */
  skipSSL: boolean;
  /** Ends a connection attempt in flight (the run's time limit or its abort). */
  signal: AbortSignal;
  /**
   * The host's target policy. When it refuses internal addresses, every address of a name is
   * looked up (`lookupAll`) and checked before the connection opens, on every connection of the
   * run (each redirect to another origin opens one), and the run connects to the address checked.
   */
  policy?: TargetPolicy | null;
  lookupAll?: LookupAllFunction;
}

/** The error of a connection the target policy refused. */
function refused(refusal: TargetRefusal, host: string): StagedError {
  return Object.assign(new Error(targetRefusalMessage(refusal, host)), { code: 'ETARGETPOLICY', stage: 'target-policy' as const });
}

/**
 * The connections of one run: undici's `connect` hook, doing name lookup, TCP connect and TLS
 * handshake itself so that each is timed, and presenting the client certificate the run found
 * for the host. A run opens fresh connections (a monitor measures a cold request), so this lives
 * as long as the run's undici Agent.
 */
export class RunConnections {
  /** Set by the exchange before each request; the connection a request opens is timed into it. */
  onConnection: ((timing: ConnectionTiming) => void) | null = null;
  /** Certificates by lower-case host name, looked up before the request to that host. */
  readonly certificates = new Map<string, OpenedCertificate | null>();
  last: ConnectionInfo | null = null;
  /**
   * An error of a connection after it was handed to undici (a TLS 1.3 server refuses a client
   * certificate only then, with an alert); undici itself reports just "other side closed".
   */
  lateError: StagedError | null = null;

  constructor(private readonly o: RunConnectionOptions) {}

  readonly connect: buildConnector.connector = (options, callback) => {
    const https = options.protocol === 'https:';
    const host = options.hostname.replace(/^\[|\]$/g, '');
    const port = Number(options.port) || (https ? 443 : 80);
    const timing: ConnectionTiming = { https, start: now(), lookupEnd: null, connectEnd: null, secureEnd: null };
    this.onConnection?.(timing);
    const { signal } = this.o;
    let done = false;
    let socket: net.Socket | null = null;
    const finish = (err: unknown, ready: net.Socket | null, stage?: ConnectStage) => {
      if (done) {
        // The first error of the connection's own; undici's errors (UND_ERR_*) only echo it.
        const code = String((err as StagedError | null)?.code ?? '');
        if (err && !code.startsWith('UND_ERR')) this.lateError ??= err as StagedError;
        return;
      }
      done = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        socket?.destroy();
        callback(staged(err, stage ?? 'connect'), null);
      } else {
        callback(null, ready!);
      }
    };
    const onAbort = () => finish(signal.reason ?? new Error('aborted'), null, timing.lookupEnd === null ? 'dns' : timing.connectEnd === null ? 'connect' : 'tls');
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });

    const open = (address: string, family: number) => {
      if (done) return;
      timing.lookupEnd ??= now();
      socket = net.connect({ host: address, port, family, noDelay: true });
      socket.on('error', (err) => finish(err, null, timing.connectEnd === null ? 'connect' : 'tls'));
      socket.once('connect', () => {
        timing.connectEnd = now();
        this.last = { remoteAddress: address, tlsProtocol: null, certificateValidTo: null, clientCertificate: null };
        if (!https) return finish(null, socket);
        this.handshake(socket!, host, timing, finish);
      });
    };
    const literal = net.isIP(host);
    const policy = this.o.policy?.refuseInternalAddresses ? this.o.policy : null;
    if (literal) {
      // An IP address needs no lookup: its dns phase is 0.
      timing.lookupEnd = timing.start;
      const refusal = policy?.checkAddress(host);
      if (refusal) return finish(refused(refusal, host), null, 'target-policy');
      return open(host, literal);
    }
    if (policy) {
      // Every address is checked, so a name with one internal address among public ones is refused.
      const lookupAll = this.o.lookupAll ?? (async (name: string) => [await this.o.lookup(name, this.o.family)]);
      lookupChecked(policy, host, this.o.family, lookupAll).then(({ refusal, addresses }) => {
        timing.lookupEnd ??= now();
        if (refusal) return finish(refused(refusal, host), null, 'target-policy');
        open(addresses[0]!.address, addresses[0]!.family);
      }, (err: unknown) => finish(err, null, 'dns'));
      return;
    }
    this.o.lookup(host, this.o.family).then(({ address, family }) => open(address, family), (err: unknown) => finish(err, null, 'dns'));
  };

  private handshake(socket: net.Socket, host: string, timing: ConnectionTiming, finish: (err: unknown, ready: net.Socket | null, stage?: ConnectStage) => void): void {
    const certificate = this.certificates.get(host.toLowerCase()) ?? null;
    let secure: tls.TLSSocket;
    try {
      secure = tls.connect({
        socket,
        // Identity is checked against `host` (an IP address too); SNI carries names only (RFC 6066 §3).
        host,
        ...(net.isIP(host) ? {} : { servername: host }),
        rejectUnauthorized: !this.o.skipSSL,
        ALPNProtocols: ['http/1.1'],
        ...(certificate
          ? {
              cert: certificate.cert,
              ...(certificate.key ? { key: certificate.key } : {}),
              ...(certificate.passphrase ? { passphrase: certificate.passphrase } : {}),
              // The stored CA is trusted besides the usual roots, not instead of them.
              ...(certificate.ca ? { ca: [...tls.rootCertificates, certificate.ca] } : {}),
            }
          : {}),
      });
    } catch (err) {
      // A key that its passphrase does not open, or a certificate and key that do not fit.
      return finish(err, null, 'client-certificate');
    }
    secure.on('error', (err) => finish(err, null, 'tls'));
    secure.once('secureConnect', () => {
      timing.secureEnd = now();
      const peer = secure.getPeerCertificate();
      this.last = {
        remoteAddress: socket.remoteAddress ?? null,
        tlsProtocol: secure.getProtocol(),
        certificateValidTo: peer?.valid_to ? new Date(peer.valid_to) : null,
        clientCertificate: certificate?.host ?? null,
      };
      finish(null, secure);
    });
  }
}
