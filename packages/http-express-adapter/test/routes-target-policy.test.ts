/**
 * The host's target policy through the HTTP API: an alert channel whose URL (WEBHOOK, CHAT,
 * CHAT_APP) is written as an address the policy refuses answers 400 naming `config.url` and
 * stores nothing; without a policy the same body is created.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';
import { expect400 } from './support/expect.js';

afterAll(dropPostgresSchema);

const STRICT = { targetPolicy: { refuseInternalAddresses: true } };
const webhook = (url: string) => ({ type: 'WEBHOOK', config: { name: 'ops', url } });

describe.each(BACKENDS)('alert channel routes under a target policy on %s', (backend) => {
  let h: ApiHarness;
  afterEach(() => h.close());

  it('POST /v1/alert-channels with a webhook at 127.0.0.1 answers 400 naming config.url and stores nothing', async () => {
    h = await apiHarness(backend, {}, STRICT);
    const res = await h.a.post('/api/v1/alert-channels', webhook('http://127.0.0.1:9000/hook?token=t0ken'));
    expect400(res, 'payload', 'config.url');
    expect(res.body.message).toContain('127.0.0.1 is a loopback address (127.0.0.0/8)');
    expect(res.body.message).toContain('target policy');
    expect(res.body.message).not.toContain('t0ken');
    expect((await h.a.get('/api/v1/alert-channels').expect(200)).body).toEqual([]);
    expect400(await h.a.post('/api/v1/alert-channels', { type: 'CHAT', config: { url: 'http://localhost/slack' } }), 'payload', 'config.url');
    expect400(await h.a.post('/api/v1/alert-channels', { type: 'CHAT_APP', config: { url: 'https://10.1.2.3/teams' } }), 'payload', 'config.url');
  });

  it('PUT /v1/alert-channels/{id} moving a webhook to a private address answers 400 and keeps the stored URL', async () => {
    h = await apiHarness(backend, {}, STRICT);
    const created = (await h.a.post('/api/v1/alert-channels', webhook('https://hooks.example.com/in')).expect(201)).body as { id: number };
    expect400(await h.a.put(`/api/v1/alert-channels/${created.id}`, webhook('http://192.168.0.5/in')), 'payload', 'config.url');
    expect((await h.a.get(`/api/v1/alert-channels/${created.id}`).expect(200)).body.config.url).toBe('https://hooks.example.com/in');
  });

  it('without a policy, or with the range allowed, the same webhook is created', async () => {
    h = await apiHarness(backend);
    await h.a.post('/api/v1/alert-channels', webhook('http://127.0.0.1:9000/hook')).expect(201);
    await h.close();
    h = await apiHarness(backend, {}, { targetPolicy: { refuseInternalAddresses: true, allow: ['127.0.0.0/8'] } });
    await h.a.post('/api/v1/alert-channels', webhook('http://127.0.0.1:9000/hook')).expect(201);
  });
});
