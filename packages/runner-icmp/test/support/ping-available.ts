import { execFileSync } from 'node:child_process';

function availability(): { ok: true; reason: null } | { ok: false; reason: string } {
  let version: string;
  try {
    version = execFileSync('ping', ['-V'], { encoding: 'utf8', env: { LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  } catch {
    return { ok: false, reason: 'there is no `ping` on PATH' };
  }
  if (!/iputils/i.test(version)) return { ok: false, reason: `\`ping -V\` is not iputils' (${version.trim().split('\n')[0]})` };
  const release = /iputils[- ]?s?(\d{8})/i.exec(version)?.[1];
  if (!release || release < '20200821') return { ok: false, reason: `\`ping -V\` is older than iputils 20200821, which the runner needs (${version.trim().split('\n')[0]})` };
  try {
    execFileSync('ping', ['-n', '-c', '1', '-W', '1', '127.0.0.1'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: '`ping 127.0.0.1` does not work here (no ICMP socket?)' };
  }
  return { ok: true, reason: null };
}

/**
 * The tests that run the system's ping run where iputils' ping works; CI sets VIGIL_REQUIRE_PING
 * so that a missing or unusable ping fails rather than skips them.
 */
export const PING = availability();
if (!PING.ok && process.env.VIGIL_REQUIRE_PING) throw new Error(`VIGIL_REQUIRE_PING is set but ${PING.reason}`);

function ipv6Loopback(): { ok: true; reason: null } | { ok: false; reason: string } {
  if (!PING.ok) return PING;
  try {
    execFileSync('ping', ['-n', '-6', '-c', '1', '-W', '1', '::1'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: '`ping -6 ::1` does not work here (IPv6 disabled, or no ::1 on lo?)' };
  }
  return { ok: true, reason: null };
}

/**
 * The tests that ping ::1 (or need IPv6 at all) run where it answers, and under VIGIL_REQUIRE_PING
 * always (CI has IPv6 loopback), so that a broken ::1 fails them there rather than skips them.
 */
export const PING6 = process.env.VIGIL_REQUIRE_PING ? PING : ipv6Loopback();

/** A test or suite name, with why it is skipped where ping does not work. */
export const withPing = (name: string) => (PING.ok ? name : `${name} (skipped: ${PING.reason})`);
export const withPing6 = (name: string) => (PING6.ok ? name : `${name} (skipped: ${PING6.reason})`);
