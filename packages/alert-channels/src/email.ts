import nodemailer from 'nodemailer';
import * as v from 'valibot';
import { EmailConfigSchema, type AlertChannel, type AlertMessage, type AlertTransport, type SubscriberMail, type SubscriberMailer } from '@vigil/core';
import { alertFacts, severityOf } from './fields.js';
import { DeliveryError } from './http.js';

export interface EmailOptions {
  /** The SMTP server. */
  smtp: {
    host: string;
    port?: number;
    /** TLS from the first byte (port 465). Otherwise STARTTLS is used when the server offers it. */
    secure?: boolean;
    /** Refuse to send unless the server upgrades the connection with STARTTLS. */
    requireTLS?: boolean;
    auth?: { user: string; pass: string };
    /** Passed to Node's TLS (e.g. `{ ca }` for a private CA, `{ rejectUnauthorized: false }` only in tests). */
    tls?: Record<string, unknown>;
  };
  /** The sender, e.g. `"Vigil alerts" <alerts@example.com>`. */
  from: string;
  /** A link to the check for the email, from the alert (e.g. the host's dashboard URL). */
  checkUrl?: (alert: AlertMessage) => string | null;
  /** Time limit of one SMTP exchange in milliseconds. Default 30 s. */
  timeoutMs?: number;
  /** The sender of status-page subscribers' emails, e.g. `"Acme status" <status@example.com>`. Default: `from`. */
  subscriberFrom?: string;
}

const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const COLOURS = { failure: '#d0342c', degraded: '#b57f00', recovery: '#1e7f4f', warning: '#b57f00' } as const;

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** An alert as an email a person reads: what failed, where, since when, and the error. */
export function renderEmail(alert: AlertMessage, link: string | null = null): RenderedEmail {
  const facts = alertFacts(alert);
  const subject = `[Vigil] ${alert.title}`.replace(/[\r\n]+/g, ' ');
  const text = [alert.title, '', ...facts.map(([label, value]) => `${label}: ${value}`), ...(link ? ['', link] : []), '', `Alert ${alert.alertType} · ${alert.id}`].join('\n');
  const colour = COLOURS[severityOf(alert.alertType)];
  const rows = facts
    .map(([label, value]) => `<tr><th align="left" style="padding:4px 12px 4px 0;vertical-align:top">${html(label)}</th><td style="padding:4px 0;${label === 'Error' ? 'font-family:monospace;white-space:pre-wrap' : ''}">${html(value)}</td></tr>`)
    .join('');
  const body = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1b1b">',
    `<h2 style="color:${colour};margin:0 0 12px">${html(alert.title)}</h2>`,
    `<table cellspacing="0" cellpadding="0">${rows}</table>`,
    link ? `<p><a href="${html(link)}">Open the check</a></p>` : '',
    `<p style="color:#6b6b6b;font-size:12px">Alert ${html(alert.alertType)} · ${html(alert.id)}</p>`,
    '</body></html>',
  ].join('');
  return { subject, text, html: body };
}

/** A nodemailer transport for the host's SMTP server, with one time limit for each of its waits. */
function smtpTransporter(options: Pick<EmailOptions, 'smtp' | 'timeoutMs'>) {
  const timeout = options.timeoutMs ?? 30_000;
  return nodemailer.createTransport({
    host: options.smtp.host,
    port: options.smtp.port ?? (options.smtp.secure ? 465 : 587),
    secure: options.smtp.secure ?? false,
    requireTLS: options.smtp.requireTLS ?? false,
    auth: options.smtp.auth,
    tls: options.smtp.tls,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
}

type Transporter = ReturnType<typeof smtpTransporter>;
type Mail = Parameters<Transporter['sendMail']>[0];

/** Sends one email unless `signal` aborts first; SMTP's answer as a receipt, its refusal as a DeliveryError. */
async function sendOne(transporter: Transporter, mail: Mail, signal: AbortSignal) {
  if (signal.aborted) throw new DeliveryError('The send was aborted');
  const aborted = new Promise<never>((_, reject) => {
    signal.addEventListener('abort', () => reject(new DeliveryError('The send was aborted')), { once: true });
  });
  try {
    const info = await Promise.race([transporter.sendMail(mail), aborted]);
    if (info.rejected.length > 0) throw new DeliveryError(`The server refused ${info.rejected.length} recipient(s)`, null, null, true);
    return { providerId: info.messageId, detail: `delivered (${info.response.split('\n')[0]})` };
  } catch (err) {
    if (err instanceof DeliveryError) throw err;
    const e = err as { responseCode?: number; code?: string; message?: string };
    if (e.responseCode) throw new DeliveryError(`SMTP ${e.responseCode}: ${e.message ?? ''}`.trim(), null, null, e.responseCode >= 500);
    throw new DeliveryError(`SMTP ${e.code ?? 'error'}: ${e.message ?? String(err)}`);
  }
}

/** EMAIL channels: one email to the channel's address over the host's SMTP server. */
export function emailTransport(options: EmailOptions): AlertTransport {
  const transporter = smtpTransporter(options);
  return {
    channelType: 'EMAIL',
    configSchema: EmailConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal) {
      if (signal.aborted) throw new DeliveryError('The send was aborted');
      const config = v.parse(EmailConfigSchema, channel.config);
      const rendered = renderEmail(alert, options.checkUrl?.(alert) ?? null);
      return sendOne(transporter, {
        from: options.from,
        to: config.address,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        headers: { 'X-Vigil-Alert-Id': alert.id, 'X-Vigil-Alert-Type': alert.alertType },
      }, signal);
    },
  };
}

/**
 * The emails of status-page subscriptions (confirmations, incident updates) over the host's SMTP
 * server. `registerAlertChannels` registers one when it is given `email`; `subscriberFrom` sets
 * their sender apart from the alerts'.
 */
export function smtpMailer(options: Pick<EmailOptions, 'smtp' | 'from' | 'timeoutMs'>): SubscriberMailer {
  const transporter = smtpTransporter(options);
  return {
    send: (mail: SubscriberMail, signal: AbortSignal) =>
      sendOne(transporter, { from: options.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, headers: mail.headers }, signal),
  };
}
