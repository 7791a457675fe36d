import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { smtpMailer } from '@vigil/alert-channels';
import type { StatusPageSubscriptionOptions } from '@vigil/core';
import { vigilPages } from '@vigil/http-express-adapter';
import { SmtpSink, type Mail } from '../packages/alert-channels/test/support/smtp.js';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from '../packages/http-express-adapter/test/support/harness.js';

// Email subscriptions to status pages, through the public pages and the API, on SQLite and
// PostgreSQL, with the emails sent to a real SMTP server on 127.0.0.1.

const PUBLIC_URL = 'https://status.example.com/status';

let smtp: SmtpSink;
let h: ApiHarness;
beforeAll(async () => {
  smtp = await SmtpSink.start();
});
afterEach(async () => {
  await h?.close();
  smtp.mails.length = 0;
  smtp.refuse.clear();
  smtp.defer.clear();
});
afterAll(async () => {
  await smtp.close();
  await dropPostgresSchema();
});

/**
 * The API and the pages (at /status) on `backend`, with subscriptions on (`subscriptions` adds
 * their options) or off (`false`), and the pages' subscription rate limit.
 */
async function harness(
  backend: 'sqlite' | 'postgres',
  subscriptions: Omit<StatusPageSubscriptionOptions, 'publicUrl'> | false = {},
  subscribeRateLimit = 1_000,
): Promise<ApiHarness> {
  h = await apiHarness(backend, {}, subscriptions
    ? {
      subscriberMailer: smtpMailer({ smtp: { host: '127.0.0.1', port: smtp.port }, from: 'status@example.com' }),
      statusPageSubscriptions: { ...subscriptions, publicUrl: PUBLIC_URL },
      alerts: { backoffBaseMs: 1_000 },
    }
    : {});
  h.app.use('/status', vigilPages(h.vigil, { subscribeRateLimit }));
  return h;
}

const anon = () => request(h.app);

/** The emails the outbox holds, sent now; answers those that reached the server. */
async function deliver(): Promise<Mail[]> {
  const before = smtp.mails.length;
  while ((await h.vigil.alerts.drain()) > 0);
  return smtp.mails.slice(before);
}

/** A header of an email as it was sent (mailparser folds the List-* headers into one object). */
const rawHeader = (mail: Mail, name: string) =>
  mail.parsed.headerLines.find((l) => l.key === name.toLowerCase())?.line.slice(name.length + 1).replace(/\r?\n\s+/g, ' ').trim();

/** The path (under the host) of a link in an email. */
function linkIn(text: string, action: 'confirm' | 'unsubscribe'): string {
  const match = text.match(new RegExp(`${PUBLIC_URL.replace(/[./]/g, '\\$&')}(/s/[^\\s/]+/subscription/${action}\\?token=[A-Za-z0-9_-]+)`));
  expect(match, text).not.toBeNull();
  return `/status${match![1]}`;
}

/** A page showing the service "Web", and a service "Other" it does not show. */
async function page(client = h.a, url = 'acme', name = 'Acme') {
  const web = (await client.post('/api/v1/status-pages/services', { name: 'Web' })).body.id as string;
  const other = (await client.post('/api/v1/status-pages/services', { name: 'Other' })).body.id as string;
  const res = await client.post('/api/v1/status-pages', { name, url, cards: [{ name: 'Site', serviceIds: [web] }] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as string, url, web, other };
}

const subscribe = (url: string, email: unknown) => anon().post(`/status/s/${url}/subscribe`).type('form').send({ email });

/** Presses the button behind a link of an email (a GET of the link only asks). */
function press(link: string): request.Test {
  const token = new URL(link, 'http://x').searchParams.get('token')!;
  return anon().post(link.split('?')[0]!).type('form').send({ token });
}

async function confirmed(url: string, email: string): Promise<void> {
  expect((await subscribe(url, email)).status).toBe(202);
  const [mail] = await deliver();
  expect((await press(linkIn(mail!.parsed.text ?? '', 'confirm'))).status).toBe(200);
}

const incident = (serviceIds: string[], notifySubscribers: boolean, description = 'Checkout answers 502') =>
  h.a.post('/api/v1/status-pages/incidents', { name: 'Checkout errors', serviceIds, incidentUpdate: { description, status: 'INVESTIGATING', notifySubscribers } });

describe.each(BACKENDS)('status-page subscriptions on %s', (backend) => {
  it('offers a form, emails a confirmation link, and sends updates only once the address is confirmed', async () => {
    await harness(backend);
    const p = await page();
    const html = (await anon().get('/status/s/acme')).text;
    expect(html).toContain('action="/status/s/acme/subscribe"');
    expect(html).toContain('name="email"');

    const res = await subscribe('acme', '  Ana@Example.com ');
    expect(res.status).toBe(202);
    expect(res.text).toContain('Check your inbox');
    const [confirmation, ...more] = await deliver();
    expect(more).toEqual([]);
    expect(confirmation!.to).toEqual(['ana@example.com']);
    expect(confirmation!.from).toBe('status@example.com');
    expect(confirmation!.parsed.subject).toBe('Confirm your subscription to Acme');

    // Not confirmed yet: an update that notifies subscribers sends nothing to the address.
    expect((await incident([p.web], true)).status).toBe(201);
    expect(await deliver()).toEqual([]);

    const confirm = linkIn(confirmation!.parsed.text ?? '', 'confirm');
    // Opening the link (as a mail scanner does) only asks; the button confirms.
    const asked = await anon().get(confirm);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('method="post"');
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.entries[0].confirmed).toBe(false);
    const done = await press(confirm);
    expect(done.status).toBe(200);
    expect(done.text).toContain('Subscribed');
    // A second press is fine too.
    expect((await press(confirm)).status).toBe(200);

    const created = await incident([p.web], true);
    const [update, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(update!.to).toEqual(['ana@example.com']);
    expect(update!.parsed.subject).toBe('[Acme] Checkout errors: Investigating');
    expect(update!.parsed.text).toContain('Checkout answers 502');
    expect(update!.parsed.text).toContain('Affected: Web');
    expect(update!.parsed.text).toContain(`${PUBLIC_URL}/s/acme`);
    expect(rawHeader(update!, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(rawHeader(update!, 'List-Unsubscribe')).toBe(`<${PUBLIC_URL}${linkIn(update!.parsed.text ?? '', 'unsubscribe').slice('/status'.length)}>`);

    // A later update of the same incident, written with notifySubscribers, is sent too.
    await h.a.post(`/api/v1/status-pages/incidents/${created.body.id}/updates`, { description: 'Fixed', status: 'RESOLVED', notifySubscribers: true });
    const [resolved] = await deliver();
    expect(resolved!.parsed.subject).toBe('[Acme] Checkout errors: Resolved');
  });

  it('sends nothing for an update without notifySubscribers, or about a service the page does not show', async () => {
    await harness(backend);
    const p = await page();
    await confirmed('acme', 'ana@example.com');
    await incident([p.web], false);
    await incident([p.other], true);
    expect(await deliver()).toEqual([]);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
  });

  it('unsubscribes by the link (a page with a button) and by one-click List-Unsubscribe; no email follows', async () => {
    await harness(backend);
    const p = await page();
    await confirmed('acme', 'ana@example.com');
    await confirmed('acme', 'bo@example.com');
    await incident([p.web], true);
    const mails = await deliver();
    expect(mails.map((m) => m.to[0]).sort()).toEqual(['ana@example.com', 'bo@example.com']);
    const ana = mails.find((m) => m.to[0] === 'ana@example.com')!;
    const bo = mails.find((m) => m.to[0] === 'bo@example.com')!;

    // Ana follows the link: the page asks first (scanners open links), the button unsubscribes.
    const link = linkIn(ana.parsed.text ?? '', 'unsubscribe');
    const asked = await anon().get(link);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('method="post"');
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(2);
    const gone = await press(link);
    expect(gone.status).toBe(200);
    expect(gone.text).toContain('Unsubscribed');

    // Bo's mail client unsubscribes in one click (RFC 8058).
    const header = rawHeader(bo, 'List-Unsubscribe') ?? '';
    const oneClick = `/status${header.replace(/^<|>$/g, '').slice(PUBLIC_URL.length)}`;
    const res = await anon().post(oneClick).type('form').send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);

    await incident([p.web], true);
    expect(await deliver()).toEqual([]);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body).toEqual({ length: 0, entries: [], nextId: null });
    // The link works once.
    expect((await anon().post(oneClick).type('form').send('List-Unsubscribe=One-Click')).status).toBe(404);
  });

  it('refuses what is not an email address and stores nothing; tells nobody whether an address subscribed already', async () => {
    await harness(backend);
    const p = await page();
    for (const email of ['', 'not-an-address', 'a@b', `${'x'.repeat(250)}@example.com`, ['a@example.com', 'b@example.com']]) {
      const res = await subscribe('acme', email);
      expect(res.status, String(email)).toBe(400);
      expect(res.text).toContain('not an email address');
    }
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(0);

    await confirmed('acme', 'ana@example.com');
    const again = await subscribe('acme', 'ana@example.com');
    expect(again.status).toBe(202);
    expect(again.text).toContain('Check your inbox');
    expect(await deliver()).toEqual([]);
  });

  it('limits confirmations: one an hour and three in all per page, five pending pages per address; the newest link is the one that works', async () => {
    await harness(backend);
    await page();
    await subscribe('acme', 'ana@example.com');
    const [first] = await deliver();
    await subscribe('acme', 'ana@example.com');
    expect(await deliver()).toEqual([]);
    h.clock.advance(3_600_000);
    await subscribe('acme', 'ana@example.com');
    const [second] = await deliver();
    expect(second!.to).toEqual(['ana@example.com']);
    expect((await press(linkIn(first!.parsed.text ?? '', 'confirm'))).status).toBe(404);
    h.clock.advance(3_600_000);
    await subscribe('acme', 'ana@example.com');
    expect(await deliver()).toHaveLength(1);
    h.clock.advance(3_600_000);
    const fourth = await subscribe('acme', 'ana@example.com');
    expect(fourth.status).toBe(202);
    expect(await deliver()).toEqual([]);

    // Other pages, of either account: five unconfirmed pages in 48 hours, then no new one.
    for (const [client, url] of [[h.a, 'p2'], [h.a, 'p3'], [h.b, 'p4'], [h.b, 'p5'], [h.b, 'p6']] as const) await page(client, url, url.toUpperCase());
    for (const url of ['p2', 'p3', 'p4', 'p5', 'p6']) expect((await subscribe(url, 'ana@example.com')).status).toBe(202);
    // (Sent at once, they may arrive in any order.)
    expect((await deliver()).map((m) => m.parsed.subject).sort()).toEqual(['P2', 'P3', 'P4', 'P5'].map((n) => `Confirm your subscription to ${n}`));
    // One of the five may still be sent its next confirmation.
    h.clock.advance(3_600_000);
    await subscribe('p2', 'ana@example.com');
    await subscribe('p6', 'ana@example.com');
    const [again, ...none] = await deliver();
    expect(none).toEqual([]);
    expect(again!.parsed.subject).toBe('Confirm your subscription to P2');
    // Unconfirmed subscriptions lapse 48 hours after their last email: the link stops working,
    // and the address may ask again.
    h.clock.advance(48 * 3_600_000);
    expect((await press(linkIn(again!.parsed.text ?? '', 'confirm'))).status).toBe(404);
    await subscribe('acme', 'ana@example.com');
    const [fresh] = await deliver();
    expect((await press(linkIn(fresh!.parsed.text ?? '', 'confirm'))).status).toBe(200);
  });

  it('queues ids, not emails: a confirmation replaced before it went out is not sent, and the outbox holds no address or token', async () => {
    await harness(backend);
    await page();
    smtp.defer.add('ana@example.com');
    await subscribe('acme', 'ana@example.com');
    expect(await deliver()).toEqual([]);
    const [waiting] = await h.vigil.storage.outbox.pending();
    expect(JSON.stringify(waiting!.payload)).not.toContain('example.com');
    expect(Object.keys(waiting!.payload).sort()).toEqual(['kind', 'subscriberId', 'tokenHash']);
    smtp.defer.clear();
    h.clock.advance(3_600_000);
    await subscribe('acme', 'ana@example.com');
    const mails = await deliver();
    expect(mails).toHaveLength(1);
    expect((await press(linkIn(mails[0]!.parsed.text ?? '', 'confirm'))).status).toBe(200);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
  });

  it('takes no subscribers on a private page, emails none when a page turns private, and unsubscribes by the token alone', async () => {
    await harness(backend);
    const p = await page();
    await confirmed('acme', 'ana@example.com');
    await h.a.post('/api/v1/status-pages', { name: 'Internal', url: 'internal', isPrivate: true });
    expect((await subscribe('internal', 'bo@example.com')).status).toBe(404);

    await incident([p.web], true);
    const [mail] = await deliver();
    expect((await h.a.put(`/api/v1/status-pages/${p.id}`, { isPrivate: true })).status).toBe(200);
    await incident([p.web], true);
    expect(await deliver()).toEqual([]);
    expect((await anon().get('/status/s/acme')).status).toBe(401);
    // The pages behind the links do not name a private page to whoever opens them.
    expect((await anon().get(`/status/s/${p.id}/subscription/unsubscribe`)).text).not.toContain('Acme');
    // A mail client's one-click unsubscribe carries no session: the token is enough.
    const oneClick = `/status${(rawHeader(mail!, 'List-Unsubscribe') ?? '').replace(/^<|>$/g, '').slice(PUBLIC_URL.length)}`;
    expect((await anon().post(oneClick).type('form').send('List-Unsubscribe=One-Click')).status).toBe(200);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(0);
  });

  it('answers a full page as any other, storing and sending nothing', async () => {
    await harness(backend, { maxPerPage: 1 });
    const p = await page();
    await subscribe('acme', 'ana@example.com');
    const full = await subscribe('acme', 'bo@example.com');
    expect(full.status).toBe(202);
    expect(full.text).toContain('Check your inbox');
    expect((await deliver()).map((m) => m.to[0])).toEqual(['ana@example.com']);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(1);
  });

  it('keeps one account\'s subscribers from another: the API, links of another page, and a deleted page', async () => {
    await harness(backend);
    const p = await page();
    const theirs = await page(h.b, 'bravo');
    await confirmed('acme', 'ana@example.com');
    const list = await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`);
    expect(list.status).toBe(200);
    expect(list.body.entries).toEqual([expect.objectContaining({ statusPageId: p.id, email: 'ana@example.com', confirmed: true })]);
    expect(Object.keys(list.body.entries[0]).sort()).toEqual(['confirmationSentAt', 'confirmationsSent', 'confirmed', 'confirmedAt', 'created_at', 'email', 'id', 'statusPageId', 'updated_at']);
    const id = list.body.entries[0].id as string;
    expect((await h.b.get(`/api/v1/status-pages/${p.id}/subscribers`)).status).toBe(404);
    expect((await h.b.delete(`/api/v1/status-pages/${p.id}/subscribers/${id}`)).status).toBe(404);
    expect((await h.b.delete(`/api/v1/status-pages/${theirs.id}/subscribers/${id}`)).status).toBe(404);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers?limit=0`)).status).toBe(400);

    // A token of one page does nothing on another.
    await incident([p.web], true);
    const [mail] = await deliver();
    const link = linkIn(mail!.parsed.text ?? '', 'unsubscribe');
    expect(link).toContain(`/s/${p.id}/subscription/`);
    expect((await press(link.replace(`/s/${p.id}/`, '/s/bravo/'))).status).toBe(404);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(1);

    expect((await h.a.delete(`/api/v1/status-pages/${p.id}/subscribers/${id}`)).status).toBe(204);
    expect((await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.length).toBe(0);

    await confirmed('acme', 'bo@example.com');
    expect((await h.a.delete(`/api/v1/status-pages/${p.id}`)).status).toBe(204);
    expect(await h.vigil.storage.statusPageSubscribers.countByPage(h.a.accountId, p.id)).toBe(0);
  });

  it('retries an email the mail server deferred, and drops one whose subscriber left meanwhile', async () => {
    await harness(backend);
    const p = await page();
    await confirmed('acme', 'ana@example.com');
    await confirmed('acme', 'bo@example.com');
    smtp.defer.add('ana@example.com');
    await incident([p.web], true);
    expect((await deliver()).map((m) => m.to[0])).toEqual(['bo@example.com']);
    const [waiting] = await h.vigil.storage.outbox.pending();
    expect(waiting).toMatchObject({ alertType: 'STATUS_PAGE_MAIL', attempts: 1 });
    expect(waiting!.lastError).toMatch(/^SMTP 451/);
    expect(waiting!.lastError).not.toContain('ana@example.com');
    smtp.defer.clear();
    h.clock.advance(2_000);
    expect((await deliver()).map((m) => m.to[0])).toEqual(['ana@example.com']);

    // Bo leaves before his email goes out: it is dropped, not sent.
    smtp.defer.add('bo@example.com');
    await incident([p.web], true);
    await deliver();
    const list = (await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.entries as { id: string; email: string }[];
    await h.a.delete(`/api/v1/status-pages/${p.id}/subscribers/${list.find((s) => s.email === 'bo@example.com')!.id}`);
    smtp.defer.clear();
    h.clock.advance(2_000);
    expect(await deliver()).toEqual([]);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
  });

  it('drops an email the mail server refused for good (5xx) at once, and the unconfirmed address with it', async () => {
    await harness(backend);
    const p = await page();
    await confirmed('acme', 'ana@example.com');
    smtp.refuse.add('ana@example.com');
    smtp.refuse.add('nobody@example.com');
    await incident([p.web], true);
    await subscribe('acme', 'nobody@example.com');
    expect(await deliver()).toEqual([]);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
    const left = (await h.a.get(`/api/v1/status-pages/${p.id}/subscribers`)).body.entries as { email: string }[];
    expect(left.map((s) => s.email)).toEqual(['ana@example.com']);
    const attempts = await h.vigil.storage.outbox.listAttempts(h.a.accountId, 0, 10);
    expect(attempts.map((a) => a.ok)).toEqual([false, false, true]);
    expect(attempts[0]!.detail).toMatch(/^Refused for good, dropped: SMTP 550/);
    expect(JSON.stringify(attempts)).not.toContain('nobody@example.com');
  });

  it('escapes what accounts and visitors write: in the emails, and in the pages behind the links', async () => {
    await harness(backend);
    const p = await page(h.a, 'acme', 'Acme <b>"bold"</b>');
    await confirmed('acme', 'ana@example.com');
    await incident([p.web], true, 'Broken <script>alert(1)</script> & "quoted"');
    const [mail] = await deliver();
    expect(mail!.parsed.subject).toBe('[Acme <b>"bold"</b>] Checkout errors: Investigating');
    const body = String(mail!.parsed.html);
    expect(body).not.toContain('<script>');
    expect(body).not.toContain('<b>');
    expect(body).toContain('Broken &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;');
    expect(body).toContain('Acme &lt;b&gt;&quot;bold&quot;&lt;/b&gt;');
    for (const action of ['confirm', 'unsubscribe']) {
      const res = await anon().get(`/status/s/${p.id}/subscription/${action}?token=${encodeURIComponent('"><script>x()</script>')}`);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('<script>x()');
      expect(res.text).not.toContain('<b>"bold"');
    }
  });

  it('cuts a client address off after subscribeRateLimit requests an hour', async () => {
    await harness(backend, {}, 2);
    await page();
    expect((await subscribe('acme', 'a1@example.com')).status).toBe(202);
    expect((await subscribe('acme', 'a2@example.com')).status).toBe(202);
    const third = await subscribe('acme', 'a3@example.com');
    expect(third.status).toBe(429);
    expect((await deliver()).map((m) => m.to[0]).sort()).toEqual(['a1@example.com', 'a2@example.com']);
  });

  it('offers no form and takes no subscriber where the host set no public URL or mailer', async () => {
    await harness(backend, false);
    const p = await page();
    expect((await anon().get('/status/s/acme')).text).not.toContain('/subscribe');
    expect((await subscribe('acme', 'ana@example.com')).status).toBe(404);
    await incident([p.web], true);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
  });
});
