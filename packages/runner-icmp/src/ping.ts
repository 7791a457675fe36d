import { spawn } from 'node:child_process';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { countedReply, scanPingOutput, unreadable, WARNING, withoutProgram, type PingOutcome } from './ping-output.js';

export { latencyStats, parsePingOutput } from './ping-output.js';
export type { LatencyStats, PingOutcome, PingReply } from './ping-output.js';

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

/** ping ended without pinging (exit 2) because the route to the target goes nowhere: `connect: Network is unreachable`, `No route to host`. */
export class PingNetworkError extends Error {
  /** ping's own words, the line it wrote to stderr. */
  readonly detail: string;
  constructor(message: string, detail: string) {
    super(message);
    this.name = 'PingNetworkError';
    this.detail = detail;
  }
}

/**
 * A run that says nothing about the target, because of this host: `reason` LOCAL (ping refused to
 * start: an unknown interface, a source address not on the host, IPv6 disabled, an option it does
 * not know), UNREADABLE (its output is not iputils') or STUCK (it outlived its deadline and was killed).
 */
export class PingHostError extends Error {
  readonly reason: 'LOCAL' | 'UNREADABLE' | 'STUCK';
  /** ping's own words, or what was wrong with its output. */
  readonly detail: string;
  constructor(reason: 'LOCAL' | 'UNREADABLE' | 'STUCK', message: string, detail: string) {
    super(message);
    this.name = 'PingHostError';
    this.reason = reason;
    this.detail = detail;
  }
}

export const missingCommandMessage = (command: string) =>
  `ICMP checks need the system \`ping\` (Debian: apt-get install iputils-ping); \`${command}\` was not found`;

export const unreadableMessage = (command: string, why: string, said: string | undefined) =>
  `ping's output could not be read (\`${command}\`: ${why}${said ? `; it said "${said}"` : ''}): ` +
  `ICMP checks need iputils' ping, 20200821 or later (Debian: apt-get install iputils-ping)`;

/** The shell words naming the file `setcap` acts on: the command's path, or where PATH finds it. */
const setcapTarget = (command: string) => (command.includes('/') ? command : `$(command -v ${command})`);

export const noSocketMessage = (command: string, detail: string) =>
  `ping could not open an ICMP socket (${detail}): allow unprivileged ICMP sockets with ` +
  `\`sysctl net.ipv4.ping_group_range="0 2147483647"\`, or give ping the raw-socket capability with ` +
  `\`setcap cap_net_raw+ep ${setcapTarget(command)}\``;

/**
 * Milliseconds from ping's start until the last echo request's reply is due: the runner stops
 * ping then (SIGINT, and ping prints its summary), or as soon as every request was answered.
 */
export const pingDeadlineMs = (o: Pick<PingOptions, 'count' | 'timeoutMs' | 'intervalMs'>) => (o.count - 1) * o.intervalMs + o.timeoutMs;

/**
 * The arguments of one run of iputils' ping. Its own end does not serve: with `-c <count>` it
 * waits after the last request only max(2 × the slowest reply, interval); with a `-w` deadline as
 * well, it counts replies to the requests it sends past the count and ends at the first ICMP
 * error. So `-c` is only a backstop, past the deadline (should Vigil die, ping still ends), and the
 * runner ends ping itself. `--` ends the options before the address.
 */
export function pingArgs(o: Pick<PingOptions, 'address' | 'family' | 'count' | 'timeoutMs' | 'intervalMs' | 'sourceInterface'>): string[] {
  const backstop = o.count + Math.ceil(o.timeoutMs / o.intervalMs) + 1;
  const args = ['-n', '-c', String(backstop), '-i', seconds(o.intervalMs), '-W', seconds(o.timeoutMs), o.family === 6 ? '-6' : '-4'];
  if (o.sourceInterface) args.push('-I', o.sourceInterface);
  args.push('--', o.address);
  return args;
}

/** ping's words when the route to the target goes nowhere: a failure of the target, not of this host. */
const NO_ROUTE = /(Network is unreachable|No route to host)/i;

/** What ping's exit 2 means, from its stderr: no ICMP socket (IcmpUnavailableError), no route (PingNetworkError), else a PingHostError. */
export function pingFailure(stderr: string, command: string): Error {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !WARNING.test(l)).map(withoutProgram);
  const socketLine = lines.find((l) => /socket: (Operation not permitted|Permission denied)/i.test(l));
  if (socketLine) return new IcmpUnavailableError('NO_SOCKET', command, noSocketMessage(command, socketLine));
  const routeLine = lines.find((l) => NO_ROUTE.test(l));
  if (routeLine) return new PingNetworkError(`ping could not reach the target: ${routeLine}`, routeLine);
  const detail = lines.find((l) => !/^socktype:/.test(l)) ?? 'ping ended with exit code 2 and said nothing';
  return new PingHostError('LOCAL', `ping could not ping from this host: ${detail}`, detail);
}

/** Milliseconds past a run's deadline before its guard kills a ping that did not end when told to. */
export const GUARD_MARGIN_MS = 2000;

/**
 * Runs iputils' ping once (no shell; env LC_ALL=C and PATH only) and reads its output. ping is
 * stopped (SIGINT) once every echo request was answered, or at the deadline. Resolves with the
 * outcome whatever the loss; rejects with an IcmpUnavailableError when there is no ping or it may
 * open no ICMP socket, a PingNetworkError when the route to the target goes nowhere, a
 * PingHostError when ping refused to start, its output was not iputils' or it would not end, a
 * TypeError when `address` is not an address of `family`, and the signal's reason when aborted
 * (ping is killed at once).
 */
export function ping(o: PingOptions): Promise<PingOutcome> {
  const command = o.command ?? 'ping';
  const { signal } = o;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (isIP(o.address) !== o.family) {
      reject(new TypeError(`ping: ${JSON.stringify(o.address)} is not an IPv${o.family} address`));
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
    let interrupted = false;
    let stuck = false;
    let scanned = 0;
    const answered = new Set<number>();
    const running = () => child.exitCode === null && child.signalCode === null;
    // SIGINT makes ping print its summary and end.
    const stop = () => {
      if (running() && !interrupted) {
        interrupted = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const end = stdout.lastIndexOf('\n');
      if (end < scanned) return;
      for (const line of stdout.slice(scanned, end).split('\n')) {
        const reply = countedReply(line, o.count, o.timeoutMs);
        if (reply) answered.add(reply.seq);
      }
      scanned = end + 1;
      if (answered.size === o.count) stop();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));

    const kill = () => {
      if (running()) child.kill('SIGKILL');
    };
    const deadlineMs = pingDeadlineMs(o);
    const deadline = setTimeout(stop, deadlineMs);
    // Only a ping that ignores SIGINT meets this guard.
    const guard = setTimeout(() => {
      stuck = running();
      kill();
    }, deadlineMs + GUARD_MARGIN_MS);
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
      clearTimeout(deadline);
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
        if (stuck) {
          const detail = `ping did not end when told to at its deadline of ${deadlineMs} ms, and was killed ${GUARD_MARGIN_MS} ms later`;
          reject(new PingHostError('STUCK', `${detail}: ICMP checks need iputils' ping (Debian: apt-get install iputils-ping)`, detail));
          return;
        }
        // Exit 2 is ping's "could not ping".
        if (code === 2) {
          reject(pingFailure(stderr || 'ping ended with exit code 2 and said nothing', command));
          return;
        }
        const read = scanPingOutput(stdout, stderr, o.count, o.timeoutMs);
        const why = unreadable(read, code, interrupted);
        if (why) {
          const said = [...stderr.split('\n'), ...stdout.split('\n')].map((l) => l.trim()).find((l) => l !== '' && !WARNING.test(l));
          reject(new PingHostError('UNREADABLE', unreadableMessage(command, why, said && withoutProgram(said)), why));
          return;
        }
        resolve({ ...read.outcome, elapsedMs: round2(performance.now() - started) });
      });
    });
  });
}
