import * as v from 'valibot';
import { defineTransport, integerBetween, modelObject, positiveOption, type AlertMessage, type DefinedTransport } from '@vigil/core';

/** The channel type this transport adds; channels are created with `{"type": "NTFY", "config": {...}}`. */
export const NTFY_CHANNEL_TYPE = 'NTFY';

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/**
 * The config of an NTFY channel, validated when the channel is created or updated:
 *
 * - `server`: the ntfy server (`https://ntfy.sh`, or a self-hosted one). Default `https://ntfy.sh`.
 * - `topic`: 1-64 letters, digits, `-` or `_`; on the public server the topic name is the password.
 * - `token`: an access token for a protected topic, sent as `Authorization: Bearer`. A secret:
 *   sealed at rest, answered as `********`, opened only to send.
 * - `priority`: 1 (min) to 5 (max) for failure alerts; degraded and certificate alerts go one
 *   lower, recoveries at 3 (default) at most. Default 5.
 */
export const NtfyConfigSchema = modelObject({
  server: v.optional(v.pipe(v.string(), v.check(isHttpUrl, 'must be an http or https URL without query or fragment')), 'https://ntfy.sh'),
  topic: v.pipe(v.string(), v.regex(/^[-_A-Za-z0-9]{1,64}$/, 'must be 1 to 64 letters, digits, - or _')),
  token: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, 'must not be empty; use null for none'))), null),
  priority: v.optional(integerBetween(1, 5), 5),
});
export type NtfyConfig = v.InferOutput<typeof NtfyConfigSchema>;

export interface NtfyTransportOptions {
  /** Time limit of one publish request in milliseconds. Default 10,000. */
  timeoutMs?: number;
}

/** The request that publishes one alert: `POST {server}/{topic}` with the message as its body. */
export interface NtfyRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const RECOVERIES = new Set(['ALERT_RECOVERY', 'ALERT_DEGRADED_RECOVERY']);
const FAILURES = new Set(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_DEGRADED_FAILURE']);

function priorityOf(alertType: string, configured: number): number {
  if (FAILURES.has(alertType)) return configured;
  if (RECOVERIES.has(alertType)) return Math.min(3, configured);
  return Math.max(1, configured - 1);
}

/** ntfy shows tags named like emoji short codes as emoji, the others as text. */
function emojiOf(alertType: string): string {
  if (FAILURES.has(alertType)) return 'rotating_light';
  if (RECOVERIES.has(alertType)) return 'white_check_mark';
  if (alertType === 'ALERT_SSL') return 'lock';
  return 'warning';
}

/**
 * HTTP headers carry Latin-1 at best; ntfy (2.4 and later) decodes RFC 2047 encoded words in
 * Title and Tags, so a check named in another script still reads right on the phone.
 */
function headerValue(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** The body a person reads under the title: what failed, where, since when. */
export function ntfyBody(alert: AlertMessage): string {
  const lines: string[] = [];
  if (alert.ssl) lines.push(`The certificate of ${alert.ssl.domain} expires in ${alert.ssl.daysRemaining} days.`);
  else if (RECOVERIES.has(alert.alertType)) lines.push('Passing again.');
  else if (alert.result?.errorMessage) lines.push(alert.result.errorMessage);
  const where = alert.result ? ` in ${alert.result.runLocation}, ${alert.result.responseTime} ms` : '';
  lines.push(`Check: ${alert.check.name} (${alert.check.checkType})${where}`);
  if (alert.failingSince && !RECOVERIES.has(alert.alertType)) lines.push(`Failing since ${alert.failingSince}`);
  if (alert.isReminder) lines.push(`Reminder ${alert.reminderSequence}`);
  return lines.join('\n');
}

/** The publish request of one alert to one channel, without sending it. */
export function ntfyRequest(alert: AlertMessage, config: NtfyConfig): NtfyRequest {
  const tags = [emojiOf(alert.alertType), ...alert.check.tags.map((t) => t.replace(/,/g, ' ').trim()).filter(Boolean)];
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    title: headerValue(alert.title),
    priority: String(priorityOf(alert.alertType, config.priority)),
    tags: headerValue(tags.join(',')),
  };
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  return { url: `${config.server.replace(/\/+$/, '')}/${config.topic}`, headers, body: ntfyBody(alert) };
}

/**
 * Alerts as push notifications through an ntfy server (https://ntfy.sh or a self-hosted one).
 * `send` resolves only when the server accepted the message (2xx) and rejects otherwise, so the
 * outbox retries it. Errors name the status, never the URL or the token. `defineTransport` hands
 * `send` the channel's config already parsed by NtfyConfigSchema (defaults filled in, typed).
 */
export function ntfyTransport(options: NtfyTransportOptions = {}): DefinedTransport<typeof NTFY_CHANNEL_TYPE, typeof NtfyConfigSchema> {
  const timeoutMs = positiveOption('ntfyTransport', 'timeoutMs', options.timeoutMs, 10_000);
  return defineTransport({
    channelType: NTFY_CHANNEL_TYPE,
    configSchema: NtfyConfigSchema,
    secretFields: ['token'],
    async send(alert, config, _channel, signal) {
      if (signal.aborted) throw new Error('The send was aborted');
      const request = ntfyRequest(alert, config);
      const limit = AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await fetch(request.url, {
          method: 'POST', headers: request.headers, body: request.body, redirect: 'manual', signal: AbortSignal.any([signal, limit]),
        });
      } catch (err) {
        if (limit.aborted) throw new Error(`The ntfy server did not answer within ${timeoutMs} ms`);
        if (signal.aborted) throw new Error('The send was aborted');
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        throw new Error(`Could not reach the ntfy server${cause ? ` (${cause})` : ''}`);
      }
      const text = await res.text().catch(() => '');
      if (res.status < 200 || res.status > 299) throw new Error(`The ntfy server answered ${res.status}`);
      let id: unknown = null;
      try {
        id = (JSON.parse(text) as { id?: unknown }).id;
      } catch {
        // An answer without a JSON body still confirms delivery.
      }
      return { providerId: typeof id === 'string' ? id : null, detail: `delivered (${res.status})` };
    },
  });
}
