import { createHash, randomBytes } from 'node:crypto';
import { ConflictError } from '../errors.js';
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
   * it status pages take no subscribers. Give it to every process that writes incident updates
   * (the API's and the engine's): the emails are queued where the update is written, and sent by
   * whichever process has a mailer.
   */
  publicUrl?: string;
  /** Most subscribers (confirmed or not) one page takes. Default 10,000. */
  maxPerPage?: number;
  /** The least time between two confirmation emails for one page to one address. Default 1 hour. */
  confirmationIntervalMs?: number;
  /**
   * Most confirmation emails one account's pages send in an hour (their names are the account's
   * words, sent from the host's mail server). Default 200.
   */
  maxConfirmationsPerAccountHour?: number;
}

const HOUR_MS = 3_600_000;
/** Confirmation emails for one page to one address, before the address must wait for the unconfirmed row to expire. */
const MAX_CONFIRMATIONS_PER_PAGE = 3;
/** Unconfirmed subscriptions (on any pages) an address may have had confirmations for in PENDING_MS. */
const MAX_PENDING_PER_ADDRESS = 5;
/** How long an unconfirmed subscription is kept after its last confirmation email. */
const PENDING_MS = 48 * HOUR_MS;

type MailKind = 'confirm' | 'update';
interface MailPayload {
  subscriberId: string;
  kind: MailKind;
  /** A confirmation: the token it was queued with (a newer request replaces it, and this email is dropped). */
  tokenHash?: string;
  incidentId?: string;
  updateId?: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();
const STATUS_WORDS: Record<string, string> = {
  INVESTIGATING: 'Investigating', IDENTIFIED: 'Identified', MONITORING: 'Monitoring', RESOLVED: 'Resolved', MAINTENANCE: 'Maintenance',
};

/** The host's public URL as links start with it: http(s), no query, fragment, space or control character. */
function publicUrlOf(given: string): string {
  let url: URL | null = null;
  try {
    url = new URL(given);
  } catch {
    url = null;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password || /[\s\u0000-\u001f\u007f<>"]/.test(given)) {
    throw new Error(`statusPageSubscriptions.publicUrl must be an http(s) URL without query, fragment or credentials, not ${JSON.stringify(given)}`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** A subscriber as the page's account reads it: never its token. */
export function subscriberResponse(s: StatusPageSubscriber): StatusPageSubscriberResponse {
  const { accountId: _a, tokenHash: _t, tokenSealed: _s, ...rest } = s;
  return rest;
}

/**
 * Email subscriptions to public status pages: a visitor subscribes on the page, confirms the
 * address by a link (nothing else is sent to an unconfirmed address), and from then on receives
 * every incident update written with `notifySubscribers: true` for a service the page shows, each
 * email with a link (and a one-click List-Unsubscribe header) that ends the subscription. Emails
 * go through the alert outbox, which holds only ids: each is rendered when it is sent, from what
 * is stored then, so a stale link or an address that left is never sent.
 */
export class StatusPageSubscriberService {
  private readonly publicUrl: string | null;
  private readonly maxPerPage: number;
  private readonly intervalMs: number;
  private readonly perAccountHour: number;

  constructor(
    private readonly deps: ServiceDeps,
    options: StatusPageSubscriptionOptions = {},
    private readonly onQueued: () => void = () => {},
  ) {
    this.publicUrl = options.publicUrl ? publicUrlOf(options.publicUrl) : null;
    this.maxPerPage = options.maxPerPage ?? 10_000;
    this.intervalMs = options.confirmationIntervalMs ?? HOUR_MS;
    this.perAccountHour = options.maxConfirmationsPerAccountHour ?? 200;
  }

  private get storage() {
    return this.deps.storage;
  }

  private get mailer(): SubscriberMailer | null {
    return this.deps.subscriberMailer ?? null;
  }

  /** Whether incident updates are queued for subscribers: the host gave the public URL of the links. */
  get queueing(): boolean {
    return this.publicUrl !== null;
  }

  /** Whether this process offers the subscription form: the links' URL, and a mailer to send the confirmation. */
  get enabled(): boolean {
    return this.publicUrl !== null && this.mailer !== null;
  }

  /** Whether a page takes subscribers: a public one, where subscriptions are on. */
  takesSubscribers(page: StatusPage): boolean {
    return this.enabled && !page.isPrivate;
  }

  private pageUrl(page: StatusPage): string {
    return `${this.publicUrl}/s/${encodeURIComponent(page.url)}`;
  }

  /** A link with the subscriber's token; by the page's id, which stays when its url changes. */
  private link(page: StatusPage, action: 'confirm' | 'unsubscribe', token: string): string {
    return `${this.publicUrl}/s/${page.id}/subscription/${action}?token=${token}`;
  }

  /**
   * A visitor's subscription form. Whatever happens, the visitor is told the same (check your
   * inbox), so nobody learns whether an address subscribed already. A new or unconfirmed address
   * gets a confirmation email, within limits that keep the form from being used to flood an
   * inbox: for one page, one an hour (`confirmationIntervalMs`) and three while it stays
   * unconfirmed; and an address has at most five unconfirmed subscriptions (any pages) whose last
   * email is under 48 hours old. Those lapse 48 hours after their last email and are removed when
   * the page is next subscribed to or listed; a page holds at most `maxPerPage` subscribers, and
   * one account's pages send at most `maxConfirmationsPerAccountHour` confirmations an hour.
   */
  async subscribe(page: StatusPage, body: unknown): Promise<void> {
    if (!this.takesSubscribers(page)) throw new ConflictError('This status page takes no subscribers');
    const { email } = parse(StatusPageSubscribeSchema, body);
    const now = this.deps.clock.now();
    const subscribers = this.storage.statusPageSubscribers;
    await subscribers.deletePending(page.accountId, page.id, new Date(now.getTime() - PENDING_MS).toISOString());
    const existing = await subscribers.findByEmail(page.accountId, page.id, email);
    if (existing?.confirmed) return;
    if (existing && (existing.confirmationsSent >= MAX_CONFIRMATIONS_PER_PAGE
      || (existing.confirmationSentAt && now.getTime() - Date.parse(existing.confirmationSentAt) < this.intervalMs))) return;
    if ((await subscribers.countPendingByEmail(email, new Date(now.getTime() - PENDING_MS).toISOString())) >= MAX_PENDING_PER_ADDRESS + (existing ? 1 : 0)) {
      this.deps.logger.warn('status pages: an address asked for more subscriptions than it may have pending; no email sent', { accountId: page.accountId, statusPageId: page.id });
      return;
    }
    if ((await subscribers.countPendingByAccount(page.accountId, new Date(now.getTime() - HOUR_MS).toISOString())) >= this.perAccountHour) {
      this.deps.logger.warn('status pages: an account\'s pages sent their hourly most of confirmation emails; no email sent', { accountId: page.accountId, statusPageId: page.id, maxConfirmationsPerAccountHour: this.perAccountHour });
      return;
    }
    const token = randomBytes(32).toString('base64url');
    const sealed = { tokenHash: hashToken(token), tokenSealed: this.deps.secretBox.encrypt(token) };
    let subscriber: StatusPageSubscriber;
    if (existing) {
      // A new token: the link of an earlier confirmation email no longer works.
      const { accountId: _a, ...record } = existing;
      const updated = await subscribers.update(page.accountId, existing.id, {
        ...record, ...sealed, confirmationSentAt: now.toISOString(), confirmationsSent: existing.confirmationsSent + 1, updated_at: now.toISOString(),
      });
      if (!updated) return;
      subscriber = updated;
    } else {
      if ((await subscribers.countByPage(page.accountId, page.id)) >= this.maxPerPage) {
        this.deps.logger.warn('status pages: a page is full; a subscription was not taken', { accountId: page.accountId, statusPageId: page.id, maxPerPage: this.maxPerPage });
        return;
      }
      try {
        subscriber = await subscribers.insert(page.accountId, {
          id: this.deps.ids.uuid(), statusPageId: page.id, email, confirmed: false, ...sealed,
          confirmationSentAt: now.toISOString(), confirmationsSent: 1, confirmedAt: null, created_at: now.toISOString(), updated_at: null,
        });
      } catch (err) {
        // The same address, subscribing twice at once: the other request sends the email.
        if ((err as { code?: string }).code === 'CONFLICT') return;
        throw err;
      }
    }
    await this.enqueue([{ subscriber, payload: { subscriberId: subscriber.id, kind: 'confirm', tokenHash: subscriber.tokenHash } }]);
  }

  /** An unconfirmed subscription whose last confirmation email is over 48 hours old. */
  private expired(subscriber: StatusPageSubscriber): boolean {
    if (subscriber.confirmed) return false;
    const sent = subscriber.confirmationSentAt ? Date.parse(subscriber.confirmationSentAt) : 0;
    return this.deps.clock.now().getTime() - sent >= PENDING_MS;
  }

  /** The subscriber a link's token belongs to on this page, or null (unknown, or of another page). */
  private async byToken(page: StatusPage, token: unknown): Promise<StatusPageSubscriber | null> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 100) return null;
    const subscriber = await this.storage.statusPageSubscribers.findByTokenHash(hashToken(token));
    return subscriber && subscriber.statusPageId === page.id && subscriber.accountId === page.accountId ? subscriber : null;
  }

  /** The button behind a confirmation link. Answers whether the token was good (a second press is too). */
  async confirm(page: StatusPage, token: unknown): Promise<boolean> {
    const subscriber = await this.byToken(page, token);
    if (!subscriber) return false;
    if (subscriber.confirmed) return true;
    if (this.expired(subscriber)) {
      await this.storage.statusPageSubscribers.delete(page.accountId, subscriber.id);
      return false;
    }
    const now = this.deps.clock.now().toISOString();
    const { accountId: _a, ...record } = subscriber;
    return (await this.storage.statusPageSubscribers.update(page.accountId, subscriber.id, { ...record, confirmed: true, confirmedAt: now, updated_at: now })) !== null;
  }

  /** The unsubscribe button (or one-click unsubscribe): the subscriber is deleted. Answers whether the token was good. */
  async unsubscribe(page: StatusPage, token: unknown): Promise<boolean> {
    const subscriber = await this.byToken(page, token);
    if (!subscriber) return false;
    await this.storage.statusPageSubscribers.delete(page.accountId, subscriber.id);
    return true;
  }

  /** The subscribers of one of the account's pages, by id (the cursor holds when its row goes). */
  async list(accountId: string, rawPageId: unknown, rawQuery: unknown): Promise<CursorPage<StatusPageSubscriberResponse>> {
    const page = found(await this.storage.statusPages.get(accountId, stringId(rawPageId, 'statusPageId')), 'Status page');
    const q = parse(StatusPageSubscriberListQuerySchema, rawQuery ?? {}, 'query');
    await this.storage.statusPageSubscribers.deletePending(accountId, page.id, new Date(this.deps.clock.now().getTime() - PENDING_MS).toISOString());
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
   * subscriber of every public page showing one of the incident's services gets it once (a
   * subscriber of two such pages, twice: once per page, each with its own unsubscribe link). Only
   * ids are queued; answers how many emails.
   */
  async notify(accountId: string, incident: StatusPageIncident, update: StatusPageIncidentUpdate): Promise<number> {
    if (!update.notifySubscribers || !this.queueing) return 0;
    const serviceIds = new Set(incident.serviceIds);
    let queued = 0;
    for (let offset = 0; ; offset += 100) {
      const pages = await this.storage.statusPages.list(accountId, { limit: 100, offset });
      for (const page of pages.items) {
        // A private page's updates go to nobody by email: an address is no proof of who may read them.
        if (page.isPrivate || !page.cards.some((c) => c.serviceIds.some((id) => serviceIds.has(id)))) continue;
        for (let after: string | null = null; ;) {
          const batch = await this.storage.statusPageSubscribers.listByPage(accountId, page.id, after, 500);
          const mails = batch.filter((s) => s.confirmed).map((subscriber) => ({
            subscriber,
            payload: { subscriberId: subscriber.id, kind: 'update' as const, incidentId: incident.id, updateId: update.id },
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

  private async enqueue(mails: { subscriber: StatusPageSubscriber; payload: MailPayload }[]): Promise<void> {
    if (mails.length === 0) return;
    const now = this.deps.clock.now().toISOString();
    await this.storage.outbox.enqueue(mails.map(({ subscriber, payload }) => ({
      id: this.deps.ids.uuid(),
      accountId: subscriber.accountId,
      // One subscriber's emails go out in order, each after the one before was taken.
      checkId: `subscriber:${subscriber.id}`,
      alertChannelId: 0,
      alertType: SUBSCRIBER_MAIL,
      payload: payload as unknown as Record<string, unknown>,
      created_at: now,
      nextAttemptAt: now,
    })));
    this.onQueued();
  }

  /**
   * The email of a claimed outbox message, rendered from what is stored now; null when there is
   * nothing to send any more (the subscriber left or confirmed meanwhile, a newer confirmation
   * replaced this one, the page, incident or update is gone, or the page became private).
   */
  async render(m: OutboxMessage): Promise<SubscriberMail | null> {
    if (!this.publicUrl) return null;
    const p = m.payload as unknown as MailPayload;
    const subscriber = await this.storage.statusPageSubscribers.get(m.accountId, String(p.subscriberId));
    if (!subscriber) return null;
    const page = await this.storage.statusPages.get(m.accountId, subscriber.statusPageId);
    if (!page || page.isPrivate) return null;
    let token: string;
    try {
      token = this.deps.secretBox.decrypt(subscriber.tokenSealed);
    } catch {
      // Sealed under another key: this subscriber's links cannot be made.
      this.deps.logger.warn('status pages: a subscriber\'s token cannot be opened; their email is dropped', { accountId: m.accountId, subscriberId: subscriber.id });
      return null;
    }
    if (p.kind === 'confirm') {
      if (subscriber.confirmed || subscriber.tokenHash !== p.tokenHash) return null;
      return this.confirmationMail(page, subscriber.email, token);
    }
    if (!subscriber.confirmed) return null;
    const incident = await this.storage.statusPageIncidents.get(m.accountId, String(p.incidentId));
    const update = incident ? (await this.storage.statusPageIncidents.listUpdates(m.accountId, incident.id)).find((u) => u.id === p.updateId) : undefined;
    if (!incident || !update) return null;
    const shown = new Set(page.cards.flatMap((c) => c.serviceIds));
    const services = (await this.storage.services.listByIds(m.accountId, incident.serviceIds)).filter((s) => shown.has(s.id)).map((s) => s.name);
    return this.updateMail(page, incident, update, services, subscriber.email, token);
  }

  /**
   * Sends a claimed subscriber email; answers null when there was nothing to send (see render),
   * and `dropped` when the mail server refused the address for good.
   */
  async deliver(m: OutboxMessage, signal: AbortSignal): Promise<{ providerId?: string | null; detail?: string | null; dropped?: boolean } | null> {
    const mailer = this.mailer;
    if (!mailer) throw new Error('No subscriber mailer is registered in this process');
    const mail = await this.render(m);
    if (!mail) return null;
    try {
      return await mailer.send(mail, signal);
    } catch (err) {
      // A mail server's refusal names the address; the outbox and the logs keep the error, not it.
      const message = (err instanceof Error ? err.message : String(err)).split(mail.to).join('<subscriber>');
      if ((err as { permanent?: unknown } | null)?.permanent !== true) throw new Error(message);
      // Refused for good: sending again cannot succeed. An address that never confirmed goes too.
      const subscriberId = String((m.payload as unknown as MailPayload).subscriberId);
      const subscriber = await this.storage.statusPageSubscribers.get(m.accountId, subscriberId);
      if (subscriber && !subscriber.confirmed) await this.storage.statusPageSubscribers.delete(m.accountId, subscriber.id);
      this.deps.logger.warn('status pages: the mail server refused a subscriber\'s address for good; the email is dropped', {
        accountId: m.accountId, subscriberId, error: message,
      });
      return { dropped: true, detail: `Refused for good, dropped: ${message}` };
    }
  }

  private confirmationMail(page: StatusPage, to: string, token: string): SubscriberMail {
    const name = oneLine(page.name);
    const confirm = this.link(page, 'confirm', token);
    const text = [
      `Somebody, we hope you, asked for email updates about incidents on the status page "${name}".`,
      '',
      `Confirm the subscription: ${confirm}`,
      '',
      'If it was not you, ignore this email: an address gets no updates until it is confirmed.',
    ].join('\n');
    const body = [
      '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1b1b">',
      `<p>Somebody, we hope you, asked for email updates about incidents on the status page <strong>${html(name)}</strong>.</p>`,
      `<p><a href="${html(confirm)}">Confirm the subscription</a></p>`,
      '<p style="color:#6b6b6b;font-size:12px">If it was not you, ignore this email: an address gets no updates until it is confirmed.</p>',
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
