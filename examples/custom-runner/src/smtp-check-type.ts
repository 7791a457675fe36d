import { isIP } from 'node:net';
import * as v from 'valibot';
import { defineCheckType, integerBetween, modelObject, oneOf, type CheckOf } from '@vigil/core';

/** How an SMTP check talks to the server: in plain text, or upgraded to TLS with STARTTLS. */
export const SMTP_TLS_MODES = ['NONE', 'STARTTLS'] as const;
export type SmtpTlsMode = (typeof SMTP_TLS_MODES)[number];

const DOMAIN_NAME = /^(?=.{1,253}\.?$)(?:(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.)*(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.?$/;

/** A domain name (`mail.example.com`) or an IP address (`192.0.2.25`, `2001:db8::25`, `[2001:db8::25]`). */
export function isSmtpHost(host: string): boolean {
  return DOMAIN_NAME.test(host) || isIP(host.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

/**
 * The SMTP check type: is a mail server up, and does it greet properly? Vigil's own DNS checks
 * live in `@vigil/runner-dns`; this example adds a type Vigil does not have. Beside the common
 * check fields (name, frequency, locations, alertSettings, ...):
 *
 * - `request.hostname`: the mail server, a name or an IP address (`mail.example.com`).
 * - `request.port`: 25 by default (587 for submission).
 * - `request.tls`: `NONE` (default) talks in plain text; `STARTTLS` requires the server to offer
 *   STARTTLS after EHLO, upgrades the connection, and reads the EHLO reply again over TLS.
 * - `request.expectedBanner`: text the 220 greeting must contain (`ESMTP Postfix`); null: any greeting.
 * - `degradedResponseTime` / `maxResponseTime`: milliseconds, 0..30000, from the start of the run
 *   to the reply of the (last) EHLO; defaults 2000 and 5000.
 */
export const smtpCheckType = defineCheckType({
  checkType: 'SMTP',
  entries: {
    request: modelObject({
      hostname: v.pipe(v.string(), v.trim(), v.check(isSmtpHost, 'must be a host name or an IP address such as mail.example.com')),
      port: v.optional(integerBetween(1, 65535), 25),
      tls: v.optional(oneOf(SMTP_TLS_MODES), 'NONE'),
      expectedBanner: v.optional(v.nullable(v.pipe(
        v.string(),
        v.minLength(1, 'must not be empty (null: any greeting)'),
        v.maxLength(200, 'must be at most 200 characters'),
        v.regex(/^[^\r\n]*$/, 'must be one line'),
      )), null),
    }),
    degradedResponseTime: v.optional(v.nullable(integerBetween(0, 30_000)), 2000),
    maxResponseTime: v.optional(v.nullable(integerBetween(0, 30_000)), 5000),
  },
});

/** A stored SMTP check, as the runner receives it. */
export type SmtpCheck = CheckOf<typeof smtpCheckType>;
