import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIP } from 'node:net';

/** Records of one name, by type. MX as [priority, exchange]; TXT as the record's strings. */
export interface ZoneRecords {
  A?: string[];
  AAAA?: string[];
  CNAME?: string[];
  NS?: string[];
  MX?: [number, string][];
  TXT?: string[][];
}

export interface ZoneOptions {
  /** Names that get no answer at all (a server that never replies). */
  silent?: string[];
  /** Names answered with SERVFAIL. */
  failing?: string[];
  /** Milliseconds to wait before each answer. */
  delayMs?: number;
}

export interface DnsServer {
  /** `127.0.0.1:<port>`, as `setServers` takes it. */
  address: string;
  /** Every question asked, as `name TYPE`. */
  questions: string[];
  close(): Promise<void>;
}

const TYPES: Record<number, keyof ZoneRecords> = { 1: 'A', 28: 'AAAA', 5: 'CNAME', 2: 'NS', 15: 'MX', 16: 'TXT' };
const CODES = Object.fromEntries(Object.entries(TYPES).map(([code, type]) => [type, Number(code)])) as Record<keyof ZoneRecords, number>;
const NOERROR = 0;
const SERVFAIL = 2;
const NXDOMAIN = 3;

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])]);
}

function encodeIp(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const parts = (s: string) => (s ? s.split(':') : []);
  const groups = [...parts(head), ...Array(8 - parts(head).length - parts(tail).length).fill('0'), ...parts(tail)];
  return Buffer.from(groups.flatMap((g) => { const n = parseInt(g, 16); return [n >> 8, n & 0xff]; }));
}

function rdata(type: keyof ZoneRecords, value: unknown): Buffer {
  switch (type) {
    case 'A':
    case 'AAAA': return encodeIp(value as string);
    case 'CNAME':
    case 'NS': return encodeName(value as string);
    case 'MX': {
      const [priority, exchange] = value as [number, string];
      return Buffer.concat([Buffer.from([priority >> 8, priority & 0xff]), encodeName(exchange)]);
    }
    case 'TXT': return Buffer.concat((value as string[]).map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])));
  }
}

/** The question of a query: its name, type, and where the question section ends. */
function readQuestion(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at]! > 0) {
    const len = msg[at]!;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += len + 1;
  }
  at += 1;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at), end: at + 4 };
}

function answer(query: Buffer, zone: Record<string, ZoneRecords>, options: ZoneOptions): { reply: Buffer | null; question: string } {
  const { name, type, end } = readQuestion(query);
  const typeName = TYPES[type];
  const question = `${name} ${typeName ?? type}`;
  if (options.silent?.includes(name)) return { reply: null, question };
  const records = zone[name];
  const rcode = options.failing?.includes(name) ? SERVFAIL : records ? NOERROR : NXDOMAIN;
  const values: unknown[] = rcode === NOERROR && typeName ? (records?.[typeName] ?? []) : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the query's id
  // QR, the query's RD, RA, and the response code.
  header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(values.length, 6);
  const answers = values.map((value) => {
    const data = rdata(typeName!, value);
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    fixed.writeUInt16BE(CODES[typeName!], 2);
    fixed.writeUInt16BE(1, 4); // class IN
    fixed.writeUInt32BE(60, 6); // TTL
    fixed.writeUInt16BE(data.length, 10);
    return Buffer.concat([fixed, data]);
  });
  return { reply: Buffer.concat([header, query.subarray(12, end), ...answers]), question };
}

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP) that answers from `zone`, so the runner's
 * tests ask a real name server and no query leaves the machine.
 */
export async function startDnsServer(zone: Record<string, ZoneRecords>, options: ZoneOptions = {}): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const questions: string[] = [];
  const lowered = Object.fromEntries(Object.entries(zone).map(([k, v]) => [k.toLowerCase(), v]));
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    const { reply, question } = answer(msg, lowered, options);
    questions.push(question);
    if (!reply) return;
    const send = () => socket.send(reply, from.port, from.address);
    if (options.delayMs) setTimeout(send, options.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
