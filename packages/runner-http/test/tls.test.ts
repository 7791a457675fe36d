import { createVigil, type Vigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpRunner, type LookupFunction } from '../src/index.js';
import { apiJob, json, makePki, startHttps, type ApiJobOptions, type TestPki, type TestServer } from './support.js';

// Names under .test (RFC 6761) that the runner's lookup sends to 127.0.0.1, so a certificate's
// host can be a name and a wildcard without a DNS server.
const localNames: LookupFunction = async (hostname) => {
  if (hostname === 'localhost' || hostname.endsWith('.test')) return { address: '127.0.0.1', family: 4 };
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
const runner = httpRunner({ lookup: localNames });

let pki: TestPki;
let plain: TestServer;
let mutual: TestServer;
beforeAll(async () => {
  pki = makePki();
  plain = await startHttps(pki, json(200, { secure: true }));
  mutual = await startHttps(pki, (req, res) => json(200, { hello: req.socket && (req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN })(req, res, ''), { clientCa: pki.caCert });
}, 30_000);
afterAll(async () => {
  await plain?.close();
  await mutual?.close();
});

const run = (job: ApiJobOptions) => runner.run(apiJob(job), new AbortController().signal);

describe('HTTPS', () => {
  it('verifies the server\'s certificate: one of an unknown CA fails, with a message that names skipSSL', async () => {
    const result = await run({ request: { url: `${plain.origin}/` } });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR', statusCode: null });
    expect(result.errorMessage).toMatch(/^The TLS certificate of 127\.0\.0\.1:\d+ could not be verified \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/);
    expect(result.errorMessage).toContain('skipSSL');
    expect(plain.seen).toHaveLength(0);
  });

  it('skipSSL turns verification off, for that check only; the run records tls, the protocol and the days left', async () => {
    const result = await run({ request: { url: `${plain.origin}/`, skipSSL: true } });
    expect(result).toMatchObject({ hasFailures: false, statusCode: 200, sslDaysRemaining: 1 });
    expect(result.details).toMatchObject({ tlsProtocol: expect.stringMatching(/^TLSv1\.[23]$/), clientCertificate: null });
    const p = result.phases;
    expect(p.tls).toBeGreaterThan(0);
    const sum = p.wait! + p.dns! + p.tcp! + p.tls! + p.firstByte! + p.download!;
    expect(Math.abs(sum - p.total!)).toBeLessThan(0.05);
    expect((await run({ request: { url: `${plain.origin}/` } })).hasFailures).toBe(true);
  });

  it('checks the name: a certificate for *.mtls.test does not cover another name', async () => {
    const result = await run({ request: { url: `https://api.other.test:${plain.port}/` } });
    expect(result.failureKind).toBe('NETWORK_ERROR');
  });
});

describe('client certificates', () => {
  let vigil: Vigil;
  let accountId: string;
  beforeEach(async () => {
    vigil = createVigil({ storage: memoryStorage(), secretKey: 'ab'.repeat(32) });
    accountId = (await vigil.accounts.ensure()).id;
  });
  const store = (host: string, extra: Record<string, unknown> = {}) =>
    vigil.clientCertificates.create(accountId, { host, cert: pki.clientCert, key: pki.clientKey, passphrase: pki.clientPassphrase, ca: pki.caCert, ...extra });
  // Without a stored certificate nothing says to trust the test CA: those runs skip verification.
  const runWithCertificates = (url: string, skipSSL = false) =>
    run({ request: { url, skipSSL }, job: { clientCertificates: vigil.clientCertificates.lookupFor(accountId) } });

  it('a server that demands one is not reached without it', async () => {
    const before = mutual.seen.length;
    const result = await runWithCertificates(`${mutual.origin}/`, true);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
    expect(result.errorMessage).toBe(`127.0.0.1:${mutual.port} asked for a client certificate, and none of the account's client certificates is for 127.0.0.1 (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)`);
    expect(mutual.seen.length).toBe(before);
  });

  it('the stored certificate for the host is presented, its encrypted key opened with its passphrase, its CA trusted', async () => {
    const stored = await store('127.0.0.1');
    expect(stored).not.toHaveProperty('key');
    const result = await runWithCertificates(`${mutual.origin}/`);
    expect(result).toMatchObject({ hasFailures: false, errorMessage: null, statusCode: 200 });
    expect(result.details).toMatchObject({ clientCertificate: '127.0.0.1', response: { body: '{"hello":"vigil-client"}' } });
    expect(mutual.seen.at(-1)?.clientCertificate).toBe('vigil-client');
    expect(JSON.stringify(result)).not.toContain('PRIVATE KEY');
  });

  it('a certificate stored for another host is not presented', async () => {
    await store('other.example.com');
    const result = await runWithCertificates(`${mutual.origin}/`, true);
    expect(result.errorMessage).toContain('asked for a client certificate, and none of the account\'s client certificates is for 127.0.0.1');
  });

  it('a wildcard host covers one label of a name: api.mtls.test, not deep.api.mtls.test', async () => {
    await store('*.mtls.test');
    const matched = await runWithCertificates(`https://api.mtls.test:${mutual.port}/`);
    expect(matched).toMatchObject({ hasFailures: false, statusCode: 200 });
    expect(matched.details).toMatchObject({ clientCertificate: '*.mtls.test' });
    const deeper = await runWithCertificates(`https://deep.api.mtls.test:${mutual.port}/`);
    expect(deeper.hasFailures).toBe(true);
  });

  it('a certificate the server does not trust is presented and refused, with a message naming it', async () => {
    await vigil.clientCertificates.create(accountId, { host: '127.0.0.1', cert: pki.strangerCert, key: pki.strangerKey, ca: pki.caCert });
    const result = await runWithCertificates(`${mutual.origin}/`);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
    // TLS 1.3 servers refuse it after the handshake, by an alert or by just closing.
    expect(result.errorMessage).toMatch(/(did not accept|may not accept) the client certificate stored for 127\.0\.0\.1 \(/);
  });

  it('a certificate whose key cannot be opened is Vigil\'s error (hasErrors), not the target\'s', async () => {
    const wrongPassphrase = { forHost: async () => ({ host: '*.mtls.test', cert: pki.clientCert, key: pki.clientKey, passphrase: 'wrong', ca: pki.caCert }) };
    const result = await run({ request: { url: `https://api.mtls.test:${mutual.port}/` }, job: { clientCertificates: wrongPassphrase } });
    expect(result).toMatchObject({ hasErrors: true, hasFailures: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(/^The client certificate stored for \*\.mtls\.test could not be used: /);
  });

  it('another account\'s certificate is never used', async () => {
    const other = (await vigil.accounts.ensure()).id;
    await vigil.clientCertificates.create(other, { host: '127.0.0.1', cert: pki.clientCert, key: pki.clientKey, passphrase: pki.clientPassphrase, ca: pki.caCert });
    expect((await runWithCertificates(`${mutual.origin}/`, true)).errorMessage).toContain('asked for a client certificate');
  });
});
