import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { IcmpUnavailableError, missingCommandMessage, ping, PingHostError } from './ping.js';

export type IcmpSupport =
  | {
    ok: true;
    /** The ping that runs the checks. */
    command: string;
    /** iputils' version, as `ping -V` says it (`20221126`). */
    version: string;
    /**
     * Whether the kernel lets this process open unprivileged ICMP datagram sockets
     * (`net.ipv4.ping_group_range` holds one of its groups). Without them ping needs its raw-socket
     * capability, which it has when the probe passed.
     */
    unprivilegedSockets: boolean;
  }
  | { ok: false; problem: string };

export interface IcmpSupportOptions {
  /** The ping to look at. Default `'ping'`, looked up on PATH. */
  command?: string;
  /** Pings 127.0.0.1 once to see that ping may open an ICMP socket. Default true. */
  probe?: boolean;
}

/**
 * The oldest iputils whose ping the runner works with: from s20200821, `-W` takes fractions of a
 * second and users other than root may send at intervals under 200 ms (down to 2 ms).
 */
export const MIN_IPUTILS_VERSION = '20200821';

/** iputils' release date in `ping -V`: `ping from iputils 20221126`, `ping utility, iputils-s20180629`. */
export const iputilsVersion = (said: string): string | null => /iputils[- ]?s?(\d{8})\b/i.exec(said)?.[1] ?? null;

const ENV = () => ({ LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' });

function versionOf(command: string): Promise<{ text: string } | { missing: true }> {
  return new Promise((resolve) => {
    execFile(command, ['-V'], { env: ENV(), timeout: 5000 }, (err, stdout, stderr) => {
      const text = `${stdout}\n${stderr}`.trim();
      if (err?.code === 'ENOENT') resolve({ missing: true });
      else resolve({ text });
    });
  });
}

/** Whether `net.ipv4.ping_group_range` admits one of this process's groups (false where it cannot be read). */
export async function unprivilegedIcmpSockets(rangeFile = '/proc/sys/net/ipv4/ping_group_range'): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(rangeFile, 'utf8');
  } catch {
    return false;
  }
  const [low, high] = text.trim().split(/\s+/).map(Number);
  if (low === undefined || high === undefined || !Number.isFinite(low) || !Number.isFinite(high)) return false;
  const groups = new Set([process.getegid?.(), process.getgid?.(), ...(process.getgroups?.() ?? [])].filter((g): g is number => g !== undefined));
  return [...groups].some((g) => g >= low && g <= high);
}

/**
 * Whether this host can run ICMP checks: iputils' ping is there and may open an ICMP socket. A
 * host calls it at start-up to fail early rather than at each check's run.
 */
export async function icmpSupport(options: IcmpSupportOptions = {}): Promise<IcmpSupport> {
  const command = options.command ?? 'ping';
  const answered = await versionOf(command);
  if ('missing' in answered) return { ok: false, problem: missingCommandMessage(command) };
  const version = iputilsVersion(answered.text);
  const said = answered.text.split('\n')[0] || 'nothing';
  if (!version) {
    return { ok: false, problem: `ICMP checks need iputils' ping (Debian: apt-get install iputils-ping); \`${command} -V\` said "${said}"` };
  }
  if (version < MIN_IPUTILS_VERSION) {
    return {
      ok: false,
      problem: `ICMP checks need iputils' ping ${MIN_IPUTILS_VERSION} or later (fractional -W, intervals under 200 ms); \`${command} -V\` said "${said}"`,
    };
  }
  if (options.probe !== false) {
    try {
      await ping({ address: '127.0.0.1', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200, command });
    } catch (err) {
      // Only a ping that cannot ping at all says ICMP checks cannot run; a host without loopback can.
      if (err instanceof IcmpUnavailableError) return { ok: false, problem: err.message };
      // Nor can a ping whose output cannot be read, or that does not end when told to.
      if (err instanceof PingHostError && err.reason !== 'LOCAL') return { ok: false, problem: err.message };
    }
  }
  return { ok: true, command, version, unprivilegedSockets: await unprivilegedIcmpSockets() };
}
