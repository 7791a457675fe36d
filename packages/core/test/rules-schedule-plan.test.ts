import { describe, expect, it } from 'vitest';
import { alertTickEntry, certificateTarget, plannedEntries } from '../src/rules/schedule-plan.js';
import { browserCheckFixture, tcpCheckFixture, urlCheckFixture } from '../src/testing/index.js';

const at = new Date('2026-05-01T12:00:00.000Z');
const stored = <T extends object>(c: T) => ({ ...c, id: '8e3c2b1a-0f9e-4d8c-b7a6-5f4e3d2c1b0a', accountId: 'a' }) as never;

describe('schedule plan: certificates', () => {
  it('a browser check with sslCheckDomain watches that domain on 443; a TCP check only when it targets port 443', () => {
    expect(certificateTarget(stored(browserCheckFixture({ sslCheckDomain: 'shop.example.com' })))).toEqual({ host: 'shop.example.com', port: 443 });
    expect(certificateTarget(stored(browserCheckFixture({ sslCheckDomain: null })))).toBeNull();
    expect(certificateTarget(stored(tcpCheckFixture({ request: { ...tcpCheckFixture().request, hostname: 'db.example.com', port: 443 } })))).toEqual({ host: 'db.example.com', port: 443 });
    expect(certificateTarget(stored(tcpCheckFixture({ request: { ...tcpCheckFixture().request, port: 5432 } })))).toBeNull();
  });

  it('a URL check watches its https URL\'s host and port, not an http one', () => {
    const url = (u: string) => stored(urlCheckFixture({ request: { ...urlCheckFixture().request, url: u } }));
    expect(certificateTarget(url('https://shop.example.com/health'))).toEqual({ host: 'shop.example.com', port: 443 });
    expect(certificateTarget(url('https://[2001:db8::1]:8443/'))).toEqual({ host: '2001:db8::1', port: 8443 });
    expect(certificateTarget(url('http://shop.example.com/'))).toBeNull();
  });

  it('a check watching a certificate gets a daily-look entry due at once beside its run entries; an inactive check gets none', () => {
    const check = stored(browserCheckFixture({ sslCheckDomain: 'shop.example.com', locations: ['eu-west-1'] }));
    const entries = plannedEntries('a', check, null, 'us-east-1', at);
    expect(entries.map((e) => [e.kind, e.location])).toEqual([['run', 'eu-west-1'], ['certificate', '']]);
    expect(entries[1]!.dueAt).toBe(at.toISOString());
    expect(plannedEntries('a', stored(browserCheckFixture({ sslCheckDomain: 'shop.example.com', activated: false })), null, 'us-east-1', at)).toEqual([]);
    expect(alertTickEntry('a', 'c1', at)).toEqual({ kind: 'alert-tick', accountId: 'a', checkId: 'c1', location: '', dueAt: '2026-05-01T12:01:00.000Z' });
  });
});
