import request from 'supertest';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { smtpMailer } from '@vigil/alert-channels';
import type { StatusPageSubscriptionOptions } from '@vigil/core';
import { vigilPages } from '@vigil/http-express-adapter';
import { SmtpSink, type Mail } from '../../packages/alert-channels/test/support/smtp.js';
import { apiHarness, dropPostgresSchema, type ApiHarness } from '../../packages/http-express-adapter/test/support/harness.js';

// What the status-page subscription tests share: the API and the pages of one harness, a real
// SMTP server on 127.0.0.1, and the steps of a visitor (subscribe, confirm, follow a link).

export const PUBLIC_URL = 'https://status.example.com/status';

/** The SMTP server of the test file, and the harness of the running test. */
export let smtp: SmtpSink;
export let h: ApiHarness;

/** Starts the SMTP server for the file, closes each test's harness, and cleans up after the file. */
export function useSubscriptionServers(): void {
  beforeAll(async () => {
    smtp = await SmtpSink.start();
  });
  afterEach(async () => {
    await h?.close();
    smtp.mails.length = 0;
    smtp.refuse.clear();
    smtp.defer.clear();
  });
  afterAll(async () => {
    await smtp.close();
    await dropPostgresSchema();
  });
}

/**
 * The API and the pages (at /status) on `backend`, with subscriptions on (`subscriptions` adds
 * their options) or off (`false`), and the pages' subscription rate limit.
 */
export async function harness(
  backend: 'sqlite' | 'postgres',
  subscriptions: Omit<StatusPageSubscriptionOptions, 'publicUrl'> | false = {},
  subscribeRateLimit = 1_000,
): Promise<ApiHarness> {
  h = await apiHarness(backend, {}, subscriptions
    ? {
      subscriberMailer: smtpMailer({ smtp: { host: '127.0.0.1', port: smtp.port }, from: 'status@example.com' }),
      statusPageSubscriptions: { ...subscriptions, publicUrl: PUBLIC_URL },
      alerts: { backoffBaseMs: 1_000 },
    }
    : {});
  h.app.use('/status', vigilPages(h.vigil, { subscribeRateLimit }));
  return h;
}

export const anon = () => request(h.app);

/** The emails the outbox holds, sent now; answers those that reached the server. */
export async function deliver(): Promise<Mail[]> {
  const before = smtp.mails.length;
  while ((await h.vigil.alerts.drain()) > 0);
  return smtp.mails.slice(before);
}

/** A header of an email as it was sent (mailparser folds the List-* headers into one object). */
export const rawHeader = (mail: Mail, name: string) =>
  mail.parsed.headerLines.find((l) => l.key === name.toLowerCase())?.line.slice(name.length + 1).replace(/\r?\n\s+/g, ' ').trim();

/** The path (under the host) of a link in an email. */
export function linkIn(text: string, action: 'confirm' | 'unsubscribe'): string {
  const match = text.match(new RegExp(`${PUBLIC_URL.replace(/[./]/g, '\\$&')}(/s/[^\\s/]+/subscription/${action}\\?token=[A-Za-z0-9_-]+)`));
  expect(match, text).not.toBeNull();
  return `/status${match![1]}`;
}

/** A page showing the service "Web", and a service "Other" it does not show. */
export async function page(client = h.a, url = 'acme', name = 'Acme') {
  const web = (await client.post('/api/v1/status-pages/services', { name: 'Web' })).body.id as string;
  const other = (await client.post('/api/v1/status-pages/services', { name: 'Other' })).body.id as string;
  const res = await client.post('/api/v1/status-pages', { name, url, cards: [{ name: 'Site', serviceIds: [web] }] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as string, url, web, other };
}

export const subscribe = (url: string, email: unknown) => anon().post(`/status/s/${url}/subscribe`).type('form').send({ email });

/** Presses the button behind a link of an email (a GET of the link only asks). */
export function press(link: string): request.Test {
  const token = new URL(link, 'http://x').searchParams.get('token')!;
  return anon().post(link.split('?')[0]!).type('form').send({ token });
}

export async function confirmed(url: string, email: string): Promise<void> {
  expect((await subscribe(url, email)).status).toBe(202);
  const [mail] = await deliver();
  expect((await press(linkIn(mail!.parsed.text ?? '', 'confirm'))).status).toBe(200);
}

export const incident = (serviceIds: string[], notifySubscribers: boolean, description = 'Checkout answers 502') =>
  h.a.post('/api/v1/status-pages/incidents', { name: 'Checkout errors', serviceIds, incidentUpdate: { description, status: 'INVESTIGATING', notifySubscribers } });
