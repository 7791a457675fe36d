import type { SubscriberMailPayload } from '../model/outbox-payload.js';
import type { StatusPage, StatusPageIncident, StatusPageIncidentUpdate } from '../model/status-page.js';
import type { DeliveryReceipt } from '../ports/alert-transport.js';
import type { SubscriberMail } from '../ports/subscriber-mailer.js';
import type { ServiceDeps } from './deps.js';

/** What sending an email answers: the mailer's receipt, or `dropped` when the address was refused for good. */
export type MailReceipt = DeliveryReceipt & { dropped?: boolean };

/** A claimed subscriber email: its account, and its payload as the outbox schema parsed it. */
export interface QueuedSubscriberMail {
  accountId: string;
  payload: SubscriberMailPayload;
}

const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();
const STATUS_WORDS: Record<string, string> = {
  INVESTIGATING: 'Investigating', IDENTIFIED: 'Identified', MONITORING: 'Monitoring', RESOLVED: 'Resolved', MAINTENANCE: 'Maintenance',
};

/** The host's public URL as links start with it: http(s), no query, fragment, space or control character. */
export function publicUrlOf(given: string): string {
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

/**
 * The emails of status-page subscriptions, as they go out: each is rendered from what is stored
 * when it is sent (the outbox holds only ids), and sent through the host's subscriber mailer.
 */
export class SubscriberMailSender {
  /** `publicUrl`: the checked public URL of the links (publicUrlOf); null: this process renders no email. */
  constructor(
    private readonly deps: ServiceDeps,
    private readonly publicUrl: string | null,
  ) {}

  private get storage() {
    return this.deps.storage;
  }

  private pageUrl(page: StatusPage): string {
    return `${this.publicUrl}/s/${encodeURIComponent(page.url)}`;
  }

  /** A link with the subscriber's token; by the page's id, which stays when its url changes. */
  private link(page: StatusPage, action: 'confirm' | 'unsubscribe', token: string): string {
    return `${this.publicUrl}/s/${page.id}/subscription/${action}?token=${token}`;
  }

  /**
   * The email of a claimed outbox message, rendered from what is stored now; null when there is
   * nothing to send any more (the subscriber left or confirmed meanwhile, a newer confirmation
   * replaced this one, the page, incident or update is gone, or the page became private).
   */
  async render(m: QueuedSubscriberMail): Promise<SubscriberMail | null> {
    if (!this.publicUrl) return null;
    const p = m.payload;
    const subscriber = await this.storage.statusPageSubscribers.get(m.accountId, p.subscriberId);
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
    const incident = await this.storage.statusPageIncidents.get(m.accountId, p.incidentId);
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
  async deliver(m: QueuedSubscriberMail, signal: AbortSignal): Promise<MailReceipt | null> {
    const mailer = this.deps.subscriberMailer;
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
      const { subscriberId } = m.payload;
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
