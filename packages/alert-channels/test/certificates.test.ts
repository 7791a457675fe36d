import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { registerAlertChannels, tlsCertificateProbe } from '@vigil/alert-channels';
import { Receiver } from './support/receiver.js';
import { freshStorage, STORES } from './support/stores.js';

/** A TLS server on 127.0.0.1 whose self-signed certificate is valid for `days` more days. */
async function tlsServer(cn: string, days: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', String(days), '-subj', `/CN=${cn}`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return server;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const portOf = (s: Server) => (s.address() as AddressInfo).port;

const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

let soon: Server;
let later: Server;
beforeAll(async () => {
  soon = await tlsServer('shop.example.com', 5);
  later = await tlsServer('www.example.com', 60);
});
afterAll(() => {
  soon.close();
  later.close();
});

describe('certificate expiry', () => {
  it('the TLS probe reads when a certificate expires, whoever signed it', async () => {
    const probe = tlsCertificateProbe({ target: () => ({ host: '127.0.0.1', port: portOf(soon) }) });
    const at = await probe.expiresAt('shop.example.com', 443, new AbortController().signal);
    const days = (at.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(4.9);
    expect(days).toBeLessThanOrEqual(5);
    const closed = tlsCertificateProbe({ target: () => ({ host: '127.0.0.1', port: 1 }) });
    await expect(closed.expiresAt('x.example.com', 443, new AbortController().signal)).rejects.toThrow(/ECONNREFUSED/);
  });

  it.each(STORES)('the daily job alerts the channels with sslExpiry whose threshold the days left are under, once, and not for a muted check (%s)', async (kind) => {
    const receiver = await Receiver.start();
    const storage = await freshStorage(kind);
    const ports: Record<string, number> = { 'shop.example.com': portOf(soon), 'www.example.com': portOf(later), 'muted.example.com': portOf(soon) };
    const vigil = createVigil(
      { storage, secretKey: 'd'.repeat(64), engine: { pollMs: 20 }, alerts: { pollMs: 20 } },
      (c) => registerAlertChannels(c, { certificates: { target: (host) => ({ host: '127.0.0.1', port: ports[host]! }) } }),
    );
    try {
      const { id: accountId } = await vigil.accounts.ensure('certs');
      const flags = { sendFailure: false, sendRecovery: false, sendDegraded: false, sslExpiry: true };
      const hook = (name: string) => ({ name, url: `${receiver.url}/${name}`, template: '{"domain": "{{SSL_CHECK_DOMAIN}}", "days": {{SSL_DAYS_REMAINING}}, "type": "{{ALERT_TYPE}}", "check": "{{CHECK_NAME}}"}' });
      const wide = await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: hook('wide'), ...flags, sslExpiryThreshold: 10 });
      const narrow = await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: hook('narrow'), ...flags, sslExpiryThreshold: 3 });
      const subscriptions = [wide, narrow].map((c) => ({ alertChannelId: c.id, activated: true }));
      const browser = (name: string, domain: string, extra: Record<string, unknown> = {}) =>
        vigil.checks.create(accountId, 'BROWSER', { name, script: 'await page.goto("https://example.com")', frequency: 1440, sslCheckDomain: domain, alertChannelSubscriptions: subscriptions, ...extra });
      await browser('shop', 'shop.example.com');
      await browser('www', 'www.example.com');
      await browser('quiet', 'muted.example.com', { muted: true });
      await vigil.start();
      await receiver.waitFor(1);
      // Give the other two checks' looks time to have sent something, if they wrongly would.
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.requests.map((r) => [r.path, r.json])).toEqual([
        ['/wide', { domain: 'shop.example.com', days: 4, type: 'ALERT_SSL', check: 'shop' }],
      ]);
    } finally {
      await vigil.close();
      await receiver.close();
    }
  });
});
