import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Executables standing in for ping, for what the system's ping cannot show over loopback: loss
 * short of 100%, a late or duplicated reply, output of another ping. Loopback answers every echo
 * request at once, and delaying or dropping some needs root firewall or traffic-control changes.
 */
const dir = mkdtempSync(join(tmpdir(), 'vigil-icmp-stub-'));
let made = 0;
export const removeStubs = () => rmSync(dir, { recursive: true, force: true });

export interface SimulatedPing {
  /** Round trip of the reply to each echo request (index 0: icmp_seq=1), null for none. */
  rtts: (number | null)[];
  /** Round trip of the replies to requests past `rtts`; null (the default) for none. */
  rest?: number | null;
  /** Sequence numbers answered twice (the second marked `(DUP!)`). */
  duplicates?: number[];
  /** Ignores SIGINT and never ends by itself: a ping that hangs. */
  hangs?: boolean;
}

/**
 * A Node script that keeps iputils 20221126's rules and output (LC_ALL=C, -n): it sends at `-i`
 * until `-c` requests were sent, then ends max(2 × the slowest reply, interval) after the last (or
 * `-W` when none was answered), or at the `-w` deadline, or once `-c` replies came with `-w`; it
 * prints its summary and ends on SIGINT; exit 0 with a reply, else 1.
 */
export function simulatedPing(s: SimulatedPing): string {
  const file = join(dir, `ping-sim-${++made}`);
  writeFileSync(file, `#!${process.execPath}
const s = ${JSON.stringify(s)};
const args = process.argv.slice(2);
const opt = (f) => { const i = args.indexOf(f); return i < 0 ? null : Number(args[i + 1]); };
const count = opt('-c'), interval = (opt('-i') ?? 1) * 1000, linger = (opt('-W') ?? 10) * 1000, deadline = opt('-w');
const address = args[args.length - 1];
const fmt = (t) => t >= 100 ? t.toFixed(0) : t >= 10 ? t.toFixed(1) : t >= 1 ? t.toFixed(2) : t.toFixed(3);
const started = Date.now();
const times = [];
let sent = 0, tmax = 0, ended = false;
const line = (text) => process.stdout.write(text + '\\n');
line('PING ' + address + ' (' + address + ') 56(84) bytes of data.');
function end() {
  if (ended) return;
  ended = true;
  const loss = sent ? Math.round(((sent - times.length) / sent) * 100) : 0;
  line('');
  line('--- ' + address + ' ping statistics ---');
  line(sent + ' packets transmitted, ' + times.length + ' received, ' + loss + '% packet loss, time ' + (Date.now() - started) + 'ms');
  if (times.length) {
    const avg = times.reduce((a, b) => a + b, 0) / times.length;
    const mdev = Math.sqrt(times.reduce((a, b) => a + (b - avg) ** 2, 0) / times.length);
    line('rtt min/avg/max/mdev = ' + [Math.min(...times), avg, Math.max(...times), mdev].map((n) => n.toFixed(3)).join('/') + ' ms');
  }
  process.exit(times.length === 0 || (deadline && times.length < count) ? 1 : 0);
}
if (s.hangs) {
  process.on('SIGINT', () => {});
  setTimeout(() => {}, 600000);
} else {
  process.on('SIGINT', end);
}
function send() {
  if (ended || s.hangs) return;
  const seq = ++sent;
  const rtt = seq <= s.rtts.length ? s.rtts[seq - 1] : (s.rest ?? null);
  if (rtt !== null) {
    setTimeout(() => {
      if (ended) return;
      times.push(rtt);
      tmax = Math.max(tmax, rtt);
      line('64 bytes from ' + address + ': icmp_seq=' + seq + ' ttl=64 time=' + fmt(rtt) + ' ms');
      if ((s.duplicates ?? []).includes(seq)) line('64 bytes from ' + address + ': icmp_seq=' + seq + ' ttl=64 time=' + fmt(rtt + 0.5) + ' ms (DUP!)');
      if (deadline && count && times.length >= count) end();
    }, rtt);
  }
  if (count && sent >= count && !deadline) {
    setTimeout(end, times.length ? Math.max(2 * tmax, interval) : linger);
    return;
  }
  setTimeout(send, interval);
}
if (deadline) setTimeout(end, deadline * 1000);
send();
`, { mode: 0o755 });
  return file;
}

/** A shell script that prints `stdout` and `stderr` as recorded and exits with `code`. */
export function recordedPing(stdout: string, code: number, stderr = ''): string {
  const file = join(dir, `ping-rec-${++made}`);
  const out = join(dir, `ping-rec-${made}.out`);
  const err = join(dir, `ping-rec-${made}.err`);
  writeFileSync(out, stdout);
  writeFileSync(err, stderr);
  writeFileSync(file, `#!/bin/sh\ncat '${out}'\ncat '${err}' >&2\nexit ${code}\n`, { mode: 0o755 });
  return file;
}
