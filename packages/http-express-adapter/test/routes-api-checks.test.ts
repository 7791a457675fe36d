/**
 * The API check type through the real Express router: POST /v1/checks/api, GET|PUT|DELETE
 * /v1/checks/api/{id}, its defaults, its constraints and its place in a group.
 */
import { CHECK_DEFAULTS } from '@vigil/core/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';
import { expect400, expect404 } from './support/expect.js';

afterAll(dropPostgresSchema);

const T0 = '2026-05-01T12:00:00.000Z';
type Body = Record<string, unknown>;
const apiBody = (request: Body = {}, over: Body = {}): Body => ({ name: 'orders API', request: { url: 'https://api.example.com/orders', ...request }, ...over });

describe.each(BACKENDS)('API check routes on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend);
  });
  afterEach(() => h.close());

  it('POST /v1/checks/api answers 201 with every default; the generic and typed GETs read it back', async () => {
    const res = await h.a.post('/api/v1/checks/api', apiBody()).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      checkType: 'API',
      name: 'orders API',
      ...CHECK_DEFAULTS,
      request: {
        method: 'GET',
        url: 'https://api.example.com/orders',
        headers: [],
        queryParameters: [],
        body: '',
        bodyType: 'NONE',
        basicAuth: null,
        followRedirects: true,
        skipSSL: false,
        assertions: [],
        ipFamily: 'IPv4',
      },
      frequencyOffset: null,
      degradedResponseTime: 10000,
      maxResponseTime: 20000,
      alertChannels: { email: [], webhook: [], chat: [], sms: [] },
      created_at: T0,
      updated_at: null,
    });
    expect((await h.a.get(`/api/v1/checks/${res.body.id}`).expect(200)).body).toEqual(res.body);
    expect((await h.a.get(`/api/v1/checks/api/${res.body.id}`).expect(200)).body).toEqual(res.body);
  });

  it('POST /v1/checks/api stores the request it is given and ignores unknown fields', async () => {
    const request = {
      method: 'POST',
      url: 'https://api.example.com/orders?source=monitor',
      headers: [{ key: 'X-Api-Key', value: '{{SERVICE_SECRET_API_KEY}}' }],
      queryParameters: [{ key: 'tag', value: 'a' }, { key: 'tag', value: 'b' }],
      body: '{"item": "book"}',
      bodyType: 'JSON',
      basicAuth: { username: 'ops', password: 'pw' },
      followRedirects: false,
      skipSSL: true,
      assertions: [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '201' },
        { source: 'JSON_BODY', comparison: 'NOT_EMPTY', property: '$.id' },
        { source: 'HEADERS', comparison: 'CONTAINS', property: 'content-type', target: 'json' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '800' },
      ],
      sneaky: 'dropped',
    };
    const res = await h.a.post('/api/v1/checks/api', apiBody(request, { frequency: 0, frequencyOffset: 30, degradedResponseTime: 500, maxResponseTime: 30000 })).expect(201);
    const { sneaky: _dropped, ...expected } = request;
    // A header named as a credential and the basic-auth password answer masked.
    expect(res.body.request).toEqual({
      ...expected,
      headers: [{ key: 'X-Api-Key', value: '********' }],
      basicAuth: { username: 'ops', password: '********' },
      ipFamily: 'IPv4',
      assertions: expected.assertions.map((a) => ({ target: '', property: '', regex: null, ...a })),
    });
    expect(res.body).toMatchObject({ frequency: 0, frequencyOffset: 30, degradedResponseTime: 500, maxResponseTime: 30000 });
  });

  it('POST /v1/checks/api answers 400 naming each violated constraint and stores nothing', async () => {
    const cases: [Body, string[]][] = [
      [{ name: 'x' }, ['request']],
      [{ name: 'x', request: {} }, ['request.url']],
      [apiBody({ url: 'ftp://files.example.com/' }), ['request.url']],
      [apiBody({ url: 'api.example.com/orders' }), ['request.url']],
      [apiBody({ method: 'FETCH' }), ['request.method']],
      [apiBody({ bodyType: 'XML' }), ['request.bodyType']],
      [apiBody({ headers: [{ key: 'Bad Header', value: 'x' }] }), ['request.headers.0.key']],
      [apiBody({ headers: [{ key: 'X-Ok', value: 'a\nInjected: 1' }] }), ['request.headers.0.value']],
      [apiBody({ assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS' }] }), ['request.assertions.0.source']],
      [apiBody({ assertions: [{ source: 'STATUS_CODE', comparison: 'ROUGHLY' }] }), ['request.assertions.0.comparison']],
      [apiBody({ followRedirects: 'yes' }), ['request.followRedirects']],
      [apiBody({}, { degradedResponseTime: 30001 }), ['degradedResponseTime']],
      [apiBody({}, { maxResponseTime: -1 }), ['maxResponseTime']],
      [apiBody({}, { frequency: 0 }), ['frequencyOffset']],
      [apiBody({}, { frequency: 5, frequencyOffset: 51 }), ['frequencyOffset']],
      [apiBody({}, { frequency: 3 }), ['frequency']],
      [apiBody({ url: '/health' }), ['request.url']],
    ];
    for (const [body, keys] of cases) {
      expect400(await h.a.post('/api/v1/checks/api', body), 'payload', ...keys);
    }
    expect(await h.vigil.storage.checks.listAll(h.a.accountId)).toEqual([]);
  });

  it('PUT /v1/checks/api/{id} replaces the given fields and validates the merged check; DELETE removes it', async () => {
    const { body: check } = await h.a.post('/api/v1/checks/api', apiBody({ method: 'DELETE' }, { frequency: 5 })).expect(201);
    h.clock.advance(60_000);
    const put = await h.a.put(`/api/v1/checks/api/${check.id}`, { request: { url: 'https://api.example.com/v2/orders', skipSSL: true }, muted: true }).expect(200);
    expect(put.body).toMatchObject({ muted: true, frequency: 5, updated_at: '2026-05-01T12:01:00.000Z' });
    // A PUT's request replaces the request: fields it leaves out take their defaults again.
    expect(put.body.request).toMatchObject({ method: 'GET', url: 'https://api.example.com/v2/orders', skipSSL: true });
    expect400(await h.a.put(`/api/v1/checks/api/${check.id}`, { frequencyOffset: 51 }), 'payload', 'frequencyOffset');
    expect400(await h.a.put(`/api/v1/checks/api/${check.id}`, { request: { url: '/relative' } }), 'payload', 'request.url');
    expect404(await h.a.put(`/api/v1/checks/tcp/${check.id}`, { name: 'x' }));
    await h.a.delete(`/api/v1/checks/api/${check.id}`).expect(204);
    expect404(await h.a.get(`/api/v1/checks/api/${check.id}`));
  });

  it('a member of a group with apiCheckDefaults.url may give a relative url; the group\'s url must be a URL', async () => {
    const { body: group } = await h.a.post('/api/v2/check-groups', {
      name: 'payments',
      apiCheckDefaults: { url: 'https://api.example.com/v1', headers: [{ key: 'Accept', value: 'application/json' }] },
    }).expect(201);
    const { body: member } = await h.a.post('/api/v1/checks/api', apiBody({ url: '/payments' }, { groupId: group.id })).expect(201);
    expect(member.request.url).toBe('/payments');
    const { check: running } = await h.vigil.checks.getForRun(h.a.accountId, member.id);
    expect(running.checkType === 'API' && running.request).toMatchObject({
      url: 'https://api.example.com/v1/payments', headers: [{ key: 'Accept', value: 'application/json' }],
    });
    expect400(await h.a.put(`/api/v1/checks/api/${member.id}`, { groupId: null }), 'payload', 'request.url');
    expect400(await h.a.post('/api/v2/check-groups', { name: 'g', apiCheckDefaults: { url: 'api.example.com' } }), 'payload', 'apiCheckDefaults.url');
  });
});
