/**
 * The client-certificate routes of the HTTP API through the real Express router, with real PEM
 * material: no response ever carries the key or passphrase.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, UUID_RE, type Body, ok, created, deleted, describeOnBackends } from './support/routes.js';

// Real PEM material for the client-certificate routes (node cannot make X.509 certificates).

interface Pem {
  cert: string;
  key: string;
}
let plain: Pem;
let encrypted: Pem;
let other: Pem;
const PASSPHRASE = 'c0rrect-horse';

function pemBlock(text: string, label: RegExp): string {
  const m = text.match(label);
  if (!m) throw new Error(`no PEM block ${label} in openssl output`);
  return `${m[0]}\n`;
}

function selfSigned(cn: string, passphrase?: string): Pem {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-subj', `/CN=${cn}`, '-days', '2', '-keyout', '-', '-out', '-'];
  args.push(...(passphrase ? ['-passout', `pass:${passphrase}`] : ['-nodes']));
  const out = execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return {
    cert: pemBlock(out, /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/),
    key: pemBlock(out, /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/),
  };
}

beforeAll(() => {
  plain = selfSigned('api.internal');
  encrypted = selfSigned('billing.internal', PASSPHRASE);
  other = selfSigned('other.internal');
});

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {

  describe('client certificates', () => {
    const PUBLIC_KEYS = ['ca', 'cert', 'created_at', 'host', 'id'];
    /** No response of the certificate routes ever carries the key or passphrase. */
    function expectNoSecrets(body: unknown): void {
      const items = Array.isArray(body) ? body : [body];
      for (const item of items) {
        expect(Object.keys(item as object).sort()).toEqual(PUBLIC_KEYS);
        expect(item).not.toHaveProperty('key');
        expect(item).not.toHaveProperty('passphrase');
        expect(item).not.toHaveProperty('encryptedKey');
        expect(item).not.toHaveProperty('encryptedPassphrase');
      }
      const text = JSON.stringify(body);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain(PASSPHRASE);
    }

    it('POST /v1/client-certificates answers 201 with id, host, cert, ca and created_at, never the key or passphrase', async () => {
      const res = await h.a.post('/api/v1/client-certificates', { host: 'API.Internal', cert: plain.cert, key: plain.key });
      const cert = await created(res);
      expect(cert).toEqual({ id: expect.stringMatching(UUID_RE), host: 'api.internal', cert: plain.cert, ca: null, created_at: T0 });
      expectNoSecrets(cert);
      expect(res.text).not.toContain('"key"');
      expect(res.text).not.toContain('"passphrase"');

      const withCa = await created(h.a.post('/api/v1/client-certificates', {
        host: '*.billing.internal', cert: encrypted.cert, key: encrypted.key, passphrase: PASSPHRASE, ca: other.cert,
      }));
      expect(withCa).toEqual({ id: expect.stringMatching(UUID_RE), host: '*.billing.internal', cert: encrypted.cert, ca: other.cert, created_at: T0 });
      expectNoSecrets(withCa);
      // The cert keeps its line breaks.
      expect(withCa.cert.split('\n').length).toBeGreaterThan(3);

      const certOnly = await created(h.a.post('/api/v1/client-certificates', { host: 'plain.internal', cert: other.cert, key: null, passphrase: null }));
      expectNoSecrets(certOnly);

      for (const path of ['/api/v1/client-certificates', `/api/v1/client-certificates/${cert.id}`, `/api/v1/client-certificates/${withCa.id}`]) {
        const read = await h.a.get(path).expect(200);
        expectNoSecrets(read.body);
        expect(read.text).not.toContain('"key"');
        expect(read.text).not.toContain('"passphrase"');
      }
      expect(await ok(h.a.get(`/api/v1/client-certificates/${withCa.id}`))).toEqual(withCa);
      const list = await h.a.get('/api/v1/client-certificates?limit=2').expect(200);
      expect(list.body).toEqual([cert, withCa]);
      expect(list.headers['content-range']).toBe('0-1/3');
      // At rest the key and passphrase are sealed; a run opens them.
      const raw = JSON.stringify(await h.vigil.storage.clientCertificates.get(h.a.accountId, withCa.id));
      expect(raw).not.toContain('PRIVATE KEY');
      expect(raw).not.toContain(PASSPHRASE);
      const opened = await h.vigil.clientCertificates.findForHost(h.a.accountId, 'eu.billing.internal');
      expect(opened).toMatchObject({ host: '*.billing.internal', key: encrypted.key, passphrase: PASSPHRASE });
      expect(await ok(h.b.get('/api/v1/client-certificates'))).toEqual([]);
    });

    it('POST refuses each constraint violation naming the field, and stores nothing', async () => {
      const cases: [Body, string[]][] = [
        [{}, ['host', 'cert']],
        [{ host: 'https://api.internal', cert: plain.cert }, ['host']],
        [{ host: 'api.internal:443', cert: plain.cert }, ['host']],
        [{ host: 'api.internal/path', cert: plain.cert }, ['host']],
        [{ host: 'api.*.internal', cert: plain.cert }, ['host']],
        [{ host: '', cert: plain.cert }, ['host']],
        [{ host: 'api.internal', cert: 'not a certificate' }, ['cert']],
        [{ host: 'api.internal', cert: '-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n' }, ['cert']],
        [{ host: 'api.internal', cert: plain.cert, ca: 'not a ca' }, ['ca']],
        [{ host: 'api.internal', cert: plain.cert, key: 'not a key' }, ['key']],
        [{ host: 'api.internal', cert: plain.cert, key: other.key }, ['key']],
        [{ host: 'api.internal', cert: encrypted.cert, key: encrypted.key, passphrase: 'wrong' }, ['passphrase']],
        [{ host: 'api.internal', cert: plain.cert, passphrase: 42 }, ['passphrase']],
      ];
      for (const [body, keys] of cases) {
        const res = await h.a.post('/api/v1/client-certificates', body);
        expect400(res, 'payload', ...keys);
        expect(res.text).not.toContain('PRIVATE KEY');
      }
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([]);
    });

    it('there is no PUT: it answers 404 in the spec error shape and changes nothing', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const path = `/api/v1/client-certificates/${cert.id}`;
      for (const method of ['put', 'patch'] as const) {
        const res = await h.a[method](path, { host: 'evil.internal', cert: other.cert, key: other.key });
        expect404(res);
      }
      expect(await ok(h.a.get(path))).toEqual(cert);
    });

    it('DELETE /v1/client-certificates/{id} answers 204 and removes the certificate', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const keep = await created(h.a.post('/api/v1/client-certificates', { host: 'other.internal', cert: other.cert, key: other.key }));
      await deleted(h.a.delete(`/api/v1/client-certificates/${cert.id}`));
      expect404(await h.a.get(`/api/v1/client-certificates/${cert.id}`));
      expect404(await h.a.delete(`/api/v1/client-certificates/${cert.id}`));
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([keep]);
      expect(await h.vigil.clientCertificates.findForHost(h.a.accountId, 'api.internal')).toBeNull();
    });

    it('401 and 403 on every client-certificate route; 404 for another account\'s certificate, which stays as it was', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const path = `/api/v1/client-certificates/${cert.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/client-certificates'],
        ['get', path],
        ['post', '/api/v1/client-certificates', { host: 'x.internal', cert: plain.cert }],
        ['delete', path],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([cert]);
      expect(await h.vigil.clientCertificates.findForHost(h.b.accountId, 'api.internal')).toBeNull();
    });
  });
});
