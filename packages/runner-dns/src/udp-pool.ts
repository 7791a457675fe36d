import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';

/**
 * UDP sockets that queries share, one of each family at a time, as a resolver keeps its own: a
 * query neither binds nor closes a socket. An answer goes to the query in flight with its id,
 * and only when it comes from the address and port that query asked. A socket serves at most
 * ROTATE_AFTER queries, so that the source port changes as often as that (an attacker forging
 * answers must guess it with the id); it closes once its last query is answered, and an idle one
 * keeps no process alive.
 */
const ROTATE_AFTER = 1_000;

export interface Pending {
  address: string;
  port: number;
  /** An answer to this id from the asked address: true when the query took it. */
  onMessage(buffer: Buffer): boolean;
  onError(err: NodeJS.ErrnoException): void;
}

interface Pooled {
  socket: Socket;
  inFlight: Map<number, Pending>;
  used: number;
  retired: boolean;
  closed: boolean;
}

/** 2001:db8::1 and 2001:0db8:0:0::1 are one address, and so are ::ffff:7f00:1 and ::ffff:127.0.0.1. */
function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  if (isIP(a) !== 6 || isIP(b) !== 6) return false;
  const expand = (text: string) => {
    // A dotted IPv4 tail is two groups.
    const s = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, w, x, y, z) => `${((+w << 8) | +x).toString(16)}:${((+y << 8) | +z).toString(16)}`);
    const [head = '', tail = ''] = s.includes('::') ? s.split('::') : [s, ''];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    return [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t].map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':');
  };
  return expand(a) === expand(b);
}

const current: Partial<Record<'udp4' | 'udp6', Pooled>> = {};

function close(p: Pooled): void {
  if (p.closed) return;
  p.closed = true;
  p.socket.close();
}

function closeIfDone(p: Pooled): void {
  if (p.retired && p.inFlight.size === 0) close(p);
}

function open(type: 'udp4' | 'udp6'): Pooled {
  const socket = createSocket(type);
  const pooled: Pooled = { socket, inFlight: new Map(), used: 0, retired: false, closed: false };
  socket.on('message', (buffer, from) => {
    if (buffer.length < 2) return;
    const pending = pooled.inFlight.get(buffer.readUInt16BE(0));
    if (!pending || from.port !== pending.port || !sameAddress(from.address, pending.address)) return;
    pending.onMessage(buffer);
  });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    // The socket is unusable: its queries fail, and the next query opens another.
    pooled.retired = true;
    if (current[type] === pooled) delete current[type];
    const failed = [...pooled.inFlight.values()];
    pooled.inFlight.clear();
    close(pooled);
    for (const pending of failed) pending.onError(err);
  });
  socket.unref();
  return pooled;
}

/**
 * Sends one query from a shared socket. `pending` hears the answers to its id from its address;
 * the returned function ends the query (answered, timed out or aborted) and frees its id.
 */
export function sendUdp(packetOf: (id: number) => Buffer, pending: Pending): () => void {
  const type = isIP(pending.address) === 6 ? 'udp6' : 'udp4';
  let pooled = current[type];
  if (!pooled || pooled.retired || pooled.used >= ROTATE_AFTER) {
    if (pooled) {
      pooled.retired = true;
      closeIfDone(pooled);
    }
    pooled = current[type] = open(type);
  }
  let id = randomInt(0, 0x10000);
  while (pooled.inFlight.has(id)) id = randomInt(0, 0x10000);
  const own = pooled;
  const packet = packetOf(id);
  own.inFlight.set(id, pending);
  own.used++;
  try {
    own.socket.send(packet, pending.port, pending.address, (err) => {
      if (err && own.inFlight.get(id) === pending) pending.onError(err as NodeJS.ErrnoException);
    });
  } catch (err) {
    // A port or address send refuses at once (port 0, say): the query never went out.
    own.inFlight.delete(id);
    throw err;
  }
  return () => {
    if (own.inFlight.get(id) === pending) own.inFlight.delete(id);
    closeIfDone(own);
  };
}
