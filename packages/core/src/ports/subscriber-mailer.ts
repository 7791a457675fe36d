import type { DeliveryReceipt } from './alert-transport.js';
import { createToken } from './token.js';

/** An email to a status page's subscriber, rendered by Vigil. */
export interface SubscriberMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra headers (List-Unsubscribe and the like). */
  headers: Record<string, string>;
}

/**
 * Sends the emails of status-page subscriptions (confirmations and incident updates) over the
 * host's mail server. `@vigil/alert-channels` registers one (`smtpMailer`) when it is given SMTP
 * settings. Resolves when the server took the email; throws otherwise: the outbox retries, unless
 * the error has `permanent: true` (the server refused the address for good, an SMTP 5xx), which
 * drops the email, and an unconfirmed subscription with it.
 */
export interface SubscriberMailer {
  send(mail: SubscriberMail, signal: AbortSignal): Promise<DeliveryReceipt>;
}

export const SUBSCRIBER_MAILER = createToken<SubscriberMailer>('vigil.subscriberMailer');
