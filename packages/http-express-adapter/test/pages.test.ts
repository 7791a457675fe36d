import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';
import { MIXED, pagesHarness, percentile, seedChecks } from './support/pages.js';

let h: ApiHarness;
afterEach(async () => {
  await h?.close();
});
afterAll(dropPostgresSchema);

const anon = () => request(h.app);

/** An SVG answer as text (supertest buffers only text types by itself). */
async function svg(path: string): Promise<{ status: number; type: string; text: string }> {
  const res = await anon().get(path).buffer(true).parse((r, done) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (c: string) => (text += c));
    r.on('end', () => done(null, text));
  });
  return { status: res.status, type: String(res.headers['content-type']), text: res.body as string };
}

/** HTML with the entities the templates write for `=`, `&` and quotes read back. */
const decoded = (html: string) => html.replace(/&#x3D;/g, '=').replace(/&quot;/g, '"').replace(/&amp;/g, '&');

/** The ids of the check cards a dashboard page shows, in order. */
function cardIds(html: string): string[] {
  return [...html.matchAll(/data-check="([^"]+)"/g)].map((m) => m[1]!);
}

async function dashboard(body: object) {
  const res = await h.a.post('/api/v1/dashboards', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: number; customUrl: string; keys: { rawKey: string }[] };
}

describe('dashboard pages', () => {
  it('show the chosen checks, failing first, paginated by checksPerPage, with p95 and p99', async () => {
    h = await pagesHarness();
    const checks = await seedChecks(h, MIXED);
    await dashboard({ header: 'Shop', customUrl: 'shop', tags: ['web'], checksPerPage: 15, paginationRate: 30, refreshRate: 300 });
    const first = await anon().get('/d/shop');
    expect(first.status).toBe(200);
    expect(first.type).toBe('text/html');
    const ids = cardIds(first.text);
    expect(ids).toHaveLength(15);
    const order = ['FAILING', 'DEGRADED', 'PENDING', 'PASSING', 'PAUSED'];
    const expected = [...checks].sort((a, b) => order.indexOf(a.state) - order.indexOf(b.state) || a.name.localeCompare(b.name));
    expect(ids).toEqual(expected.slice(0, 15).map((c) => c.id));
    const second = await anon().get('/d/shop?page=2');
    expect(cardIds(second.text)).toEqual(expected.slice(15).map((c) => c.id));
    expect(decoded(first.text)).toContain('href="/d/shop?page=2"');
    expect(first.text).toContain('data-pages="2"');
    expect(first.text).toContain('data-rotate="30"');
    expect(first.text).toContain('data-refresh="300"');
    // Counts by state, and each check's figures over the last day.
    expect(first.text).toMatch(/data-count="FAILING">3 failing/);
    expect(first.text).toMatch(/data-count="PAUSED">2 paused/);
    const failing = checks[5]!;
    const card = first.text.slice(first.text.indexOf(`data-check="${failing.id}"`));
    expect(card).toMatch(new RegExp(`class="p95">${percentile(failing.times, 95)} ms<`));
    expect(card).toMatch(new RegExp(`class="p99">${percentile(failing.times, 99)} ms<`));
    expect(card.slice(0, card.indexOf('</li>'))).toContain('data-state="FAILING"');
    // An out-of-range page shows the last one rather than failing.
    expect(cardIds((await anon().get('/d/shop?page=99')).text)).toEqual(cardIds(second.text));
  });

  it('choose checks by tags with OR (group tags count) or AND, and hide what the dashboard turns off', async () => {
    h = await pagesHarness();
    const checks = await seedChecks(h, ['PASSING', 'PASSING', 'FAILING', 'PASSING']);
    await dashboard({ header: 'Or', customUrl: 'or', tags: ['api', 'grouped'], showP95: false, showP99: false, hideTags: true, showGroupNames: false });
    await dashboard({ header: 'And', customUrl: 'and', tags: ['web', 'api'], useTagsAndOperator: true, paginate: false });
    const or = await anon().get('/d/or');
    expect(new Set(cardIds(or.text))).toEqual(new Set([checks[0]!.id, checks[1]!.id, checks[3]!.id]));
    expect(or.text).not.toContain('class="p95"');
    expect(or.text).not.toContain('class="p99"');
    expect(or.text).not.toContain('aria-label="Tags"');
    expect(or.text).not.toContain('Payments group');
    const and = await anon().get('/d/and');
    expect(new Set(cardIds(and.text))).toEqual(new Set([checks[1]!.id, checks[3]!.id]));
    expect(and.text).toContain('aria-label="Tags"');
    expect(and.text).toContain('data-rotate="0"');
  });

  it('name groups, expand checks into their last day, and link runs when asked', async () => {
    h = await pagesHarness();
    const [grouped, other] = await seedChecks(h, ['FAILING', 'PASSING']);
    await dashboard({ header: 'Ops', customUrl: 'ops', expandChecks: true, showCheckRunLinks: true, tags: ['web'] });
    const page = await anon().get('/d/ops');
    expect(page.text).toContain('Payments group');
    expect(page.text).toMatch(/10 runs in 24 h/);
    expect(page.text.match(/title="[^"]+: \d+ runs, \d+ failed"/g)).toHaveLength(48);
    expect(page.text).toContain(`href="/d/ops/checks/${grouped!.id}"`);
    const runs = await anon().get(`/d/ops/checks/${grouped!.id}`);
    expect(runs.status).toBe(200);
    expect(runs.text.match(/data-result="/g)).toHaveLength(10);
    expect(runs.text).toContain('connect ECONNREFUSED 127.0.0.1:9');
    // A check the dashboard does not show, or run links turned off, answers 404.
    await dashboard({ header: 'Narrow', customUrl: 'narrow', tags: ['api'], showCheckRunLinks: true });
    expect((await anon().get(`/d/narrow/checks/${grouped!.id}`)).status).toBe(404);
    expect((await anon().get(`/d/narrow/checks/${other!.id}`)).status).toBe(200);
    await dashboard({ header: 'No links', customUrl: 'nolinks' });
    expect((await anon().get(`/d/nolinks/checks/${other!.id}`)).status).toBe(404);
    expect((await anon().get('/d/nolinks')).text).not.toContain('/checks/');
  });

  it('a private dashboard answers 401 with nothing of it unless a key is presented', async () => {
    h = await pagesHarness();
    await seedChecks(h, ['PASSING'], () => 'secret-billing-check');
    const d = await dashboard({ header: 'Internal ops board', customUrl: 'internal', isPrivate: true });
    const key = d.keys[0]!.rawKey;
    for (const res of [await anon().get('/d/internal'), await anon().get('/d/internal?key=wrong'), await anon().get('/d/internal').set('x-dashboard-key', `${key}x`)]) {
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('secret-billing-check');
      expect(res.text).not.toContain('Internal ops board');
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
    const withQuery = await anon().get(`/d/internal?key=${encodeURIComponent(key)}`);
    expect(withQuery.status).toBe(200);
    expect(withQuery.text).toContain('secret-billing-check');
    expect(withQuery.headers['referrer-policy']).toBe('no-referrer');
    const withHeader = await anon().get('/d/internal').set('x-dashboard-key', key);
    expect(withHeader.status).toBe(200);
    // An empty ?key= does not hide the header's key.
    expect((await anon().get('/d/internal?key=').set('x-dashboard-key', key)).status).toBe(200);
  });

  it('the host may let its own viewers in to a private dashboard', async () => {
    h = await pagesHarness({ authorize: (req, page) => req.get('x-host-session') === 'staff' && page.kind === 'dashboard' });
    await dashboard({ header: 'Internal', customUrl: 'internal', isPrivate: true });
    expect((await anon().get('/d/internal')).status).toBe(401);
    expect((await anon().get('/d/internal').set('x-host-session', 'staff')).status).toBe(200);
  });

  it('escape every value a user typed; customCSS cannot leave its style element', async () => {
    h = await pagesHarness();
    await seedChecks(h, ['FAILING'], () => '<script>alert("check")</script>');
    const css = 'body{color:red}</style><script>alert(1)</script><style>';
    await dashboard({
      header: '"><img src=x onerror=alert(2)>', description: '<b>bold</b> & more', customUrl: 'xss', customCSS: css,
      tags: [], logo: 'https://cdn.example.com/logo.png?"onload="x', link: 'https://example.com/"><script>',
    });
    const res = await anon().get('/d/xss');
    expect(res.status).toBe(200);
    expect(res.text).toContain('&lt;script&gt;alert(&quot;check&quot;)&lt;/script&gt;');
    expect(res.text).not.toContain('<script>alert');
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).toContain('&lt;b&gt;bold&lt;/b&gt; &amp; more');
    expect(res.text).not.toMatch(/"onload="/);
    const style = res.text.slice(res.text.indexOf('<style nonce="'), res.text.lastIndexOf('</style>'));
    expect(style).toContain('body{color:red}\\3c /style>\\3c script>');
    expect(res.text.match(/<\/style>/g)).toHaveLength(2);
    // The page's script, its chart data and the chart files: nothing a user typed.
    expect(res.text.match(/<script/g)).toHaveLength(4);
    expect([...res.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.replace(/nonce="[^"]+"/, 'nonce').replace(/[0-9a-f]{16}/, '<hash>'))).toEqual([
      ' nonce', ' type="application/json" id="vigil-chart-data"', ' nonce src="/assets/uplot.<hash>.min.js" defer', ' nonce src="/assets/charts.<hash>.js" defer',
    ]);
  });

  it('load nothing from outside the host but the configured logo and favicon', async () => {
    h = await pagesHarness();
    await dashboard({ header: 'Logo', customUrl: 'logo', logo: 'https://cdn.example.com/a/logo.png?v=1', favicon: 'https://icons.example.org/f.ico' });
    const res = await anon().get('/d/logo');
    const csp = res.headers['content-security-policy'] as string;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`style-src 'nonce-${nonce}'`);
    expect(csp).toContain('img-src data: https://cdn.example.com/a/logo.png https://icons.example.org/f.ico');
    expect(decoded(res.text)).toContain(`<script nonce="${nonce}">`);
    expect(res.text).toContain('alt="Logo"');
    expect([...decoded(res.text).matchAll(/(?:src|href)="(https?:[^"]+)"/g)].map((m) => m[1])).toEqual([
      'https://icons.example.org/f.ico', 'https://cdn.example.com/a/logo.png?v=1',
    ]);
    const second = await anon().get('/d/logo');
    expect(second.headers['content-security-policy']).not.toContain(nonce);

    await h.close();
    h = await pagesHarness({ externalImages: false });
    await dashboard({ header: 'Logo', customUrl: 'logo', logo: 'https://cdn.example.com/a/logo.png', favicon: 'https://icons.example.org/f.ico' });
    const strict = await anon().get('/d/logo');
    expect(strict.headers['content-security-policy']).toContain('img-src data:;');
    expect(strict.text).not.toMatch(/(src|href)="https?:/);
  });

  it('show the dashboard\'s incidents with updates newest first when enableIncidents is on', async () => {
    h = await pagesHarness();
    const on = await dashboard({ header: 'On', customUrl: 'on', enableIncidents: true });
    const off = await dashboard({ header: 'Off', customUrl: 'off' });
    const incident = await h.a.post('/api/v1/incidents', {
      name: 'Checkout slow', impact: 'MAJOR', dashboardId: on.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into it' }],
    });
    expect(incident.status, JSON.stringify(incident.body)).toBe(201);
    h.clock.advance(60_000);
    expect((await h.a.post(`/api/v1/incidents/${incident.body.id}/updates`, { status: 'IDENTIFIED', description: 'A bad deploy' })).status).toBe(201);
    await h.a.post('/api/v1/incidents', { name: 'Elsewhere', dashboardId: off.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }] });
    const page = await anon().get('/d/on');
    expect(page.text).toContain('Checkout slow');
    expect(page.text).toMatch(/major impact · identified/);
    expect(page.text.indexOf('A bad deploy')).toBeLessThan(page.text.indexOf('Looking into it'));
    expect((await anon().get('/d/off')).text).not.toContain('Elsewhere');
    // One announced for tomorrow is listed as upcoming, after the active one, not as active.
    await h.a.post('/api/v1/incidents', {
      name: 'Planned upgrade', impact: 'MAINTENANCE', dashboardId: on.id, startedAt: '2026-05-02T08:00:00Z',
      incidentUpdates: [{ status: 'MAINTENANCE', description: 'Database upgrade' }],
    });
    const again = (await anon().get('/d/on')).text;
    expect(again).toMatch(/maintenance impact · starts 2026-05-02 08:00 UTC/);
    expect(again.indexOf('Checkout slow')).toBeLessThan(again.indexOf('Planned upgrade'));
  });

  it('answer by customDomain at the root only when the host turns that on, for the hostnames it allows', async () => {
    h = await pagesHarness({ customDomains: (hostname) => hostname.endsWith('.shop.test') });
    await seedChecks(h, ['PASSING']);
    await dashboard({ header: 'Domain board', customUrl: 'dom', customDomain: 'status.shop.test' });
    await dashboard({ header: 'Claimed host', customUrl: 'claim', customDomain: 'vigil.example.com' });
    const res = await anon().get('/').set('Host', 'status.shop.test');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Domain board');
    expect((await anon().get('/').set('Host', 'other.test')).status).toBe(404);
    // A domain the host does not allow is not served, whatever an account claimed.
    expect((await anon().get('/').set('Host', 'vigil.example.com')).status).toBe(404);
    // Nor is a customDomain reachable under /d/.
    expect((await anon().get('/d/status.shop.test')).status).toBe(404);
    await h.close();
    h = await pagesHarness();
    await dashboard({ header: 'Domain board', customUrl: 'dom', customDomain: 'status.shop.test' });
    expect((await anon().get('/').set('Host', 'status.shop.test')).status).toBe(404);
  });

  it('limit requests per client address', async () => {
    h = await pagesHarness({ rateLimit: { limit: 3, windowMs: 60_000 } });
    await dashboard({ header: 'Busy', customUrl: 'busy' });
    for (let i = 0; i < 3; i++) expect((await anon().get('/d/busy')).status).toBe(200);
    const limited = await anon().get('/d/busy');
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('Too many requests');
    expect((await anon().get('/s/any')).status).toBe(429);
  });

  it.each(BACKENDS)('answer unknown or odd addresses with a page, never a 5xx (%s)', async (backend) => {
    h = await pagesHarness({}, backend);
    await dashboard({ header: 'Pub', customUrl: 'pub', showCheckRunLinks: true });
    const paths = [
      '/d/nope', '/d/%E0%A4%A', '/d/' + 'a'.repeat(3000), '/s/nope', '/s/%00', '/d/nope/checks/x', '/d/%00', '/d/a%00b',
      '/d/pub/checks/%00', '/badges/checks/%00', '/badges/groups/999999999999999', '/badges/groups/2147483648',
    ];
    for (const path of paths) {
      const res = await anon().get(path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
    expect((await anon().get('/d/pub?page[]=1&key=a&key=b')).status).toBe(200);
    // The API on the same store: an id past int4 or a NUL is not found, NUL text in a body is refused by name.
    expect((await h.a.get('/api/v2/check-groups/9999999999')).status).toBe(404);
    expect((await h.a.get('/api/v1/dashboards/9999999999')).status).toBe(404);
    expect((await h.a.get('/api/v1/checks/%00')).status).toBe(404);
    const nul = await h.a.post('/api/v1/status-pages/services', { name: 'a\u0000b' });
    expect(nul.status).toBeLessThan(500);
  });
});

async function service(name: string): Promise<string> {
  const res = await h.a.post('/api/v1/status-pages/services', { name });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe('status pages', () => {
  it('show cards of services with their state, 90 days of uptime, and incidents with updates newest first', async () => {
    h = await pagesHarness();
    const api = await service('API');
    const web = await service('Website');
    const db = await service('Database');
    const page = await h.a.post('/api/v1/status-pages', {
      name: 'Acme', url: 'acme', description: 'Status of <Acme>', defaultTheme: 'DARK',
      themeColors: { dark: { bodyBackgroundColor: '#101010' } },
      cards: [{ name: 'Core', serviceIds: [api, db] }, { name: 'Public', serviceIds: [web] }],
    });
    expect(page.status, JSON.stringify(page.body)).toBe(201);
    h.clock.advance(3 * 86_400_000);
    // A resolved outage of API yesterday, an open one of Website, a maintenance of Database.
    const past = await h.a.post('/api/v1/status-pages/incidents', { name: 'API errors', serviceIds: [api], incidentUpdate: { description: 'Errors', status: 'INVESTIGATING' } });
    h.clock.advance(2 * 3_600_000);
    await h.a.post(`/api/v1/status-pages/incidents/${past.body.id}/updates`, { description: 'Fixed it', status: 'RESOLVED' });
    h.clock.advance(86_400_000);
    await h.a.post('/api/v1/status-pages/incidents', { name: 'Site down', serviceIds: [web], incidentUpdate: { description: 'Down', status: 'IDENTIFIED' } });
    await h.a.post('/api/v1/status-pages/incidents', { name: 'Db upgrade', serviceIds: [db], incidentUpdate: { description: 'Upgrading', status: 'MAINTENANCE' } });

    const byUrl = await anon().get('/s/acme');
    expect(byUrl.status).toBe(200);
    const byId = await anon().get(`/s/${page.body.id}`);
    expect(byId.status).toBe(200);
    const html = byUrl.text;
    expect(html).toContain('<html lang="en" data-theme="dark">');
    expect(html).toContain('--body-background-color:#101010');
    expect(html).toContain('Status of &lt;Acme&gt;');
    expect(html).toContain('data-overall="DISRUPTED"');
    expect(html).toMatch(new RegExp(`data-service="${api}" data-state="OPERATIONAL"`));
    expect(html).toMatch(new RegExp(`data-service="${web}" data-state="DISRUPTED"`));
    expect(html).toMatch(new RegExp(`data-service="${db}" data-state="MAINTENANCE"`));
    const apiBlock = html.slice(html.indexOf(`data-service="${api}"`));
    expect(apiBlock.slice(0, apiBlock.indexOf('</div>\n</div>')).match(/<span class="b-/g)).toHaveLength(90);
    // Two of the API's 98 observed hours were down: the day of the outage shows it, the bar's total too.
    expect(apiBlock).toMatch(/title="2026-05-04: 91\.67% uptime"/);
    expect(apiBlock).toMatch(/title="2026-05-01: 100% uptime"/);
    expect(apiBlock).toMatch(/title="2026-04-30: no data"/);
    expect(apiBlock).toMatch(/97\.959% uptime over 90 days/);
    // Active incidents above, past ones below; updates newest first.
    expect(html.indexOf('Site down')).toBeLessThan(html.indexOf('Past incidents'));
    expect(html.indexOf('Past incidents')).toBeLessThan(html.indexOf('API errors'));
    const pastBlock = html.slice(html.indexOf(`data-incident="${past.body.id}"`));
    expect(pastBlock.indexOf('Fixed it')).toBeLessThan(pastBlock.indexOf('Errors'));
    expect(html).toContain('Powered by Vigil');
  });

  it('AUTO follows the viewer; whiteLabel drops the footer line; a private page opens only to the host\'s viewers', async () => {
    h = await pagesHarness({ authorize: (req, p) => p.kind === 'status-page' && req.get('x-host-session') === 'ok' });
    await h.a.post('/api/v1/status-pages', { name: 'Auto', url: 'auto', whiteLabel: true });
    const auto = await anon().get('/s/auto');
    expect(auto.text).toContain('<html lang="en">');
    expect(auto.text).toContain('@media (prefers-color-scheme:dark)');
    expect(auto.text).not.toContain('Powered by Vigil');
    await h.a.post('/api/v1/status-pages', { name: 'Hidden corp', url: 'hidden', isPrivate: true });
    const denied = await anon().get('/s/hidden');
    expect(denied.status).toBe(401);
    expect(denied.text).not.toContain('Hidden corp');
    expect((await anon().get('/s/hidden').set('x-host-session', 'ok')).status).toBe(200);
  });

  it('never show another account\'s incidents on a page', async () => {
    h = await pagesHarness();
    const mine = await service('Mine');
    await h.a.post('/api/v1/status-pages', { name: 'A', url: 'a-page', cards: [{ name: 'C', serviceIds: [mine] }] });
    const theirs = await h.b.post('/api/v1/status-pages/services', { name: 'Theirs' });
    await h.b.post('/api/v1/status-pages/incidents', { name: 'B private outage', serviceIds: [theirs.body.id], incidentUpdate: { description: 'x' } });
    const page = await anon().get('/s/a-page');
    expect(page.text).not.toContain('B private outage');
    expect(page.text).toContain('data-overall="OPERATIONAL"');
  });
});

describe('badges', () => {
  it('show a check\'s and a group\'s state or response time as SVG, without names', async () => {
    h = await pagesHarness();
    const [failing, passing] = await seedChecks(h, ['FAILING', 'PASSING'], (i) => `named-${i}`);
    // Until a public dashboard shows a check, its badge is not served.
    expect((await svg(`/badges/checks/${passing!.id}`)).status).toBe(404);
    await dashboard({ header: 'Private', customUrl: 'private', isPrivate: true });
    expect((await svg(`/badges/checks/${passing!.id}`)).status).toBe(404);
    await dashboard({ header: 'Public', customUrl: 'public', tags: ['web'] });
    const check = await svg(`/badges/checks/${passing!.id}`);
    expect(check.status).toBe(200);
    expect(check.type).toMatch(/^image\/svg\+xml/);
    expect(check.text).toMatch(/^<svg/);
    expect(check.text).toContain('passing');
    expect(check.text).not.toContain('named-');
    expect((await svg(`/badges/checks/${failing!.id}.svg`)).text).toContain('failing');
    const avg = Math.round(passing!.times.reduce((a, b) => a + b, 0) / passing!.times.length);
    expect((await svg(`/badges/checks/${passing!.id}?responseTime=true`)).text).toContain(`${avg} ms`);
    const groups = await h.a.get('/api/v1/check-groups');
    const groupId = groups.body[0].id;
    // The group holds only the failing check.
    expect((await svg(`/badges/groups/${groupId}`)).text).toContain('failing');
    for (const path of ['/badges/checks/nope', '/badges/groups/999999', '/badges/groups/abc', '/badges/groups/99999999999999999999']) {
      const res = await svg(path);
      expect(res.status, path).toBe(404);
      expect(res.text).toContain('not found');
    }
  });

  it('of a group serve only the checks a public dashboard shows, so another account\'s ids reveal nothing', async () => {
    h = await pagesHarness();
    await seedChecks(h, ['FAILING', 'PASSING']);
    const mine = (await h.a.get('/api/v1/check-groups')).body[0].id;
    const theirs = await h.b.post('/api/v2/check-groups', { name: 'B group' });
    expect((await svg(`/badges/groups/${mine}`)).status).toBe(404);
    expect((await svg(`/badges/groups/${theirs.body.id}`)).status).toBe(404);
    // A dashboard of the tag `api` shows check 1 (passing) only; the group's failing check 0 stays hidden.
    await dashboard({ header: 'Api', customUrl: 'api-board', tags: ['api'] });
    expect((await svg(`/badges/groups/${mine}`)).status).toBe(404);
    await dashboard({ header: 'Grouped', customUrl: 'grouped', tags: ['grouped'] });
    expect((await svg(`/badges/groups/${mine}`)).text).toContain('failing');
  });

  it('can be turned off', async () => {
    h = await pagesHarness({ badges: false });
    const [c] = await seedChecks(h, ['PASSING']);
    await dashboard({ header: 'Public', customUrl: 'public' });
    expect((await anon().get(`/badges/checks/${c!.id}`)).status).toBe(404);
  });
});
