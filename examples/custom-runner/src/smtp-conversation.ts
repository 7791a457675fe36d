import net from 'node:net';
import tls from 'node:tls';
import type { FailureKind } from '@vigil/core';

/** What the conversation is doing, for messages: `Gave up ... waiting for the greeting of ...`. */
export type SmtpStage = 'lookup' | 'connect' | 'greeting' | 'ehlo' | 'starttls' | 'tls' | 'quit';

/** One SMTP reply: its code, and the text of each line after the code (`250-SIZE 1000` gives `SIZE 1000`). */
export interface SmtpReply {
  code: number;
  lines: string[];
  /** The reply as the server sent it, its lines joined with `\n`. */
  text: string;
}

/** Why a conversation ended before its end: the message a person reads, and how retries see it. */
export class SmtpFailure extends Error {
  constructor(message: string, readonly kind: FailureKind, readonly code: string) {
    super(message);
    this.name = 'SmtpFailure';
  }
}

/** A server sends nothing this long without a line end: it is not an SMTP server. */
const MAX_BUFFERED = 64 * 1024;
const REPLY_LINE = /^(\d{3})([ -])(.*)$/;

/** `mail.example.com:25 (192.0.2.25)`, or `127.0.0.1:25` when the check names the address. */
export function describeServer(hostname: string, address: string | null, port: number): string {
  const hostPort = `${net.isIPv6(hostname) ? `[${hostname}]` : hostname}:${port}`;
  return address && address !== hostname ? `${hostPort} (${address})` : hostPort;
}

/** The stage in words, as a sentence continues it: `... while waiting for the greeting of X`. */
export function stageInWords(stage: SmtpStage, where: string): string {
  switch (stage) {
    case 'lookup': return `looking up the address of ${where}`;
    case 'connect': return `connecting to ${where}`;
    case 'greeting': return `waiting for the greeting of ${where}`;
    case 'ehlo': return `waiting for ${where} to answer EHLO`;
    case 'starttls': return `waiting for ${where} to answer STARTTLS`;
    case 'tls': return `in the TLS handshake with ${where} after STARTTLS`;
    case 'quit': return `waiting for ${where} to answer QUIT`;
  }
}

/** When, in the conversation, a connection ended: `... closed the connection before its greeting`. */
function whenInWords(stage: SmtpStage): string {
  switch (stage) {
    case 'lookup':
    case 'connect': return 'while connecting';
    case 'greeting': return 'before its greeting';
    case 'ehlo': return 'before answering EHLO';
    case 'starttls': return 'before answering STARTTLS';
    case 'tls': return 'during the TLS handshake after STARTTLS';
    case 'quit': return 'after QUIT';
  }
}

/** A socket error in words that say what happened and what to look at. */
function socketFailure(err: NodeJS.ErrnoException, stage: SmtpStage, where: string): SmtpFailure {
  const code = String(err.code ?? 'ESOCKET');
  switch (code) {
    case 'ECONNREFUSED':
      return new SmtpFailure(`Connection refused by ${where}: nothing is listening on that port`, 'NETWORK_ERROR', code);
    case 'ECONNRESET':
      return new SmtpFailure(`${where} reset the connection (ECONNRESET) ${whenInWords(stage)}`, 'NETWORK_ERROR', code);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new SmtpFailure(`${where} is unreachable from this location (${code})`, 'NETWORK_ERROR', code);
    default:
      return new SmtpFailure(`The connection to ${where} failed (${code}): ${err.message}`, 'NETWORK_ERROR', code);
  }
}

/** A failed TLS handshake: a certificate the run does not trust is the server's answer, not the network's. */
function tlsFailure(err: NodeJS.ErrnoException, where: string): SmtpFailure {
  const code = String(err.code ?? 'ETLS');
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/.test(code);
  return certificate
    ? new SmtpFailure(`The certificate of ${where} was refused after STARTTLS: ${err.message} (${code})`, 'ASSERTION', code)
    : new SmtpFailure(`The TLS handshake with ${where} after STARTTLS failed (${code}): ${err.message}`, 'NETWORK_ERROR', code);
}

/**
 * One SMTP conversation over one connection: connect, read replies, send commands, upgrade to
 * TLS. Every wait ends with a value or an `SmtpFailure`; `stop(failure)` (a time limit, an abort)
 * ends the wait under way and destroys the socket, and every later wait fails with it at once.
 */
export class SmtpConversation {
  stage: SmtpStage = 'lookup';
  where: string;
  private socket: net.Socket | null = null;
  /** The plain socket under TLS after STARTTLS, destroyed with it. */
  private plain: net.Socket | null = null;
  private buffer = '';
  private pending: { deliver: () => void; reject: (err: SmtpFailure) => void } | null = null;
  private stopped: SmtpFailure | null = null;

  constructor(private readonly hostname: string, private readonly port: number) {
    this.where = describeServer(hostname, null, port);
  }

  get isStopped(): boolean {
    return this.stopped !== null;
  }

  /** Waits for `promise`, unless the conversation stops first. */
  guard<T>(promise: Promise<T>): Promise<T> {
    return this.wait<T>((resolve, reject) => promise.then(resolve, reject), () => undefined);
  }

  /** Opens the TCP connection to an address the run chose (and its policy allowed). */
  connect(address: string): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    this.stage = 'connect';
    this.where = describeServer(this.hostname, address, this.port);
    const socket = net.connect({ host: address, port: this.port, noDelay: true });
    this.attach(socket);
    return this.wait<void>((resolve) => socket.once('connect', () => resolve()), () => undefined);
  }

  /** Reads the next complete reply (all lines of a multi-line one). */
  reply(stage: SmtpStage): Promise<SmtpReply> {
    this.stage = stage;
    let deliver = () => undefined as void;
    return this.wait<SmtpReply>((resolve) => {
      deliver = () => {
        const reply = this.takeReply();
        if (reply) resolve(reply);
      };
      deliver();
    }, () => deliver());
  }

  send(command: string): void {
    if (!this.stopped) this.socket?.write(`${command}\r\n`);
  }

  /** Upgrades the connection after the server's 220 to STARTTLS; answers the TLS socket once the handshake is done. */
  async startTls(options: tls.ConnectionOptions): Promise<tls.TLSSocket> {
    this.stage = 'tls';
    const plain = this.socket!;
    this.plain = plain;
    plain.removeAllListeners('data');
    plain.removeAllListeners('end');
    plain.removeAllListeners('close');
    // Whatever came after the 220 was sent before TLS, and must not be read as if it came over it.
    this.buffer = '';
    const secure = tls.connect({ ...options, socket: plain });
    this.attach(secure, true);
    await this.wait<void>((resolve) => secure.once('secureConnect', () => resolve()), () => undefined);
    return secure;
  }

  /** Ends the conversation: the wait under way fails with `failure`, and the socket is destroyed. */
  stop(failure: SmtpFailure): void {
    if (this.stopped) return;
    this.stopped = failure;
    this.socket?.destroy();
    this.plain?.destroy();
    const pending = this.pending;
    this.pending = null;
    pending?.reject(failure);
  }

  /** Closes the connection (after QUIT, or a failure); nothing waits any more. */
  close(): void {
    this.stop(new SmtpFailure('The conversation is over', 'OTHER', 'ECLOSED'));
  }

  private wait<T>(start: (resolve: (value: T) => void, reject: (err: unknown) => void) => void, deliver: () => void): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    return new Promise<T>((resolve, reject) => {
      const entry = {
        deliver,
        reject: (err: SmtpFailure) => reject(err),
      };
      this.pending = entry;
      const done = (fn: () => void) => {
        if (this.pending !== entry) return;
        this.pending = null;
        fn();
      };
      start((value) => done(() => resolve(value)), (err) => done(() => reject(err)));
    });
  }

  private attach(socket: net.Socket, secure = false): void {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      if (this.buffer.length > MAX_BUFFERED) {
        this.stop(new SmtpFailure(`${this.where} sent over ${MAX_BUFFERED} bytes without ending a reply: it does not speak SMTP`, 'ASSERTION', 'EPROTO'));
      } else {
        this.pending?.deliver();
      }
    });
    // Kept for the socket's whole life: an error after the conversation ended must not go unhandled.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.stop(secure && this.stage === 'tls' ? tlsFailure(err, this.where) : socketFailure(err, this.stage, this.where));
    });
    socket.once('close', () => {
      this.stop(new SmtpFailure(`${this.where} closed the connection ${whenInWords(this.stage)}`, 'NETWORK_ERROR', 'ECLOSED'));
    });
  }

  /** A complete reply from the start of the buffer, taken off it; null while one is still coming. */
  private takeReply(): SmtpReply | null {
    const lines: string[] = [];
    const raw: string[] = [];
    let offset = 0;
    for (;;) {
      const end = this.buffer.indexOf('\n', offset);
      if (end < 0) return null;
      const line = this.buffer.slice(offset, end).replace(/\r$/, '');
      offset = end + 1;
      const match = REPLY_LINE.exec(line);
      if (!match || (raw.length > 0 && Number(match[1]) !== Number(REPLY_LINE.exec(raw[0]!)![1]))) {
        const shown = line.length > 80 ? `${line.slice(0, 80)}...` : line;
        this.stop(new SmtpFailure(`${this.where} sent "${shown}", which is not an SMTP reply`, 'ASSERTION', 'EPROTO'));
        return null;
      }
      raw.push(line);
      lines.push(match[3]!);
      if (match[2] === ' ') {
        this.buffer = this.buffer.slice(offset);
        return { code: Number(match[1]), lines, text: raw.join('\n') };
      }
    }
  }
}
