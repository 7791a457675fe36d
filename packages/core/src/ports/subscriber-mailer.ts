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
 * settings. Resolves when the server took the email; throws otherwise (the outbox retries).
 */
export interface SubscriberMailer {
  send(mail: SubscriberMail, signal: AbortSignal): Promise<DeliveryReceipt>;
}

export const SUBSCRIBER_MAILER = createToken<SubscriberMailer>('vigil.subscriberMailer');
