import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil, targetPolicy, type Logger, type TargetPolicy } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
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

  it('a process without a certificate probe leaves the looks to one that has it', async () => {
    const receiver = await Receiver.start();
    const storage = memoryStorage();
    // Started first and polling as often: before, it took every look and put it off a day.
    const bare = createVigil({ storage, secretKey: 'd'.repeat(64), engine: { pollMs: 5 } });
    const prober = createVigil(
      { storage, secretKey: 'd'.repeat(64), engine: { pollMs: 20 }, alerts: { pollMs: 20 } },
      (c) => registerAlertChannels(c, { certificates: { target: () => ({ host: '127.0.0.1', port: portOf(soon) }) } }),
    );
    try {
      const { id: accountId } = await bare.accounts.ensure('certs');
      const channel = await bare.alertChannels.create(accountId, {
        type: 'WEBHOOK', config: { name: 'ssl', url: receiver.url, template: '{"domain": "{{SSL_CHECK_DOMAIN}}"}' },
        sendFailure: false, sendRecovery: false, sendDegraded: false, sslExpiry: true, sslExpiryThreshold: 10,
      });
      await bare.checks.create(accountId, 'BROWSER', {
        name: 'shop', script: 'await page.goto("https://example.com")', frequency: 1440, sslCheckDomain: 'shop.example.com',
        alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      });
      await bare.start();
      await new Promise((r) => setTimeout(r, 100));
      await prober.start();
      await receiver.waitFor(1);
      expect(receiver.requests.map((r) => r.json)).toEqual([{ domain: 'shop.example.com' }]);
    } finally {
      await bare.close();
      await prober.close();
      await receiver.close();
    }
  });
});

/** A TLS server's connections, and the server name (SNI) each handshake asked for. */
function watch(server: Server): { connections: number; servernames: (string | false | null)[] } {
  const seen = { connections: 0, servernames: [] as (string | false | null)[] };
  server.on('connection', () => (seen.connections += 1));
  server.on('secureConnection', (socket) => seen.servernames.push(socket.servername));
  return seen;
}

/** A logger that keeps the warnings. */
function warnings(): { logger: Logger; seen: { msg: string; meta: Record<string, unknown> }[] } {
  const seen: { msg: string; meta: Record<string, unknown> }[] = [];
  const noop = () => {};
  const logger: Logger = { error: noop, info: noop, debug: noop, warn: (msg, meta = {}) => seen.push({ msg, meta: meta as Record<string, unknown> }), child: () => logger };
  return { logger, seen };
}

describe('certificate expiry under a target policy', () => {
  let server: Server;
  beforeAll(async () => {
    server = await tlsServer('localhost', 5);
  });
  afterAll(() => server.close());

  it('the TLS probe connects to the address it is given, with the domain as the server name, and looks nothing up', async () => {
    const seen = watch(server);
    // The domain does not resolve (.invalid): only the address given is connected to.
    const at = await tlsCertificateProbe().expiresAt('shop.example.invalid', portOf(server), new AbortController().signal, { address: '127.0.0.1' });
    expect((at.getTime() - Date.now()) / 86_400_000).toBeGreaterThan(4.9);
    await until(() => seen.servernames.length > 0);
    expect(seen.servernames).toEqual(['shop.example.invalid']);
  });

  /**
   * Runs the daily job of an API check on https://localhost:<port>/ under `policy` and answers what
   * the job logged and the alerts that went out. The policy's create-time look at host names is
   * left out, so that localhost stands for a name whose addresses only a lookup reveals.
   */
  async function dailyJob(policy: TargetPolicy, waitFor: (log: { msg: string }[], alerts: number) => boolean) {
    const receiver = await Receiver.start();
    const { logger, seen: logs } = warnings();
    const vigil = createVigil(
      { storage: memoryStorage(), secretKey: 'e'.repeat(64), engine: { pollMs: 20 }, alerts: { pollMs: 20 }, logger, targetPolicy: { ...policy, checkHost: () => null } },
      (c) => registerAlertChannels(c),
    );
    try {
      const { id: accountId } = await vigil.accounts.ensure('certs');
      const channel = await vigil.alertChannels.create(accountId, {
        type: 'WEBHOOK', config: { name: 'ssl', url: `${receiver.url}/ssl`, template: '{"days": {{SSL_DAYS_REMAINING}} }' },
        sendFailure: false, sendRecovery: false, sendDegraded: false, sslExpiry: true, sslExpiryThreshold: 10,
      });
      await vigil.checks.create(accountId, 'API', {
        name: 'local API', request: { url: `https://localhost:${portOf(server)}/`, method: 'GET' }, frequency: 1440,
        alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      });
      await vigil.start();
      await until(() => waitFor(logs, receiver.requests.length));
      return { logs, alerts: receiver.requests.map((r) => r.json) };
    } finally {
      await vigil.close();
      await receiver.close();
    }
  }

  it('refuses a domain that resolves to a loopback address: no connection, no alert, a warning without secrets', async () => {
    const seen = watch(server);
    const refusedLook = (log: { msg: string }[]) => log.some((l) => l.msg === 'certificates: the target policy refused a certificate look');
    const { logs, alerts } = await dailyJob(targetPolicy({ refuseInternalAddresses: true }), refusedLook);
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.connections).toBe(0);
    expect(alerts).toEqual([]);
    const warning = logs.find((l) => l.msg === 'certificates: the target policy refused a certificate look')!;
    expect(warning.meta).toMatchObject({ host: 'localhost', reason: expect.stringMatching(/is a loopback address/) });
    expect(['127.0.0.1', '::1']).toContain(warning.meta.address);
  });

  it('reads the certificate at the address checked when the allow list holds it, and alerts', async () => {
    const seen = watch(server);
    const { alerts } = await dailyJob(targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8', '::1'] }), (_log, sent) => sent >= 1);
    expect(alerts).toEqual([{ days: 4 }]);
    expect(seen.connections).toBe(1);
    expect(seen.servernames).toEqual(['localhost']);
  });
});
