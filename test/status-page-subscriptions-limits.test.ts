import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../packages/http-express-adapter/test/support/harness.js';
import { confirmed, deliver, h, harness, incident, linkIn, page, press, subscribe, useSubscriptionServers } from './support/status-page-subscriptions.js';

// Status-page subscriptions on SQLite and PostgreSQL: what keeps the form from flooding an inbox
// or filling a page, and what keeps one account's subscribers from another.

useSubscriptionServers();

describe.each(BACKENDS)('status-page subscription limits on %s', (backend) => {
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

  it('cuts a client address off after subscribeRateLimit requests an hour', async () => {
    await harness(backend, {}, 2);
    await page();
    expect((await subscribe('acme', 'a1@example.com')).status).toBe(202);
    expect((await subscribe('acme', 'a2@example.com')).status).toBe(202);
    const third = await subscribe('acme', 'a3@example.com');
    expect(third.status).toBe(429);
    expect((await deliver()).map((m) => m.to[0]).sort()).toEqual(['a1@example.com', 'a2@example.com']);
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
});
