import { execFileSync } from 'node:child_process';

function availability(): { ok: true; reason: null } | { ok: false; reason: string } {
  let version: string;
  try {
    version = execFileSync('ping', ['-V'], { encoding: 'utf8', env: { LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  } catch {
    return { ok: false, reason: 'there is no `ping` on PATH' };
  }
  if (!/iputils/i.test(version)) return { ok: false, reason: `\`ping -V\` is not iputils' (${version.trim().split('\n')[0]})` };
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

/** A test or suite name, with why it is skipped where ping does not work. */
export const withPing = (name: string) => (PING.ok ? name : `${name} (skipped: ${PING.reason})`);
