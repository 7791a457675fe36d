import { createHmac } from 'node:crypto';
import Handlebars from 'handlebars';
import * as v from 'valibot';
import { WebhookConfigSchema, type AlertChannel, type AlertMessage, type AlertTransport, type DeliveryContext, type WebhookConfig } from '@vigil/core';
import { alertFields } from './fields.js';
import { DEFAULT_TIMEOUT_MS, delivered, send, type HttpOptions } from './http.js';

export const SIGNATURE_HEADER = 'x-vigil-signature';
export const ALERT_ID_HEADER = 'x-vigil-alert-id';

/** Templates run in their own Handlebars environment: a host's helpers never leak in or out. */
const hb = Handlebars.create();

/** A template error, as a person fixing the template reads it (first line of Handlebars' message). */
export function templateError(template: string): string | null {
  try {
    hb.parse(template);
    return null;
  } catch (err) {
    // Handlebars answers "Parse error on line N:", a window of the text, a caret, then the long
    // list of tokens it expected and the one it got: the line and what it got are what helps.
    const lines = (err instanceof Error ? err.message : String(err)).split('\n');
    const where = /^Parse error on line (\d+):$/.exec(lines[0] ?? '');
    const got = /got '([^']+)'$/.exec(lines[lines.length - 1] ?? '');
    if (where && got) return `unexpected ${got[1] === 'EOF' ? 'end of template' : got[1]} on line ${where[1]}`;
    return lines[0]!;
  }
}

/** The WEBHOOK config schema with a template that must parse. */
export const WebhookTransportConfigSchema = v.pipe(
  WebhookConfigSchema,
  v.forward(
    v.check((c) => !c.template || templateError(c.template) === null, (issue) => {
      const template = (issue.input as { template?: string }).template ?? '';
      return `is not a valid Handlebars template: ${templateError(template)}`;
    }),
    ['template'],
  ),
);

/** A template whose text starts with `{` or `[` builds JSON: values go in JSON-escaped. */
const looksLikeJson = (template: string) => /^\s*[[{]/.test(template);

const jsonEscape = (s: string) => JSON.stringify(s).slice(1, -1);

type Scalar = string | number | boolean | null;
type Context = Record<string, Scalar | Scalar[] | Handlebars.SafeString | Handlebars.SafeString[]>;

const raw = new WeakMap<object, unknown>();
/** `{{{json TAGS}}}`: a value as JSON (an array stays an array). */
hb.registerHelper('json', (value: unknown) => new hb.SafeString(JSON.stringify((value !== null && typeof value === 'object' && raw.has(value) ? raw.get(value) : value) ?? null)));

function escapedForJson(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(escapedForJson);
    raw.set(items, value);
    return items;
  }
  if (typeof value !== 'string') return value;
  const safe = new hb.SafeString(jsonEscape(value));
  raw.set(safe, value);
  return safe;
}

/**
 * The template's context: the alert's fields (docs/decisions.md) and the check's (non-secret)
 * environment variables. Where a variable has the name of a field, the field wins.
 */
export function templateContext(alert: AlertMessage): Record<string, unknown> {
  return { ...alert.variables, ...alertFields(alert) };
}

/** Fills a template with the alert. In a JSON template every string is inserted JSON-escaped. */
export function renderTemplate(template: string, alert: AlertMessage): string {
  const context = templateContext(alert);
  if (!looksLikeJson(template)) return hb.compile(template, { noEscape: true })(context);
  const escaped: Context = {};
  for (const [k, value] of Object.entries(context)) escaped[k] = escapedForJson(value) as Context[string];
  return hb.compile(template)(escaped);
}

/** A key/value list's templates filled (without escaping: they are not JSON). */
const filled = (text: string, alert: AlertMessage) => (text.includes('{{') ? hb.compile(text, { noEscape: true })(templateContext(alert)) : text);

export interface RenderedWebhook {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

/** Hex HMAC-SHA256 of the exact body bytes, the value of `x-vigil-signature`. */
export function signBody(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The request a WEBHOOK channel sends for an alert: the config's method, URL with its query
 * parameters, headers, and body (the template filled, or the alert's fields as JSON). Header and
 * query values may use the template variables too. With a webhookSecret, the body is signed.
 */
export function renderWebhook(alert: AlertMessage, config: WebhookConfig): RenderedWebhook {
  const url = new URL(filled(config.url, alert));
  for (const { key, value } of config.queryParameters) url.searchParams.append(key, filled(value, alert));
  const headers: Record<string, string> = {};
  for (const { key, value } of config.headers) headers[key.toLowerCase()] = filled(value, alert);
  const method = config.method;
  let body: string | null = null;
  if (method !== 'GET' && method !== 'HEAD') {
    body = config.template ? renderTemplate(config.template, alert) : JSON.stringify(templateContext(alert));
    headers['content-type'] ??= !config.template || looksLikeJson(config.template) ? 'application/json' : 'text/plain; charset=utf-8';
  }
  headers[ALERT_ID_HEADER] = alert.id;
  if (config.webhookSecret) headers[SIGNATURE_HEADER] = signBody(config.webhookSecret, body ?? '');
  return { method, url: url.toString(), headers, body };
}

export type WebhookTransportOptions = HttpOptions;

/**
 * WEBHOOK channels: any HTTP endpoint; a 2xx answer is a delivery, anything else is retried. The
 * URL is the account's: the host's target policy (from the dispatcher's context) applies to it.
 */
export function webhookTransport(options: WebhookTransportOptions = {}): AlertTransport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    channelType: 'WEBHOOK',
    configSchema: WebhookTransportConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal, context?: DeliveryContext) {
      const config = v.parse(WebhookConfigSchema, channel.config);
      const answer = await send({ ...renderWebhook(alert, config), policy: context?.targetPolicy }, signal, timeoutMs);
      return { detail: delivered(answer) };
    },
  };
}
