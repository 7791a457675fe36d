import { describe, expect, it } from 'vitest';
import { createVigil, type SubscriberMail, type SubscriberMailer, type Vigil, type VigilOptions, type VigilStorage } from '../src/index.js';
import { FakeClock, memoryStorage, statusPageSubscriberFixture } from '../src/testing/index.js';

// The subscription service and the outbox on the in-memory store: paging through many
// subscribers, and processes that can or cannot send. (The public pages, SMTP and both databases
// are in test/status-page-subscriptions.test.ts.)

const SECRET = 'c'.repeat(64);
const PUBLIC_URL = 'https://status.example.com/base';

/** A mailer that keeps what it is given, or fails with `failWith`. */
function recordingMailer(failWith: string | null = null): SubscriberMailer & { sent: SubscriberMail[] } {
  const sent: SubscriberMail[] = [];
  return {
    sent,
    async send(mail) {
      if (failWith) throw new Error(failWith.replace('$to', mail.to));
      sent.push(mail);
      return { detail: 'taken' };
    },
  };
}

function vigilOn(storage: VigilStorage, clock: FakeClock, options: Partial<VigilOptions>): Vigil {
  return createVigil({ storage, secretKey: SECRET, clock, ...options });
}

/** An account with a public page showing the service "Web". */
async function pageOf(vigil: Vigil) {
  const account = await vigil.accounts.ensure('acct');
  const web = await vigil.services.create(account.id, { name: 'Web' });
  const created = await vigil.statusPages.create(account.id, { name: 'Acme', url: 'acme', cards: [{ name: 'Site', serviceIds: [web.id] }] });
  const page = (await vigil.storage.statusPages.get(account.id, created.id))!;
  return { accountId: account.id, web: web.id, page };
}

const update = (vigil: Vigil, accountId: string, serviceId: string) =>
  vigil.statusPageIncidents.create(accountId, { name: 'Checkout errors', serviceIds: [serviceId], incidentUpdate: { description: 'Errors', notifySubscribers: true } });

async function drain(vigil: Vigil): Promise<void> {
  while ((await vigil.alerts.drain()) > 0);
}

describe('status-page subscriptions', () => {
  it('queue an update for every confirmed subscriber of a page, past one batch of the store, and none for an unconfirmed one', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const mailer = recordingMailer();
    const vigil = vigilOn(memoryStorage(), clock, { subscriberMailer: mailer, statusPageSubscriptions: { publicUrl: PUBLIC_URL } });
    const { accountId, web, page } = await pageOf(vigil);
    const sealed = vigil.deps.secretBox.encrypt('t'.repeat(43));
    for (let i = 0; i < 1_201; i++) {
      await vigil.storage.statusPageSubscribers.insert(accountId, statusPageSubscriberFixture({ statusPageId: page.id, email: `s${i}@example.com`, confirmed: i !== 7, tokenSealed: sealed }));
    }
    await update(vigil, accountId, web);
    const queued = await vigil.storage.outbox.pending(accountId);
    expect(queued).toHaveLength(1_200);
    expect(new Set(queued.map((m) => m.payload.subscriberId)).size).toBe(1_200);
    await drain(vigil);
    expect(mailer.sent).toHaveLength(1_200);
    expect(mailer.sent.map((m) => m.to)).not.toContain('s7@example.com');
    expect(mailer.sent[0]!.text).toContain(`${PUBLIC_URL}/s/${page.id}/subscription/unsubscribe?token=${'t'.repeat(43)}`);
    await vigil.close();
  });

  it('leave an email to a process that can send it: one without a mailer or publicUrl retries it, and drops nothing', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const storage = memoryStorage();
    const mailer = recordingMailer();
    const api = vigilOn(storage, clock, { statusPageSubscriptions: { publicUrl: PUBLIC_URL } });
    const noUrl = vigilOn(storage, clock, { subscriberMailer: recordingMailer(), alerts: { backoffBaseMs: 1_000 } });
    const sender = vigilOn(storage, clock, { subscriberMailer: mailer, statusPageSubscriptions: { publicUrl: PUBLIC_URL } });
    const { accountId, web, page } = await pageOf(api);
    // The API process shows no form (no mailer), but queues updates.
    expect(api.statusPageSubscribers.takesSubscribers(page)).toBe(false);
    await sender.statusPageSubscribers.subscribe(page, { email: 'ana@example.com' });
    await drain(sender);
    const token = /token=([\w-]+)/.exec(mailer.sent[0]!.text)![1];
    expect(await sender.statusPageSubscribers.confirm(page, token)).toBe(true);

    await update(api, accountId, web);
    await drain(noUrl);
    const [waiting] = await storage.outbox.pending(accountId);
    expect(waiting).toMatchObject({ attempts: 1, lastError: 'This process has no subscriber mailer or no statusPageSubscriptions.publicUrl' });
    clock.advance(1_000);
    await drain(sender);
    expect(mailer.sent.map((m) => m.subject)).toEqual(['Confirm your subscription to Acme', '[Acme] Checkout errors: Investigating']);
    expect(await storage.outbox.pending(accountId)).toEqual([]);
    for (const v of [api, noUrl, sender]) await v.stop();
  });

  it('keep the address out of a mail server\'s refusal, and log an email with nothing left to send as dropped', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const storage = memoryStorage();
    const refusing = vigilOn(storage, clock, { subscriberMailer: recordingMailer('550 5.1.1 <$to>: mailbox unavailable'), statusPageSubscriptions: { publicUrl: PUBLIC_URL } });
    const { accountId, page } = await pageOf(refusing);
    await refusing.statusPageSubscribers.subscribe(page, { email: 'ana@example.com' });
    await drain(refusing);
    const [waiting] = await storage.outbox.pending(accountId);
    expect(waiting!.lastError).toBe('550 5.1.1 <<subscriber>>: mailbox unavailable');
    expect(JSON.stringify(await storage.raw.dump('delivery_attempts'))).not.toContain('ana@example.com');

    const [subscriber] = await storage.statusPageSubscribers.listByPage(accountId, page.id, null, 10);
    await storage.statusPageSubscribers.delete(accountId, subscriber!.id);
    clock.advance(3_600_000);
    await drain(refusing);
    expect(await storage.outbox.pending(accountId)).toEqual([]);
    const [last] = await storage.outbox.listAttempts(accountId, 0, 1);
    expect(last).toMatchObject({ ok: false, detail: expect.stringMatching(/^Nothing to send any more/) });
    await refusing.close();
  });

  it('send one account\'s pages at most maxConfirmationsPerAccountHour confirmations an hour', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const mailer = recordingMailer();
    const vigil = vigilOn(memoryStorage(), clock, { subscriberMailer: mailer, statusPageSubscriptions: { publicUrl: PUBLIC_URL, maxConfirmationsPerAccountHour: 2 } });
    const { page } = await pageOf(vigil);
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) await vigil.statusPageSubscribers.subscribe(page, { email });
    await drain(vigil);
    expect(mailer.sent.map((m) => m.to)).toEqual(['a@example.com', 'b@example.com']);
    clock.advance(3_600_001);
    await vigil.statusPageSubscribers.subscribe(page, { email: 'c@example.com' });
    await drain(vigil);
    expect(mailer.sent.map((m) => m.to)).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
    await vigil.close();
  });

  it('take a public URL only as an http(s) address without query, fragment, credentials or control characters', () => {
    const build = (publicUrl: string) => createVigil({ storage: memoryStorage(), secretKey: SECRET, statusPageSubscriptions: { publicUrl } }).statusPageSubscribers;
    for (const bad of ['https://x.example\r\nBcc: a@b.c', 'ftp://x.example', 'https://x.example/?q=1', 'https://x.example/#f', 'https://u:p@x.example', 'x.example', 'https://x.example/a b']) {
      expect(() => build(bad), bad).toThrow(/statusPageSubscriptions.publicUrl must be an http\(s\) URL/);
    }
    expect(build('https://status.example.com/base/').queueing).toBe(true);
  });
});
