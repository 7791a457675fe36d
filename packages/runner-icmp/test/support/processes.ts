import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The pids of running processes whose command line holds `needle` (read from /proc). */
export function processesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return pids;
}

const hasSetpriv = () => {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

function groupsAdmitted(): boolean {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ping_group_range', 'utf8').trim().split(/\s+/).map(Number);
  const groups = [process.getegid!(), ...process.getgroups!()];
  return groups.some((g) => g >= low! && g <= high!);
}

/**
 * A real iputils ping that cannot open an ICMP socket: a copy of the system's ping (a copy loses
 * its file capability), started by a wrapper script that, for root, drops CAP_NET_RAW from the
 * bounding set first. `command` is null (with the reason) where this host cannot make one: the
 * kernel gives this process unprivileged ICMP sockets, or root has no setpriv to drop the capability.
 */
export function pingWithoutSocket(): { command: string; dir: string; cleanup: () => void } | { command: null; reason: string } {
  const system = ['/usr/bin/ping', '/bin/ping'].find((p) => existsSync(p));
  if (!system) return { command: null, reason: 'no /usr/bin/ping to copy' };
  if (groupsAdmitted()) return { command: null, reason: 'net.ipv4.ping_group_range admits this process, so any ping opens an ICMP socket' };
  const root = process.getuid!() === 0;
  if (root && !hasSetpriv()) return { command: null, reason: 'running as root without setpriv to drop CAP_NET_RAW' };
  const dir = mkdtempSync(join(tmpdir(), 'vigil-icmp-'));
  chmodSync(dir, 0o755);
  const copy = join(dir, 'ping-copy');
  copyFileSync(system, copy);
  chmodSync(copy, 0o755);
  const command = join(dir, 'ping');
  const exec = root ? `exec setpriv --bounding-set -net_raw --inh-caps -net_raw "${copy}" "$@"` : `exec "${copy}" "$@"`;
  writeFileSync(command, `#!/bin/sh\n${exec}\n`, { mode: 0o755 });
  return { command, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
