import { ALERT_TRANSPORTS, CERTIFICATE_PROBE, SUBSCRIBER_MAILER, type AlertTransport, type PluginRegistry } from '@vigil/core';
import { chatAppTransport, chatTransport } from './chat.js';
import { emailTransport, smtpMailer, type EmailOptions } from './email.js';
import type { HttpOptions } from './http.js';
import { pagingATransport, pagingBTransport, type PagingAOptions, type PagingBOptions } from './paging.js';
import { callTransport, smsTransport, type PhoneProviderOptions } from './phone.js';
import { tlsCertificateProbe, type TlsProbeOptions } from './certificate-probe.js';
import { webhookTransport } from './webhook.js';

export interface AlertChannelsOptions {
  /** Time limit of one HTTP request to a webhook, chat or provider endpoint. Default 10 s. */
  timeoutMs?: number;
  /**
   * EMAIL channels need an SMTP server; without it, EMAIL alerts wait in the outbox for a process
   * that has one. The same server sends status-page subscribers their emails.
   */
  email?: EmailOptions;
  /** SMS and CALL channels need the provider account; without it, those alerts wait likewise. */
  phone?: PhoneProviderOptions;
  pagingA?: PagingAOptions;
  pagingB?: PagingBOptions;
  /** The daily certificate-expiry job's TLS probe; `false` registers none. */
  certificates?: TlsProbeOptions | false;
  /** Channel types this process must not deliver (e.g. `['CALL']`). */
  exclude?: string[];
}

/** Every transport the options allow: WEBHOOK, CHAT, CHAT_APP, PAGING_A and PAGING_B always; EMAIL, SMS and CALL with their options. */
export function alertTransports(options: AlertChannelsOptions = {}): AlertTransport[] {
  const http: HttpOptions = { timeoutMs: options.timeoutMs };
  const all: AlertTransport[] = [
    webhookTransport(http),
    chatTransport(http),
    chatAppTransport(http),
    pagingATransport({ ...http, ...options.pagingA }),
    pagingBTransport({ ...http, ...options.pagingB }),
  ];
  if (options.email) all.push(emailTransport(options.email));
  if (options.phone) {
    const phone = { ...http, ...options.phone };
    all.push(smsTransport(phone), callTransport(phone));
  }
  const excluded = new Set(options.exclude ?? []);
  return all.filter((t) => !excluded.has(t.channelType));
}

/**
 * Registers the transports (and the certificate probe) on the host's container, before Vigil is
 * first resolved. Answers the transports registered.
 */
export function registerAlertChannels(container: PluginRegistry, options: AlertChannelsOptions = {}): AlertTransport[] {
  const transports = alertTransports(options);
  for (const transport of transports) container.register(ALERT_TRANSPORTS, { useValue: transport });
  if (options.certificates !== false) container.register(CERTIFICATE_PROBE, { useValue: tlsCertificateProbe(options.certificates ?? {}) });
  if (options.email) {
    const { smtp, timeoutMs, from, subscriberFrom } = options.email;
    container.register(SUBSCRIBER_MAILER, { useValue: smtpMailer({ smtp, timeoutMs, from: subscriberFrom ?? from }) });
  }
  return transports;
}
