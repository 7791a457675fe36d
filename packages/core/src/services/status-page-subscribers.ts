import { createHash, randomBytes } from 'node:crypto';
import { ConflictError, hasCode } from '../errors.js';
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
import type { SubscriberMailPayload } from '../model/outbox-payload.js';
import type { SubscriberMail, SubscriberMailer } from '../ports/subscriber-mailer.js';
import type { ServiceDeps } from './deps.js';
import { publicUrlOf, SubscriberMailSender, type MailReceipt, type QueuedSubscriberMail } from './status-page-subscriber-mail.js';
import { found, stringId } from './support.js';

/**
 * The outbox's alertType of a subscriber's email (its alertChannelId is 0: no channel sends it).
 * It names the row in logs and metrics; the dispatcher tells an email from an alert by its payload's kind.
 */
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

/** An email about to be queued: to whom, and what the outbox row holds (ids only). */
interface QueuedMail {
  subscriber: StatusPageSubscriber;
  payload: SubscriberMailPayload;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

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
 * is stored then, so a stale link or an address that left is never sent (SubscriberMailSender
 * renders and sends them).
 */
export class StatusPageSubscriberService {
  private readonly publicUrl: string | null;
  private readonly maxPerPage: number;
  private readonly intervalMs: number;
  private readonly perAccountHour: number;
  private readonly mails: SubscriberMailSender;

  constructor(
    private readonly deps: ServiceDeps,
    options: StatusPageSubscriptionOptions = {},
    private readonly onQueued: () => void = () => {},
  ) {
    this.publicUrl = options.publicUrl ? publicUrlOf(options.publicUrl) : null;
    this.maxPerPage = options.maxPerPage ?? 10_000;
    this.intervalMs = options.confirmationIntervalMs ?? HOUR_MS;
    this.perAccountHour = options.maxConfirmationsPerAccountHour ?? 200;
    this.mails = new SubscriberMailSender(deps, this.publicUrl);
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
        if (hasCode(err, 'CONFLICT')) return;
        throw err;
      }
    }
    await this.enqueue([{ subscriber, payload: { kind: 'confirm', subscriberId: subscriber.id, tokenHash: subscriber.tokenHash } }]);
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
          const mails = batch.filter((s) => s.confirmed).map((subscriber): QueuedMail => ({
            subscriber,
            payload: { kind: 'update', subscriberId: subscriber.id, incidentId: incident.id, updateId: update.id },
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

  private async enqueue(mails: QueuedMail[]): Promise<void> {
    if (mails.length === 0) return;
    const now = this.deps.clock.now().toISOString();
    await this.storage.outbox.enqueue(mails.map(({ subscriber, payload }) => ({
      id: this.deps.ids.uuid(),
      accountId: subscriber.accountId,
      // One subscriber's emails go out in order, each after the one before was taken.
      checkId: `subscriber:${subscriber.id}`,
      alertChannelId: 0,
      alertType: SUBSCRIBER_MAIL,
      payload,
      created_at: now,
      nextAttemptAt: now,
    })));
    this.onQueued();
  }

  /**
   * The email of a claimed outbox message, rendered from what is stored now; null when there is
   * nothing to send any more (see SubscriberMailSender.render).
   */
  render(m: QueuedSubscriberMail): Promise<SubscriberMail | null> {
    return this.mails.render(m);
  }

  /**
   * Sends a claimed subscriber email; answers null when there was nothing to send, and `dropped`
   * when the mail server refused the address for good.
   */
  deliver(m: QueuedSubscriberMail, signal: AbortSignal): Promise<MailReceipt | null> {
    return this.mails.deliver(m, signal);
  }
}
