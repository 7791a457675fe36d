import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../packages/http-express-adapter/test/support/harness.js';
import { anon, confirmed, deliver, h, harness, incident, linkIn, page, press, smtp, subscribe, useSubscriptionServers } from './support/status-page-subscriptions.js';

// Status-page subscription emails as they go out through the outbox, on SQLite and PostgreSQL,
// to a real SMTP server on 127.0.0.1: ids queued, deferred and refused addresses, escaping.

useSubscriptionServers();

describe.each(BACKENDS)('status-page subscription emails on %s', (backend) => {
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
});
