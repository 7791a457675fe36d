import type { AlertChannel, AlertSubscription } from '../model/alert-channel.js';
import type { AlertChannelsSummary, Check, CheckResponse } from '../model/check.js';
import { MASKED, maskVariables } from './masking.js';

/** The spec's alertChannels of a check response, from the channels the check notifies. */
export function alertChannelsSummary(channels: readonly AlertChannel[]): AlertChannelsSummary {
  const summary: AlertChannelsSummary = { email: [], webhook: [], chat: [], sms: [] };
  for (const ch of channels) {
    switch (ch.type) {
      case 'EMAIL':
        summary.email.push({ address: ch.config.address });
        break;
      case 'WEBHOOK':
        summary.webhook.push({
          url: ch.config.url,
          name: ch.config.name,
          method: ch.config.method,
          // Locked values are secrets of the channel, masked here as in the channel's own responses.
          headers: ch.config.headers.map((h) => ({ key: h.key, value: h.locked && h.value ? MASKED : h.value, locked: h.locked })),
          queryParameters: ch.config.queryParameters.map((q) => ({ key: q.key, value: q.locked && q.value ? MASKED : q.value, locked: q.locked })),
        });
        break;
      case 'CHAT':
      case 'CHAT_APP':
        summary.chat.push({ url: ch.config.url });
        break;
      case 'SMS':
      case 'CALL':
        summary.sms.push({ number: ch.config.number, name: ch.config.name });
        break;
      default:
        break;
    }
  }
  return summary;
}

/**
 * A stored check as the API answers it: no account id, secrets masked, alertChannels added. The
 * subscription rows are the truth (a channel's own subscription list may have changed them).
 */
export function toCheckResponse(
  check: Check,
  channels: readonly AlertChannel[],
  subscriptions: readonly AlertSubscription[],
): CheckResponse {
  const { accountId: _accountId, ...rest } = check;
  const own = subscriptions.filter((s) => s.checkId === check.id);
  rest.alertChannelSubscriptions = own.map((s) => ({ alertChannelId: s.alertChannelId, activated: s.activated }));
  const subscribed = new Set(own.filter((s) => s.activated).map((s) => s.alertChannelId));
  const alertChannels = alertChannelsSummary(channels.filter((c) => subscribed.has(c.id)));
  if (rest.checkType === 'BROWSER') {
    return { ...rest, environmentVariables: maskVariables(rest.environmentVariables), alertChannels };
  }
  return { ...rest, alertChannels } as CheckResponse;
}
