import { createHash, randomBytes } from 'node:crypto';
import { ConflictError, RateLimitedError } from '../errors.js';
import { parse } from '../model/parse.js';
import type { CursorPage } from '../model/primitives.js';
import {
  StatusPageSubscribeSchema,
  StatusPageSubscriberListQuerySchema,
  type StatusPage,
  type StatusPageIncident,
  type StatusPageIncidentUpdate,
  type StatusPageSubscriber,
  type StatusPageSubscriberResponse,
} from '../model/status-page.js';
import type { OutboxMessage } from '../ports/storage.js';
import type { SubscriberMail, SubscriberMailer } from '../ports/subscriber-mailer.js';
import type { ServiceDeps } from './deps.js';
import { found, stringId } from './support.js';

/** The outbox's alertType of a subscriber's email (its alertChannelId is 0: no channel sends it). */
export const SUBSCRIBER_MAIL = 'STATUS_PAGE_MAIL';

export interface StatusPageSubscriptionOptions {
  /**
   * Where the host serves Vigil's pages router, as subscribers reach it: `https://status.example.com`
   * (with the path the router is mounted at, if any). Links in the emails start with it; without
   * it (or without a mailer) status pages take no subscribers.
   */
  publicUrl?: string;
  /** Most subscribers (confirmed or not) one page takes. Default 10,000. */
  maxPerPage?: number;
  /** The least time between two confirmation emails to one address. Default 15 minutes. */
  confirmationIntervalMs?: number;
}

const QUARTER_HOUR_MS = 15 * 60_000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();
const STATUS_WORDS: Record<string, string> = {
  INVESTIGATING: 'Investigating', IDENTIFIED: 'Identified', MONITORING: 'Monitoring', RESOLVED: 'Resolved', MAINTENANCE: 'Maintenance',
};

/** A subscriber as the page's account reads it: never its token. */
export function subscriberResponse(s: StatusPageSubscriber): StatusPageSubscriberResponse {
  const { accountId: _a, tokenHash: _t, tokenSealed: _s, ...rest } = s;
  return rest;
}

/**
 * Email subscriptions to status pages: a visitor subscribes on the public page, confirms the
 * address by a link (nothing else is sent to an unconfirmed address), and from then on receives
 * every incident update written with `notifySubscribers: true` for a service the page shows, each
 * email with a link (and a one-click List-Unsubscribe header) that ends the subscription. Emails
 * go through the alert outbox, so they are retried until the mail server takes them.
 */
export class StatusPageSubscriberService {
  private readonly publicUrl: string | null;
  private readonly maxPerPage: number;
  private readonly intervalMs: number;

  constructor(
    private readonly deps: ServiceDeps,
    options: StatusPageSubscriptionOptions = {},
    private readonly onQueued: () => void = () => {},
  ) {
    this.publicUrl = options.publicUrl ? options.publicUrl.replace(/\/+$/, '') : null;
    if (this.publicUrl !== null && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/i.test(this.publicUrl)) {
      throw new Error(`statusPageSubscriptions.publicUrl must be an http(s) URL without query or fragment, not ${options.publicUrl}`);
    }
    this.maxPerPage = options.maxPerPage ?? 10_000;
    this.intervalMs = options.confirmationIntervalMs ?? QUARTER_HOUR_MS;
  }

  private get storage() {
    return this.deps.storage;
  }

  private get mailer(): SubscriberMailer | null {
    return this.deps.subscriberMailer ?? null;
  }

  /** Whether pages take subscribers: a public URL for the links and a mailer to send them. */
  get enabled(): boolean {
    return this.publicUrl !== null && this.mailer !== null;
  }

  private pageUrl(page: StatusPage): string {
    return `${this.publicUrl}/s/${encodeURIComponent(page.url)}`;
  }

  /** A link with the subscriber's token; by the page's id, which stays when its url changes. */
  private link(page: StatusPage, action: 'confirm' | 'unsubscribe', token: string): string {
    return `${this.publicUrl}/s/${page.id}/subscription/${action}?token=${token}`;
  }

  /**
   * A visitor's subscription form. Answers nothing that tells whether the address was subscribed
   * already: a new or unconfirmed address gets a confirmation email (at most one per
   * `confirmationIntervalMs`), a confirmed one gets nothing.
   */
  async subscribe(page: StatusPage, body: unknown): Promise<void> {
    if (!this.enabled) throw new ConflictError('This status page takes no subscribers');
    const { email } = parse(StatusPageSubscribeSchema, body);
    const now = this.deps.clock.now();
    const existing = await this.storage.statusPageSubscribers.findByEmail(page.accountId, page.id, email);
    if (existing?.confirmed) return;
    if (existing?.confirmationSentAt && now.getTime() - Date.parse(existing.confirmationSentAt) < this.intervalMs) return;
    const token = randomBytes(32).toString('base64url');
    let subscriber: StatusPageSubscriber;
    if (existing) {
      // A new token: the link of an earlier confirmation email no longer works.
      subscriber = { ...existing, ...this.sealToken(token), confirmationSentAt: now.toISOString(), updated_at: now.toISOString() };
      const { accountId: _a, ...record } = subscriber;
      await this.storage.statusPageSubscribers.update(page.accountId, existing.id, record);
    } else {
      if ((await this.storage.statusPageSubscribers.countByPage(page.accountId, page.id)) >= this.maxPerPage) {
        throw new RateLimitedError(3600, 'This status page takes no more subscribers');
      }
      try {
        subscriber = await this.storage.statusPageSubscribers.insert(page.accountId, {
          id: this.deps.ids.uuid(), statusPageId: page.id, email, confirmed: false, ...this.sealToken(token),
          confirmationSentAt: now.toISOString(), confirmedAt: null, created_at: now.toISOString(), updated_at: null,
        });
      } catch (err) {
        // The same address, subscribing twice at once: the other request sends the email.
        if (err instanceof ConflictError || (err as { code?: string }).code === 'CONFLICT') return;
        throw err;
      }
    }
    await this.enqueue([{ subscriber, mail: this.confirmationMail(page, subscriber.email, token) }]);
  }

  /** A subscriber's token as stored: its hash to find it by, and sealed to put it in later emails. */
  private sealToken(token: string): { tokenHash: string; tokenSealed: string } {
    return { tokenHash: hashToken(token), tokenSealed: this.deps.secretBox.encrypt(token) };
  }

  /** The page and subscriber a link's token belongs to, or null (unknown, or of another page). */
  private async byToken(page: StatusPage, token: unknown): Promise<StatusPageSubscriber | null> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 100) return null;
    const subscriber = await this.storage.statusPageSubscribers.findByTokenHash(hashToken(token));
    return subscriber && subscriber.statusPageId === page.id && subscriber.accountId === page.accountId ? subscriber : null;
  }

  /** The link of a confirmation email. Answers whether the token was good (a second click is too). */
  async confirm(page: StatusPage, token: unknown): Promise<boolean> {
    const subscriber = await this.byToken(page, token);
    if (!subscriber) return false;
    if (subscriber.confirmed) return true;
    const now = this.deps.clock.now().toISOString();
    const { accountId: _a, ...record } = subscriber;
    await this.storage.statusPageSubscribers.update(page.accountId, subscriber.id, { ...record, confirmed: true, confirmedAt: now, updated_at: now });
    return true;
  }

  /** The unsubscribe link (or one-click unsubscribe): the subscriber is deleted. Answers whether the token was good. */
  async unsubscribe(page: StatusPage, token: unknown): Promise<boolean> {
    const subscriber = await this.byToken(page, token);
    if (!subscriber) return false;
    await this.storage.statusPageSubscribers.delete(page.accountId, subscriber.id);
    return true;
  }

  /** The subscribers of one of the account's pages, in the order they subscribed. */
  async list(accountId: string, rawPageId: unknown, rawQuery: unknown): Promise<CursorPage<StatusPageSubscriberResponse>> {
    const page = found(await this.storage.statusPages.get(accountId, stringId(rawPageId, 'statusPageId')), 'Status page');
    const q = parse(StatusPageSubscriberListQuerySchema, rawQuery ?? {}, 'query');
    const rows = await this.storage.statusPageSubscribers.listByPage(accountId, page.id, q.nextId ?? null, q.limit + 1);
    const entries = rows.slice(0, q.limit);
    return { length: entries.length, entries: entries.map(subscriberResponse), nextId: rows.length > q.limit ? entries.at(-1)!.id : null };
  }

  /** Removes a subscriber of one of the account's pages. */
  async remove(accountId: string, rawPageId: unknown, rawId: unknown): Promise<void> {
    const pageId = stringId(rawPageId, 'statusPageId');
    const subscriber = await this.storage.statusPageSubscribers.get(accountId, stringId(rawId, 'subscriberId'));
    found(subscriber && subscriber.statusPageId === pageId ? subscriber : null, 'Subscriber');
    await this.storage.statusPageSubscribers.delete(accountId, subscriber!.id);
  }

  /** Forgets the subscribers of a deleted page. */
  async forgetPage(accountId: string, statusPageId: string): Promise<void> {
    await this.storage.statusPageSubscribers.deleteByPage(accountId, statusPageId);
  }

  /**
   * An incident update was written: when it asks to notify subscribers, every confirmed
   * subscriber of every page showing one of the incident's services gets it once (a subscriber
   * of two such pages, twice: once per page, each with its own unsubscribe link).
   */
  async notify(accountId: string, incident: StatusPageIncident, update: StatusPageIncidentUpdate): Promise<number> {
    if (!update.notifySubscribers || !this.enabled) return 0;
    const serviceIds = new Set(incident.serviceIds);
    const services = await this.storage.services.listByIds(accountId, incident.serviceIds);
    let queued = 0;
    for (let offset = 0; ; offset += 100) {
      const pages = await this.storage.statusPages.list(accountId, { limit: 100, offset });
      for (const page of pages.items) {
        const shown = new Set(page.cards.flatMap((c) => c.serviceIds).filter((id) => serviceIds.has(id)));
        if (shown.size === 0) continue;
        const names = services.filter((s) => shown.has(s.id)).map((s) => s.name);
        for (let after: string | null = null; ;) {
          const batch = await this.storage.statusPageSubscribers.listByPage(accountId, page.id, after, 500);
          const mails = batch.filter((s) => s.confirmed).map((subscriber) => ({
            subscriber,
            // The subscriber's one token: the unsubscribe link of every email they got works.
            mail: this.updateMail(page, incident, update, names, subscriber.email, this.deps.secretBox.decrypt(subscriber.tokenSealed)),
          }));
          await this.enqueue(mails);
          queued += mails.length;
          if (batch.length < 500) break;
          after = batch.at(-1)!.id;
        }
      }
      if (offset + pages.items.length >= pages.total || pages.items.length === 0) break;
    }
    return queued;
  }

  private async enqueue(mails: { subscriber: StatusPageSubscriber; mail: SubscriberMail }[]): Promise<void> {
    if (mails.length === 0) return;
    const now = this.deps.clock.now().toISOString();
    await this.storage.outbox.enqueue(mails.map(({ subscriber, mail }) => ({
      id: this.deps.ids.uuid(),
      accountId: subscriber.accountId,
      // One subscriber's emails go out in order, each after the one before was taken.
      checkId: `subscriber:${subscriber.id}`,
      alertChannelId: 0,
      alertType: SUBSCRIBER_MAIL,
      payload: { subscriberId: subscriber.id, mail: mail as unknown as Record<string, unknown> },
      created_at: now,
      nextAttemptAt: now,
    })));
    this.onQueued();
  }

  /**
   * Sends a claimed subscriber email, unless the subscriber is gone (unsubscribed, or the page was
   * deleted): then it answers null and nothing is sent.
   */
  async deliver(m: OutboxMessage, signal: AbortSignal): Promise<{ providerId?: string | null; detail?: string | null } | null> {
    const subscriberId = typeof m.payload.subscriberId === 'string' ? m.payload.subscriberId : '';
    if (!(await this.storage.statusPageSubscribers.get(m.accountId, subscriberId))) return null;
    const mailer = this.mailer;
    if (!mailer) throw new Error('No subscriber mailer is registered in this process');
    return mailer.send(m.payload.mail as unknown as SubscriberMail, signal);
  }

  private confirmationMail(page: StatusPage, to: string, token: string): SubscriberMail {
    const name = oneLine(page.name);
    const confirm = this.link(page, 'confirm', token);
    const text = [
      `Somebody, we hope you, asked for email updates about incidents on the status page "${name}".`,
      '',
      `Confirm the subscription: ${confirm}`,
      '',
      'If it was not you, ignore this email: nothing more will be sent to this address.',
    ].join('\n');
    const body = [
      '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1b1b">',
      `<p>Somebody, we hope you, asked for email updates about incidents on the status page <strong>${html(name)}</strong>.</p>`,
      `<p><a href="${html(confirm)}">Confirm the subscription</a></p>`,
      '<p style="color:#6b6b6b;font-size:12px">If it was not you, ignore this email: nothing more will be sent to this address.</p>',
      '</body></html>',
    ].join('');
    return { to, subject: `Confirm your subscription to ${name}`, text, html: body, headers: { 'X-Vigil-Status-Page': page.id } };
  }

  private updateMail(page: StatusPage, incident: StatusPageIncident, update: StatusPageIncidentUpdate, services: string[], to: string, token: string): SubscriberMail {
    const name = oneLine(page.name);
    const status = STATUS_WORDS[update.status ?? 'INVESTIGATING'] ?? String(update.status);
    const unsubscribe = this.link(page, 'unsubscribe', token);
    const pageLink = this.pageUrl(page);
    const subject = `[${name}] ${oneLine(incident.name)}: ${status}`;
    const text = [
      `${oneLine(incident.name)}: ${status}`,
      '',
      update.description,
      '',
      ...(services.length ? [`Affected: ${services.join(', ')}`, ''] : []),
      `Status page: ${pageLink}`,
      '',
      `You get this because you subscribed to "${name}". Unsubscribe: ${unsubscribe}`,
    ].join('\n');
    const body = [
      '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1b1b">',
      `<h2 style="margin:0 0 8px">${html(oneLine(incident.name))}</h2>`,
      `<p style="margin:0 0 12px"><strong>${html(status)}</strong></p>`,
      `<p style="white-space:pre-wrap">${html(update.description)}</p>`,
      services.length ? `<p>Affected: ${html(services.join(', '))}</p>` : '',
      `<p><a href="${html(pageLink)}">Open the status page</a></p>`,
      `<p style="color:#6b6b6b;font-size:12px">You get this because you subscribed to ${html(name)}. <a href="${html(unsubscribe)}">Unsubscribe</a></p>`,
      '</body></html>',
    ].join('');
    return {
      to,
      subject,
      text,
      html: body,
      headers: {
        'List-Unsubscribe': `<${unsubscribe}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'X-Vigil-Status-Page': page.id,
        'X-Vigil-Incident-Id': incident.id,
      },
    };
  }
}
