// GET /metrics of the example host: public without VIGIL_METRICS_TOKEN, behind that bearer token with it.
import { describe, expect, it } from 'vitest';
import { exampleHostsOfFile, type RunningHost } from '../../../test/reliability/support/example-host.js';

describe('the example host\'s /metrics', () => {
  const startHost = exampleHostsOfFile();

  const metrics = (host: RunningHost, authorization?: string) =>
    fetch(`${host.base}/metrics`, authorization ? { headers: { authorization } } : {});

  it('answers 401 without the token, with another one or another scheme, and the metrics with it', async () => {
    const host = await startHost({ VIGIL_METRICS_TOKEN: 'scrape-me-7f3a' });
    for (const authorization of [undefined, 'Bearer scrape-me-7f3b', 'Bearer scrape-me-7f3a-and-more', 'Basic c2NyYXBlLW1lLTdmM2E=']) {
      const refused = await metrics(host, authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await refused.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    }
    const ok = await metrics(host, 'Bearer scrape-me-7f3a');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('vigil_');
    // The host's other routes and the API are untouched by the token.
    expect((await host.get('/-/liveness')).status).toBe(200);
    expect((await host.api('GET', '/v1/checks')).status).toBe(200);
  }, 60_000);

  it('stays public when VIGIL_METRICS_TOKEN is not set', async () => {
    const host = await startHost({});
    const ok = await metrics(host);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('vigil_');
  }, 60_000);
});
