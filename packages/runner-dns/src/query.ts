import { randomInt } from 'node:crypto';
import { isIP, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DnsProtocol, DnsRecordType } from '@vigil/core';
import * as packet from 'dns-packet';
import { sendUdp } from './udp-pool.js';

export interface DnsQuery {
  /** The name asked for (`shop.example.com`; for PTR, `4.3.2.1.in-addr.arpa` or an address, which is turned into that name). */
  name: string;
  type: DnsRecordType;
  /** The name server's address (IPv4 or IPv6). */
  server: string;
  /** Default 53. */
  port?: number;
  /** Default UDP. A UDP answer with the truncated flag is asked again over TCP. */
  protocol?: DnsProtocol;
  /** How long the query may take, in milliseconds, answer included. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One record of an answer, its data as text the way zone files write it. */
export interface DnsAnswer {
  name: string;
  type: string;
  ttl: number;
  data: string;
}

export interface DnsResponse {
  /** `NOERROR`, `NXDOMAIN`, `SERVFAIL`, … */
  rcode: string;
  /** The answer section's records of the asked type (CNAME records on the way included). */
  answers: DnsAnswer[];
  authoritative: boolean;
  /** The UDP answer was truncated, so the query went again over TCP. */
  truncated: boolean;
  /** The protocol the answer came over. */
  protocol: DnsProtocol;
  /** Milliseconds from sending the query to reading its answer (over TCP, the connection included). */
  responseTime: number;
}

/** Why a query got no answer: `TIMEOUT` (none in time), `ABORTED`, `NETWORK` (refused, unreachable, closed) or `MALFORMED`. */
export class DnsQueryError extends Error {
  constructor(readonly reason: 'TIMEOUT' | 'ABORTED' | 'NETWORK' | 'MALFORMED', message: string, readonly code?: string) {
    super(message);
    this.name = 'DnsQueryError';
  }
}

/** `1.2.3.4` → `4.3.2.1.in-addr.arpa`; an IPv6 address → its nibbles under `ip6.arpa`; any other name as it is. */
export function reverseName(name: string): string {
  const family = isIP(name);
  if (family === 4) return `${name.split('.').reverse().join('.')}.in-addr.arpa`;
  if (family !== 6) return name;
  const [head = '', tail = ''] = name.includes('::') ? name.split('::') : [name, ''];
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const full = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return `${full.map((g) => g.padStart(4, '0')).join('').split('').reverse().join('.')}.ip6.arpa`;
}

const quote = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
const text = (b: Buffer | string) => (typeof b === 'string' ? b : b.toString('utf8'));

/** A record's data as zone-file text: `10 mail.example.com` for MX, `0 issue "ca.example"` for CAA. */
export function answerText(answer: packet.Answer): string {
  const data = (answer as { data: unknown }).data;
  switch (answer.type) {
    case 'MX': { const d = data as { preference?: number; exchange: string }; return `${d.preference ?? 0} ${d.exchange}`; }
    case 'TXT': return (Array.isArray(data) ? data : [data as Buffer | string]).map(text).join('');
    case 'SOA': {
      const d = data as packet.SoaData;
      return `${d.mname} ${d.rname} ${d.serial ?? 0} ${d.refresh ?? 0} ${d.retry ?? 0} ${d.expire ?? 0} ${d.minimum ?? 0}`;
    }
    case 'SRV': { const d = data as packet.SrvData; return `${d.priority ?? 0} ${d.weight ?? 0} ${d.port} ${d.target}`; }
    case 'CAA': { const d = data as packet.CaaData; return `${d.flags ?? 0} ${d.tag} ${quote(d.value)}`; }
    default: return typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('hex') : JSON.stringify(data);
  }
}

/** Encoded queries by question, their id left to set: a check asks the same question every run. */
const encoded = new Map<string, Buffer>();
const MAX_ENCODED = 10_000;

function encodeQuery(id: number, name: string, type: DnsRecordType): Buffer {
  const key = `${type} ${name}`;
  let template = encoded.get(key);
  if (!template) {
    template = packet.encode({ type: 'query', id: 0, flags: packet.RECURSION_DESIRED, questions: [{ type, name, class: 'IN' }] });
    if (encoded.size >= MAX_ENCODED) encoded.clear();
    encoded.set(key, template);
  }
  const out = Buffer.from(template);
  out.writeUInt16BE(id, 0);
  return out;
}

/** The answer to our question, or null when the packet answers something else (a stray or forged packet). */
/** A decoded packet; dns-packet decodes the response code too, which its types leave out. */
type Decoded = packet.DecodedPacket & { rcode?: string };

function matching(buffer: Buffer, id: number, name: string, type: DnsRecordType): Decoded | null {
  let decoded: Decoded;
  try {
    decoded = packet.decode(buffer);
  } catch {
    return null;
  }
  if (decoded.id !== id || decoded.type !== 'response') return null;
  const q = decoded.questions?.[0];
  // Some servers answer FORMERR, NOTIMP or REFUSED without repeating the question: such an error
  // (no records, the id and the source already checked) is taken as it is.
  if (!q) return decoded.rcode && decoded.rcode !== 'NOERROR' && !decoded.answers?.length ? decoded : null;
  if (q.type !== type || q.name.toLowerCase().replace(/\.$/, '') !== name.toLowerCase().replace(/\.$/, '')) return null;
  return decoded;
}

interface Exchange { decoded: Decoded; protocol: DnsProtocol }

function udpExchange(query: Required<Pick<DnsQuery, 'server' | 'port'>> & DnsQuery, name: string, deadline: number): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    let id = -1;
    let end: () => void = () => {};
    const finish = (err: Error | null, value?: Exchange) => {
      clearTimeout(timer);
      query.signal?.removeEventListener('abort', onAbort);
      end();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = () => finish(new DnsQueryError('ABORTED', 'The query was aborted'));
    const timer = setTimeout(() => finish(new DnsQueryError('TIMEOUT', `No answer from ${query.server}:${query.port} within ${query.timeoutMs} ms`)), Math.max(0, deadline - performance.now()));
    query.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      end = sendUdp((chosen) => encodeQuery((id = chosen), name, query.type), {
      address: query.server,
      port: query.port,
      // Only the server asked may answer (the pool checks its address and port), and only to this question.
      onMessage: (buffer) => {
        const decoded = matching(buffer, id, name, query.type);
        if (decoded) finish(null, { decoded, protocol: 'UDP' });
        return decoded !== null;
      },
      onError: (err) => finish(new DnsQueryError('NETWORK', `Could not reach ${query.server}:${query.port}: ${err.code ?? err.message}`, err.code)),
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      finish(new DnsQueryError('NETWORK', `Could not send to ${query.server}:${query.port}: ${e.code ?? e.message}`, e.code));
    }
  });
}

function tcpExchange(query: Required<Pick<DnsQuery, 'server' | 'port'>> & DnsQuery, name: string, deadline: number): Promise<Exchange> {
  const id = randomInt(0, 0x10000);
  const socket = new Socket();
  return new Promise<Exchange>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const finish = (err: Error | null, value?: Exchange) => {
      clearTimeout(timer);
      query.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = () => finish(new DnsQueryError('ABORTED', 'The query was aborted'));
    const timer = setTimeout(() => finish(new DnsQueryError('TIMEOUT', `No answer from ${query.server}:${query.port} (TCP) within ${query.timeoutMs} ms`)), Math.max(0, deadline - performance.now()));
    query.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(new DnsQueryError('NETWORK', `Could not reach ${query.server}:${query.port} over TCP: ${err.code ?? err.message}`, err.code)));
    socket.on('close', () => finish(new DnsQueryError('NETWORK', `${query.server}:${query.port} closed the TCP connection without an answer`)));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 2) return;
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return;
      const decoded = matching(received.subarray(2, 2 + length), id, name, query.type);
      if (decoded) finish(null, { decoded, protocol: 'TCP' });
      else finish(new DnsQueryError('MALFORMED', `${query.server}:${query.port} answered over TCP with a packet that is not an answer to the query`));
    });
    try {
      socket.connect(query.port, query.server, () => socket.write(packet.streamEncode({
        type: 'query', id, flags: packet.RECURSION_DESIRED, questions: [{ type: query.type, name, class: 'IN' }],
      })));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      finish(new DnsQueryError('NETWORK', `Could not connect to ${query.server}:${query.port}: ${e.code ?? e.message}`, e.code));
    }
  });
}

/**
 * Asks one name server one question and reads its answer, over UDP (again over TCP when the
 * answer is truncated) or TCP. Resolves with any response code; rejects with a DnsQueryError only
 * when no answer came.
 */
export async function queryDns(query: DnsQuery): Promise<DnsResponse> {
  const q = { ...query, port: query.port ?? 53, protocol: query.protocol ?? 'UDP' };
  if (isIP(q.server) === 0) throw new DnsQueryError('NETWORK', `The name server must be an IP address, not ${JSON.stringify(q.server)}`);
  if (!Number.isInteger(q.port) || q.port < 1 || q.port > 65535) throw new DnsQueryError('NETWORK', `The name server's port must be 1..65535, not ${q.port}`);
  if (q.signal?.aborted) throw new DnsQueryError('ABORTED', 'The query was aborted');
  const name = q.type === 'PTR' ? reverseName(q.name) : q.name;
  const started = performance.now();
  const deadline = started + q.timeoutMs;
  let exchange = q.protocol === 'TCP' ? await tcpExchange(q, name, deadline) : await udpExchange(q, name, deadline);
  let truncated = false;
  if (exchange.protocol === 'UDP' && exchange.decoded.flag_tc) {
    truncated = true;
    exchange = await tcpExchange(q, name, deadline);
  }
  const responseTime = Math.round(performance.now() - started);
  const { decoded } = exchange;
  const answers = (decoded.answers ?? [])
    .filter((a) => a.type === q.type || a.type === 'CNAME')
    .map((a) => ({ name: a.name, type: a.type, ttl: ('ttl' in a ? a.ttl : undefined) ?? 0, data: answerText(a) }));
  return { rcode: decoded.rcode ?? 'NOERROR', answers, authoritative: !!decoded.flag_aa, truncated, protocol: exchange.protocol, responseTime };
}
