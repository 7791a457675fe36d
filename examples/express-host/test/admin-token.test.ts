// The example host's account administration under /admin/vigil: absent without VIGIL_ADMIN_TOKEN,
// behind that bearer token with it; the accounts it makes are tenants, limited to public targets.
import { describe, expect, it } from 'vitest';
import { exampleHostsOfFile, type RunningHost } from '../../../test/reliability/support/example-host.js';

describe('the example host\'s admin routes', () => {
  const startHost = exampleHostsOfFile();

  const post = (host: RunningHost, path: string, body: unknown, token?: string) =>
    fetch(`${host.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  it('are not served without VIGIL_ADMIN_TOKEN', async () => {
    const host = await startHost({});
    const res = await post(host, '/admin/vigil/accounts', { name: 'tenant' }, 'anything');
    expect(res.status).toBe(404);
  }, 60_000);

  it('make an account and a key only with the token; the tenant\'s key works and its checks reach public addresses only', async () => {
    const host = await startHost({ VIGIL_ADMIN_TOKEN: 'admin-5c1d' });
    for (const token of [undefined, 'admin-5c1e', 'admin-5c1d-more']) {
      const refused = await post(host, '/admin/vigil/accounts', { name: 'tenant' }, token);
      expect(refused.status, String(token)).toBe(403);
      expect(await refused.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    }
    const made = await post(host, '/admin/vigil/accounts', { name: 'tenant' }, 'admin-5c1d');
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const key = await post(host, `/admin/vigil/accounts/${id}/api-keys`, { name: 'ci' }, 'admin-5c1d');
    expect(key.status).toBe(201);
    const headers = { authorization: `Bearer ${((await key.json()) as { key: string }).key}`, 'x-service-account': id, 'content-type': 'application/json' };
    const api = (path: string, body?: unknown) =>
      fetch(`${host.base}/api${path}`, body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) });
    expect((await api('/v1/checks')).status).toBe(200);
    const local = await api('/v1/checks/tcp', { name: 'host db', request: { hostname: '127.0.0.1', port: 5432 } });
    expect(local.status).toBe(400);
    expect(JSON.stringify(await local.json())).toContain('request.hostname');
    // The host's own account keeps its open policy.
    expect((await host.api('POST', '/v1/checks/tcp', { name: 'host db', request: { hostname: '127.0.0.1', port: 5432 } })).status).toBe(201);
  }, 60_000);
});
