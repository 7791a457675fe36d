import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { icmpSupport, unprivilegedIcmpSockets } from '../src/index.js';
import { PING, withPing } from './support/ping-available.js';
import { pingWithoutSocket } from './support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'vigil-icmp-range-'));
const noSocket = pingWithoutSocket();
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (noSocket.command) noSocket.cleanup();
});

function rangeFile(text: string): string {
  const file = join(dir, `range-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, text);
  return file;
}

describe('unprivilegedIcmpSockets', () => {
  it('reads whether net.ipv4.ping_group_range admits one of this process\'s groups', async () => {
    const gid = process.getegid!();
    expect(await unprivilegedIcmpSockets(rangeFile('0\t2147483647\n'))).toBe(true);
    expect(await unprivilegedIcmpSockets(rangeFile(`${gid}\t${gid}\n`))).toBe(true);
    // The kernel's default: no group at all.
    expect(await unprivilegedIcmpSockets(rangeFile('1\t0\n'))).toBe(false);
    expect(await unprivilegedIcmpSockets(join(dir, 'absent'))).toBe(false);
  });
});

describe('icmpSupport', () => {
  it.skipIf(!PING.ok)(withPing('finds the system ping, its iputils version, and that it may open an ICMP socket'), async () => {
    const support = await icmpSupport();
    const said = execFileSync('ping', ['-V'], { encoding: 'utf8' });
    expect(support).toEqual({ ok: true, command: 'ping', version: /iputils (\S+)/.exec(said)![1], unprivilegedSockets: await unprivilegedIcmpSockets() });
  });

  it('says what is missing when there is no ping, or it is not iputils\' ping', async () => {
    expect(await icmpSupport({ command: '/nonexistent/ping' })).toEqual({
      ok: false, problem: 'ICMP checks need the system `ping` (Debian: apt-get install iputils-ping); `/nonexistent/ping` was not found',
    });
    const echo = await icmpSupport({ command: '/bin/echo' });
    expect(echo).toEqual({ ok: false, problem: 'ICMP checks need iputils\' ping (Debian: apt-get install iputils-ping); `/bin/echo -V` said "-V"' });
  });

  it('refuses iputils older than 20200821, reading either form of `ping -V`', async () => {
    const said = (text: string) => {
      const file = join(dir, `ping-v-${Math.random().toString(36).slice(2)}`);
      writeFileSync(file, `#!/bin/sh\necho '${text}'\n`, { mode: 0o755 });
      return file;
    };
    const old = said('ping utility, iputils-s20180629');
    expect(await icmpSupport({ command: old, probe: false })).toEqual({
      ok: false,
      problem: `ICMP checks need iputils' ping 20200821 or later (fractional -W, intervals under 200 ms); \`${old} -V\` said "ping utility, iputils-s20180629"`,
    });
    expect(await icmpSupport({ command: said('ping utility, iputils-s20200821'), probe: false })).toMatchObject({ ok: true, version: '20200821' });
    expect(await icmpSupport({ command: said('ping from iputils 20221126'), probe: false })).toMatchObject({ ok: true, version: '20221126' });
    expect(await icmpSupport({ command: said('ping from iputils 20190709'), probe: false })).toMatchObject({ ok: false });
  });

  it.skipIf(!PING.ok || noSocket.command === null)(withPing(`fails early when ping may open no ICMP socket${noSocket.command === null ? ` (not here: ${noSocket.reason})` : ''}`), async () => {
    const support = await icmpSupport({ command: noSocket.command! });
    expect(support.ok).toBe(false);
    expect(support.ok === false && support.problem).toMatch(/^ping could not open an ICMP socket \(socket: .+\): allow unprivileged ICMP sockets/);
    // Without the probe only the version is looked at.
    expect(await icmpSupport({ command: noSocket.command!, probe: false })).toMatchObject({ ok: true });
  });
});
