import request from 'supertest';
import express from 'express';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BACKENDS, consoleHarness, csrfOf, dropPostgresSchema, signedIn, type ConsoleHarness } from './support/harness.js';
import { vigilConsole } from '../src/index.js';

let h: ConsoleHarness;
afterEach(async () => {
  await h?.close();
});
afterAll(dropPostgresSchema);

const tcp = (name: string, extra: Record<string, unknown> = {}) => ({ name, request: { hostname: '127.0.0.1', port: 5432 }, ...extra });
const cookieNames = (res: request.Response) => ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).map((c) => c.split('=')[0]);

describe.each(BACKENDS)('console sign-in on %s', (backend) => {
  it('sends a signed-out visitor to sign in, refuses a wrong key, and shows only the signed-in account\'s checks', async () => {
    h = await consoleHarness(backend);
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('orders-db'));
    await h.vigil.checks.create(h.b.accountId, 'TCP', tcp('other-tenant-db'));
    const anon = request.agent(h.app);
    const home = await anon.get('/console/');
    expect(home.status).toBe(303);
    expect(home.headers.location).toBe('/console/sign-in?next=%2F');
    // A script asking for rows gets a 401, not a page.
    expect((await anon.get('/console/?fragment=rows')).status).toBe(401);

    const page = await anon.get('/console/sign-in');
    expect(page.status).toBe(200);
    const wrong = await anon.post('/console/sign-in').type('form').send({ _csrf: csrfOf(page.text), account: h.a.accountId, key: `${h.a.key}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('do not match');
    expect(cookieNames(wrong)).not.toContain('vigil_console');
    // A's key with B's account id is refused too.
    const crossed = await anon.post('/console/sign-in').type('form').send({ _csrf: csrfOf(page.text), account: h.b.accountId, key: h.a.key });
    expect(crossed.status).toBe(401);
    expect((await anon.get('/console/')).status).toBe(303);

    const { agent } = await signedIn(h.app, h.a);
    const list = await agent.get('/console/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('orders-db');
    expect(list.text).not.toContain('other-tenant-db');
    const cookies = (await request.agent(h.app).get('/console/sign-in')).headers['set-cookie'] as unknown as string[];
    expect(cookies.join('\n')).toMatch(/vigil_console_csrf=[^;]+; Path=\/console; HttpOnly; SameSite=Strict/);
  });

  it('refuses a sign-in form without its CSRF token, and ends sessions that expired or whose key was revoked', async () => {
    h = await consoleHarness(backend, { sessionTtlMs: 3_600_000 });
    const anon = request.agent(h.app);
    await anon.get('/console/sign-in');
    const forged = await anon.post('/console/sign-in').type('form').send({ account: h.a.accountId, key: h.a.key });
    expect(forged.status).toBe(403);
    expect(cookieNames(forged)).not.toContain('vigil_console');

    const { agent } = await signedIn(h.app, h.a);
    h.clock.advance(3_600_000 - 1_000);
    expect((await agent.get('/console/')).status).toBe(200);
    h.clock.advance(2_000);
    const expired = await agent.get('/console/');
    expect(expired.status).toBe(303);
    expect(expired.headers.location).toBe('/console/sign-in?next=%2F&expired=1');
    expect((await agent.get(expired.headers.location!)).text).toContain('Your session ended');

    const second = await signedIn(h.app, h.a);
    const keys = await h.vigil.apiKeys.list(h.a.accountId);
    await h.vigil.apiKeys.revoke(h.a.accountId, keys[0]!.id);
    expect((await second.agent.get('/console/')).status).toBe(303);
  });

  it('takes no token made before sign-in or for another account (a planted cookie), and counts only failed sign-ins', async () => {
    h = await consoleHarness(backend, { signInLimit: 2 });
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'kept', request: { hostname: '127.0.0.1', port: 5432 } });
    // A pair an attacker can get without signing in: the sign-in page's cookie and token.
    const attacker = request.agent(h.app);
    const page = await attacker.get('/console/sign-in');
    const planted = ((page.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('vigil_console_csrf=')) ?? '').split(';')[0]!;
    const plantedToken = csrfOf(page.text);
    // Junk posts without a token do not count against the address.
    for (let i = 0; i < 4; i++) expect((await request(h.app).post('/console/sign-in').type('form').send({ account: 'x', key: 'y' })).status).toBe(403);
    const { agent } = await signedIn(h.app, h.a);
    await signedIn(h.app, h.a);
    const session = ((await agent.get('/console/')).request as unknown as { cookies: string }).cookies;
    const victimSession = session.split('; ').find((c) => c.startsWith('vigil_console='))!;
    const forged = await request(h.app).post(`/console/checks/${check.id}/delete`).set('Cookie', `${victimSession}; ${planted}`).type('form').send({ _csrf: plantedToken });
    expect(forged.status).toBe(403);
    expect(await h.vigil.storage.checks.get(h.a.accountId, check.id)).not.toBeNull();
    // B's own token, planted in A's browser, is refused too.
    const b = await signedIn(h.app, h.b);
    const bCookie = (((await b.agent.get('/console/')).request as unknown as { cookies: string }).cookies).split('; ').find((c) => c.startsWith('vigil_console_csrf='))!;
    const crossed = await request(h.app).post(`/console/checks/${check.id}/delete`).set('Cookie', `${victimSession}; ${bCookie}`).type('form').send({ _csrf: b.csrf });
    expect(crossed.status).toBe(403);
    expect(await h.vigil.storage.checks.get(h.a.accountId, check.id)).not.toBeNull();
    // Two wrong keys use up the limit of 2; the third attempt is refused even with the right key.
    const tries = request.agent(h.app);
    const form = await tries.get('/console/sign-in');
    for (let i = 0; i < 2; i++) expect((await tries.post('/console/sign-in').type('form').send({ _csrf: csrfOf(form.text), account: h.a.accountId, key: 'wrong' })).status).toBe(401);
    expect((await tries.post('/console/sign-in').type('form').send({ _csrf: csrfOf(form.text), account: h.a.accountId, key: h.a.key })).status).toBe(429);
  });

  it('signs out only with the token, so another site cannot sign a viewer out', async () => {
    h = await consoleHarness(backend);
    const { agent, csrf } = await signedIn(h.app, h.a);
    expect((await agent.post('/console/sign-out').type('form').send({})).status).toBe(403);
    expect((await agent.get('/console/')).status).toBe(200);
    const out = await agent.post('/console/sign-out').type('form').send({ _csrf: csrf });
    expect(out.status).toBe(303);
    expect((await agent.get('/console/')).status).toBe(303);
  });
});

describe('console with the host\'s own sign-in', () => {
  it('maps the host\'s session to an account, and without one sends the visitor to the host\'s sign-in page', async () => {
    let accountOfUser: Record<string, string> = {};
    h = await consoleHarness('sqlite', { auth: (req) => accountOfUser[String(req.get('x-host-user'))] ?? null, signInUrl: '/login' });
    accountOfUser = { ann: h.a.accountId };
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('ann-db'));
    const anon = await request(h.app).get('/console/');
    expect(anon.status).toBe(303);
    expect(anon.headers.location).toBe('/login?next=%2Fconsole%2F');
    const ann = await request(h.app).get('/console/').set('x-host-user', 'ann');
    expect(ann.status).toBe(200);
    expect(ann.text).toContain('ann-db');
    // No API-key sign-in page and no sign-out button: the host signs people in and out.
    expect((await request(h.app).get('/console/sign-in').set('x-host-user', 'ann')).status).toBe(404);
    expect(ann.text).not.toContain('Sign out');
  });

  it('answers 401 without a sign-in address', async () => {
    h = await consoleHarness('sqlite');
    const app = express();
    app.use('/m', vigilConsole(h.vigil, { auth: () => null }));
    const res = await request(app).get('/m/');
    expect(res.status).toBe(401);
    expect(res.text).toContain('Sign in first');
  });
});

describe('console pages', () => {
  it('serve hashed assets with a year of immutable caching, under a nonce-only CSP, with every name escaped', async () => {
    h = await consoleHarness('sqlite');
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('<script>alert(1)</script>"x'));
    const { agent } = await signedIn(h.app, h.a);
    const home = await agent.get('/console/');
    expect(home.text).not.toContain('<script>alert(1)');
    expect(home.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;x');
    const csp = String(home.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const scripts = [...home.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toContain(`nonce="${nonce}"`);
    expect(home.text).not.toMatch(/\son[a-z]+=/i);
    const src = /src="\/console\/assets\/(uplot\.[0-9a-f]{12}\.js)"/.exec(home.text)![1]!;
    const asset = await request(h.app).get(`/console/assets/${src}`);
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    expect(asset.text).toContain('uPlot');
    expect((await request(h.app).get('/console/assets/uplot.000000000000.js')).status).toBe(404);
  });

  it('filter checks by name, tag, type and state, and give the rows alone for live updates', async () => {
    h = await consoleHarness('sqlite');
    const group = await h.vigil.checkGroups.create(h.a.accountId, { name: 'Payments' });
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('orders-db', { tags: ['db'] }));
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('billing-db', { tags: ['db', 'billing'], groupId: group.id }));
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('cache', { muted: true }));
    await h.vigil.checks.create(h.a.accountId, 'TCP', tcp('old', { activated: false }));
    const { agent } = await signedIn(h.app, h.a);
    const names = (html: string) => [...html.matchAll(/<a href="\/console\/checks\/[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);
    expect(names((await agent.get('/console/')).text)).toEqual(['billing-db', 'cache', 'orders-db', 'old']);
    expect(names((await agent.get('/console/?q=DB')).text)).toEqual(['billing-db', 'orders-db']);
    expect(names((await agent.get('/console/?tag=billing')).text)).toEqual(['billing-db']);
    expect(names((await agent.get(`/console/?group=${group.id}`)).text)).toEqual(['billing-db']);
    expect(names((await agent.get('/console/?state=muted')).text)).toEqual(['cache']);
    expect(names((await agent.get('/console/?state=inactive')).text)).toEqual(['old']);
    expect(names((await agent.get('/console/?type=API')).text)).toEqual([]);
    const rows = await agent.get('/console/?fragment=rows&q=cache');
    expect(rows.text.trim().startsWith('<div role="row" class="row" data-check=')).toBe(true);
    expect(rows.text).not.toContain('<html');
    expect(rows.text).toContain('No runs yet · muted');
  });
});
