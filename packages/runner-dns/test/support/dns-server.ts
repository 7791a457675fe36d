import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

/** A record the server answers with: dns-packet's answer without its name (the question's). */
export type ZoneRecord = { type: string; ttl?: number; data: unknown; name?: string };

export interface TestDnsServerOptions {
  host?: string;
  /** name (lower case, no trailing dot) → records. */
  zone: Record<string, ZoneRecord[]>;
  /** Names answered with this response code and no records. */
  rcodes?: Record<string, number>;
  /** Names answered with this response code and no question section, as some servers refuse. */
  bareRcodes?: Record<string, number>;
  /** Names whose UDP answer is truncated (TC set, no records); TCP answers them in full. */
  truncatedOverUdp?: string[];
  /** Names never answered. */
  silent?: string[];
  /** Names whose answer is preceded by a forged one (another id) with a different address. */
  forged?: string[];
  /** Names answered over UDP from another port of this host (a forgery with the right id), and not from the asked one. */
  otherPort?: string[];
}

export interface TestDnsServer {
  host: string;
  /** The same port over UDP and TCP. */
  port: number;
  /** Questions received, in order: `${protocol} ${type} ${name}`. */
  received: string[];
  close(): Promise<void>;
}

const RCODE_NXDOMAIN = 3;

/** A small authoritative name server on 127.0.0.1 (or ::1) over UDP and TCP, for tests. */
export async function startDnsServer(options: TestDnsServerOptions): Promise<TestDnsServer> {
  // UDP takes a free port and TCP the same number: on a busy machine an outgoing connection may
  // hold that number for TCP, so a few tries.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
}

async function startOnce(options: TestDnsServerOptions): Promise<TestDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const received: string[] = [];

  const answer = (query: packet.DecodedPacket, protocol: 'UDP' | 'TCP'): Buffer[] => {
    const question = query.questions![0]!;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    received.push(`${protocol} ${question.type} ${name}`);
    if (options.silent?.includes(name)) return [];
    const base = { type: 'response' as const, id: query.id, questions: query.questions };
    const bare = options.bareRcodes?.[name];
    if (bare !== undefined) return [packet.encode({ type: 'response', id: query.id, flags: bare })];
    const rcode = options.rcodes?.[name];
    if (rcode !== undefined) return [packet.encode({ ...base, flags: packet.AUTHORITATIVE_ANSWER | rcode })];
    const records = options.zone[name];
    if (!records) return [packet.encode({ ...base, flags: packet.AUTHORITATIVE_ANSWER | RCODE_NXDOMAIN })];
    if (protocol === 'UDP' && options.truncatedOverUdp?.includes(name)) {
      return [packet.encode({ ...base, flags: packet.AUTHORITATIVE_ANSWER | packet.TRUNCATED_RESPONSE })];
    }
    const answers = records
      .filter((r) => r.type === question.type || r.type === 'CNAME')
      .map((r) => ({ name: r.name ?? question.name, ttl: r.ttl ?? 300, class: 'IN', type: r.type, data: r.data })) as packet.Answer[];
    const real = packet.encode({ ...base, flags: packet.AUTHORITATIVE_ANSWER, answers });
    if (!options.forged?.includes(name)) return [real];
    const forged = packet.encode({
      ...base, id: ((query.id ?? 0) + 1) % 0x10000, flags: packet.AUTHORITATIVE_ANSWER,
      answers: [{ name: question.name, ttl: 300, class: 'IN', type: 'A', data: '6.6.6.6' }],
    });
    return [forged, real];
  };

  const udp: UdpSocket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const stranger: UdpSocket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (msg, from) => {
    const query = packet.decode(msg);
    const fromOther = options.otherPort?.includes(query.questions![0]!.name.toLowerCase());
    for (const out of answer(query, 'UDP')) (fromOther ? stranger : udp).send(out, from.port, from.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, host, resolve));
  await new Promise<void>((resolve) => stranger.bind(0, host, resolve));
  const port = udp.address().port;

  const sockets = new Set<Socket>();
  const tcp: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const query = packet.decode(buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        for (const out of answer(query, 'TCP')) {
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          socket.write(framed);
        }
      }
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, host, () => resolve());
    });
  } catch (err) {
    udp.close();
    stranger.close();
    throw err;
  }
  if ((tcp.address() as AddressInfo).port !== port) throw new Error('TCP port differs from UDP port');

  return {
    host,
    port,
    received,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => stranger.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
