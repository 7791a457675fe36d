import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** The round trips of the replies, in milliseconds to 0.01. */
export interface LatencyStats {
  min: number;
  avg: number;
  max: number;
  /** Population standard deviation, as ping's `mdev`. */
  stdDev: number;
}

export interface PingReply {
  /** `icmp_seq` of the echo request answered (1 for the first). */
  seq: number;
  /** Round trip in milliseconds, as ping printed it. */
  time: number;
}

/** What one ping run found. */
export interface PingOutcome {
  /** Echo requests asked for. */
  count: number;
  /** Echo requests ping says it sent (the count asked for when ping ended before its summary). */
  sent: number;
  /** Replies counted: one per sequence number, each within the timeout. */
  received: number;
  /** Percent of the `count` echo requests unanswered, to 0.01. */
  packetLoss: number;
  /** Null when no reply came. */
  latency: LatencyStats | null;
  /** The replies counted, in sequence order. */
  replies: PingReply[];
  /** ping's error lines: `From 10.0.0.1 icmp_seq=1 Destination Host Unreachable`, `ping: sendmsg: ...`. */
  errors: string[];
  /** Milliseconds from spawning ping to its end. */
  elapsedMs: number;
}

export interface PingOptions {
  /** An IPv4 or IPv6 address (never a name: the caller resolved it). */
  address: string;
  family: 4 | 6;
  /** Echo requests to send, 1 or more. */
  count: number;
  /** Longest wait for each reply, in milliseconds; a later reply counts as lost. */
  timeoutMs: number;
  /** Milliseconds between echo requests. */
  intervalMs: number;
  /** An interface name or source address for `ping -I`. */
  sourceInterface?: string | null;
  /** The ping to run. Default `'ping'`, looked up on PATH. */
  command?: string;
  signal?: AbortSignal;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const seconds = (ms: number) => String(Math.round(ms) / 1000);

/**
 * Why ICMP checks cannot run on this host at all: `reason` MISSING_COMMAND (no ping to run) or
 * NO_SOCKET (ping runs, but may open neither an unprivileged ICMP socket nor a raw one).
 */
export class IcmpUnavailableError extends Error {
  readonly reason: 'MISSING_COMMAND' | 'NO_SOCKET';
  readonly command: string;
  constructor(reason: 'MISSING_COMMAND' | 'NO_SOCKET', command: string, message: string) {
    super(message);
    this.name = 'IcmpUnavailableError';
    this.reason = reason;
    this.command = command;
  }
}

/** ping ended without pinging (exit 2): `connect: Network is unreachable`, an unknown interface, ... */
export class PingNetworkError extends Error {
  /** ping's own words, the line it wrote to stderr. */
  readonly detail: string;
  constructor(message: string, detail: string) {
    super(message);
    this.name = 'PingNetworkError';
    this.detail = detail;
  }
}

export const missingCommandMessage = (command: string) =>
  `ICMP checks need the system \`ping\` (Debian: apt-get install iputils-ping); \`${command}\` was not found`;

/** The shell words naming the file `setcap` acts on: the command's path, or where PATH finds it. */
const setcapTarget = (command: string) => (command.includes('/') ? command : `$(command -v ${command})`);

export const noSocketMessage = (command: string, detail: string) =>
  `ping could not open an ICMP socket (${detail}): allow unprivileged ICMP sockets with ` +
  `\`sysctl net.ipv4.ping_group_range="0 2147483647"\`, or give ping the raw-socket capability with ` +
  `\`setcap cap_net_raw+ep ${setcapTarget(command)}\``;

/**
 * The arguments of one run of iputils' ping. There is no `-w` deadline: with one, ping goes on
 * sending past `-c` until that many replies came, which hides loss; `-W` ends the wait after the
 * last request, and the caller's own guard kills a ping that overstays.
 */
export function pingArgs(o: Pick<PingOptions, 'address' | 'family' | 'count' | 'timeoutMs' | 'intervalMs' | 'sourceInterface'>): string[] {
  const args = ['-n', '-c', String(o.count), '-i', seconds(o.intervalMs), '-W', seconds(o.timeoutMs), o.family === 6 ? '-6' : '-4'];
  if (o.sourceInterface) args.push('-I', o.sourceInterface);
  args.push(o.address);
  return args;
}

/** min/avg/max and the population standard deviation of round trips; null for none. */
export function latencyStats(times: readonly number[]): LatencyStats | null {
  if (times.length === 0) return null;
  const avg = times.reduce((s, t) => s + t, 0) / times.length;
  const variance = times.reduce((s, t) => s + (t - avg) ** 2, 0) / times.length;
  return { min: round2(Math.min(...times)), avg: round2(avg), max: round2(Math.max(...times)), stdDev: round2(Math.sqrt(variance)) };
}

/** ping's lines on stderr start with its program name (`ping: `, `/usr/bin/ping: `): left out. */
const PROGRAM = /^\S*ping\S*?: /;
const WARNING = /^\S*ping\S*?: Warning:/i;
const withoutProgram = (line: string) => line.replace(PROGRAM, '');

const REPLY = /^\d+ bytes from \S+?:? icmp_seq=(\d+) .*?time[=<]([\d.]+) ms/;
const ERROR_FROM = /^From \S+ icmp_seq=\d+ /;
const SUMMARY = /^(\d+) packets transmitted, (\d+) received/;

/**
 * Reads ping's output (LC_ALL=C, `-n`): reply lines, `From ...` error lines and the summary.
 * A duplicate reply, and a reply later than `timeoutMs`, is not counted; the loss is taken over
 * the `count` asked for, so a ping cut short counts what it never sent as lost.
 */
export function parsePingOutput(stdout: string, stderr: string, count: number, timeoutMs: number): Omit<PingOutcome, 'elapsedMs'> {
  const bySeq = new Map<number, number>();
  const errors: string[] = [];
  let transmitted: number | null = null;
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    const reply = REPLY.exec(line);
    if (reply) {
      const seq = Number(reply[1]);
      const time = Number(reply[2]);
      if (!line.includes('(DUP!)') && !bySeq.has(seq) && time <= timeoutMs && seq >= 1 && seq <= count) bySeq.set(seq, time);
      continue;
    }
    if (ERROR_FROM.test(line)) {
      errors.push(line);
      continue;
    }
    const summary = SUMMARY.exec(line);
    if (summary) transmitted = Number(summary[1]);
  }
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    // Warnings (`source address might be selected on device other than: lo`) do not stop a run.
    if (line !== '' && !WARNING.test(line)) errors.push(withoutProgram(line));
  }
  const replies = [...bySeq].map(([seq, time]) => ({ seq, time })).sort((a, b) => a.seq - b.seq);
  const received = replies.length;
  return {
    count,
    sent: transmitted ?? count,
    received,
    packetLoss: round2(((count - received) / count) * 100),
    latency: latencyStats(replies.map((r) => r.time)),
    replies,
    errors,
  };
}

/** What ping's exit 2 means, from its stderr: no ICMP socket (IcmpUnavailableError), else a PingNetworkError. */
export function pingFailure(stderr: string, command: string): Error {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !WARNING.test(l)).map(withoutProgram);
  const socketLine = lines.find((l) => /socket: (Operation not permitted|Permission denied)/i.test(l));
  if (socketLine) return new IcmpUnavailableError('NO_SOCKET', command, noSocketMessage(command, socketLine));
  const detail = lines.find((l) => !/^socktype:/.test(l)) ?? 'ping ended with exit code 2 and said nothing';
  return new PingNetworkError(`ping could not reach the target: ${detail}`, detail);
}

/** Milliseconds past the expected end of a run before its guard kills ping. */
const GUARD_MARGIN_MS = 2000;

/**
 * Runs iputils' ping once (no shell; env LC_ALL=C and PATH only) and reads its output. Resolves
 * with the outcome whatever the loss; rejects with an IcmpUnavailableError when there is no ping
 * or it may open no ICMP socket, a PingNetworkError when ping gave up before pinging, and the
 * signal's reason when aborted (ping is killed at once).
 */
export function ping(o: PingOptions): Promise<PingOutcome> {
  const command = o.command ?? 'ping';
  const { signal } = o;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const started = performance.now();
    const child = spawn(command, pingArgs(o), {
      env: { LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
    let stdout = '';
    let stderr = '';
    let settled = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));

    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    // ping ends by itself (the last request's wait ends by -W); this only catches one that hangs.
    const guard = setTimeout(kill, (o.count - 1) * o.intervalMs + o.timeoutMs + GUARD_MARGIN_MS);
    // An abort kills ping and rejects once it has exited, so no process outlives the promise
    // (or after a second, should the kernel keep it).
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      kill();
      setTimeout(() => finish(() => reject(signal!.reason)), 1000).unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('exit', () => {
      if (aborted) finish(() => reject(signal!.reason));
    });

    function finish(fn: () => void) {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      signal?.removeEventListener('abort', onAbort);
      fn();
    }

    child.on('error', (err: NodeJS.ErrnoException) => {
      kill();
      finish(() => reject(err.code === 'ENOENT' ? new IcmpUnavailableError('MISSING_COMMAND', command, missingCommandMessage(command)) : err));
    });
    child.on('close', (code) => {
      finish(() => {
        if (aborted) {
          reject(signal!.reason);
          return;
        }
        // Exit 2 is ping's "could not ping"; another failing code without a summary is no ping run
        // either. Exit 1 is a run with no reply, and no code (killed by the guard) a cut-short run.
        if (code === 2 || (code !== null && code > 1 && !/^\d+ packets transmitted/m.test(stdout))) {
          reject(pingFailure(stderr || `ping ended with exit code ${code}`, command));
          return;
        }
        resolve({ ...parsePingOutput(stdout, stderr, o.count, o.timeoutMs), elapsedMs: round2(performance.now() - started) });
      });
    });
  });
}
