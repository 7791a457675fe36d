import * as v from 'valibot';
import { PhoneConfigSchema, type AlertChannel, type AlertMessage, type AlertTransport } from '@vigil/core';
import { alertFacts } from './fields.js';
import { DEFAULT_TIMEOUT_MS, delivered, jsonOf, joinUrl, send, type HttpOptions } from './http.js';

/**
 * The voice and text provider account (Twilio-style REST API). The channel's config names only
 * the recipient (`{number, name}`): the account that sends is the host's.
 */
export interface PhoneProviderOptions extends HttpOptions {
  /** Default `https://api.twilio.com`. Tests point it at a local server. */
  baseUrl?: string;
  accountSid: string;
  authToken: string;
  /** The sending number (E.164). */
  from: string;
}

export const DEFAULT_PHONE_BASE_URL = 'https://api.twilio.com';

/** Most characters of a text message sent (longer ones are cut with an ellipsis). */
const MAX_SMS = 320;

/** A text message: the title, then where and the error, cut to fit. */
export function smsText(alert: AlertMessage): string {
  const facts = Object.fromEntries(alertFacts(alert));
  const parts = [alert.title];
  if (facts.Error) parts.push(facts.Error);
  if (facts.Since) parts.push(`since ${facts.Since}`);
  const text = `Vigil: ${parts.join(' - ')}`;
  return text.length > MAX_SMS ? `${text.slice(0, MAX_SMS - 1)}…` : text;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** The TwiML a call speaks: the title twice (people miss the start of a call). */
export function callTwiml(alert: AlertMessage): string {
  const said = xml(`Vigil alert. ${alert.title}.`);
  return `<Response><Say>${said}</Say><Pause length="1"/><Say>${said}</Say></Response>`;
}

function phoneTransport(channelType: 'SMS' | 'CALL', resource: 'Messages' | 'Calls', options: PhoneProviderOptions): AlertTransport {
  const base = options.baseUrl ?? DEFAULT_PHONE_BASE_URL;
  const auth = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  const url = joinUrl(base, `/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/${resource}.json`);
  return {
    channelType,
    configSchema: PhoneConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal) {
      const config = v.parse(PhoneConfigSchema, channel.config);
      const form = new URLSearchParams({ To: config.number, From: options.from });
      if (resource === 'Messages') form.set('Body', smsText(alert));
      else form.set('Twiml', callTwiml(alert));
      const answer = await send(
        { method: 'POST', url, headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
        signal,
        options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      );
      const sid = jsonOf(answer)?.sid;
      return { providerId: typeof sid === 'string' ? sid : null, detail: delivered(answer) };
    },
  };
}

/** SMS channels: a text message through the provider's Messages resource. */
export const smsTransport = (options: PhoneProviderOptions): AlertTransport => phoneTransport('SMS', 'Messages', options);

/** CALL channels: a voice call through the provider's Calls resource, reading the alert out. */
export const callTransport = (options: PhoneProviderOptions): AlertTransport => phoneTransport('CALL', 'Calls', options);
