import { LOCKED_CONFIG_LISTS, type AlertChannel, type AlertSubscription } from '../model/alert-channel.js';
import { hasOwnVariables, type AlertChannelsSummary, type Check, type CheckResponse } from '../model/check.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { VigilStorage } from '../ports/storage.js';
import { maskVariables } from './masking.js';
import { ChannelCredentials, maskApiRequest, UNOPENED } from './sealing.js';

/**
 * The spec's alertChannels of a check response, from the channels the check notifies. Credentials
 * are masked as in the channel's own responses; without the box that sealed them, every header
 * value and chat URL reads masked.
 */
export function alertChannelsSummary(channels: readonly AlertChannel[], box: SecretBox = UNOPENED): AlertChannelsSummary {
  const summary: AlertChannelsSummary = { email: [], webhook: [], chat: [], sms: [] };
  for (const stored of channels) {
    const credentials = new ChannelCredentials(stored.type, LOCKED_CONFIG_LISTS[stored.type] ?? [], box);
    const ch = { ...stored, config: credentials.mask(credentials.open(stored.config)) } as AlertChannel;
    switch (ch.type) {
      case 'EMAIL':
        summary.email.push({ address: ch.config.address });
        break;
      case 'WEBHOOK':
        summary.webhook.push({
          url: ch.config.url,
          name: ch.config.name,
          method: ch.config.method,
          headers: ch.config.headers.map((h) => ({ key: h.key, value: h.value, locked: h.locked })),
          queryParameters: ch.config.queryParameters.map((q) => ({ key: q.key, value: q.value, locked: q.locked })),
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
 * subscription rows are the truth (a channel's own subscription list may have changed them). An
 * API check's credential headers and basic-auth password are masked; its other sealed header
 * values are opened with the box (without it, they read masked too).
 */
export function toCheckResponse(
  check: Check,
  channels: readonly AlertChannel[],
  subscriptions: readonly AlertSubscription[],
  box: SecretBox = UNOPENED,
): CheckResponse {
  const { accountId: _accountId, ...rest } = check;
  const own = subscriptions.filter((s) => s.checkId === check.id);
  rest.alertChannelSubscriptions = own.map((s) => ({ alertChannelId: s.alertChannelId, activated: s.activated }));
  const subscribed = new Set(own.filter((s) => s.activated).map((s) => s.alertChannelId));
  const alertChannels = alertChannelsSummary(channels.filter((c) => subscribed.has(c.id)), box);
  if (hasOwnVariables(rest)) {
    return { ...rest, environmentVariables: maskVariables(rest.environmentVariables), alertChannels };
  }
  if (rest.checkType === 'API') return { ...rest, request: maskApiRequest(rest.request, box), alertChannels };
  return { ...rest, alertChannels } as CheckResponse;
}

/**
 * API responses of checks from their own subscription lists, which are kept in step with the
 * subscription rows from both sides: no read of the account's subscription rows, and the
 * account's channels read once, only when one of the checks notifies one.
 */
export async function checkResponses(
  storage: Pick<VigilStorage, 'alertChannels'>,
  accountId: string,
  checks: readonly Check[],
  box: SecretBox = UNOPENED,
): Promise<CheckResponse[]> {
  const notifies = checks.some((c) => c.alertChannelSubscriptions.some((s) => s.activated));
  const channels = notifies ? await storage.alertChannels.listAll(accountId) : [];
  return checks.map((check) => toCheckResponse(check, channels, check.alertChannelSubscriptions.map((s, i) => ({
    id: i, accountId, alertChannelId: s.alertChannelId, checkId: check.id, groupId: null, activated: s.activated,
  })), box));
}
