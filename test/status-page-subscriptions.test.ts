import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../packages/http-express-adapter/test/support/harness.js';
import { anon, confirmed, deliver, h, harness, incident, linkIn, page, press, PUBLIC_URL, rawHeader, subscribe, useSubscriptionServers } from './support/status-page-subscriptions.js';

// Email subscriptions to status pages, through the public pages and the API, on SQLite and
// PostgreSQL, with the emails sent to a real SMTP server on 127.0.0.1: subscribing, confirming,
// the updates sent, and unsubscribing. (Limits and isolation: status-page-subscriptions-limits;
// the emails as they go out: status-page-subscriptions-delivery.)

useSubscriptionServers();

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

  it('offers no form and takes no subscriber where the host set no public URL or mailer', async () => {
    await harness(backend, false);
    const p = await page();
    expect((await anon().get('/status/s/acme')).text).not.toContain('/subscribe');
    expect((await subscribe('acme', 'ana@example.com')).status).toBe(404);
    await incident([p.web], true);
    expect(await h.vigil.storage.outbox.pending()).toEqual([]);
  });
});
