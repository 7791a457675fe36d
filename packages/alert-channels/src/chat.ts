import * as v from 'valibot';
import { ChatAppConfigSchema, ChatConfigSchema, type AlertChannel, type AlertMessage, type AlertTransport, type DeliveryContext } from '@vigil/core';
import { alertFacts, severityOf, type Severity } from './fields.js';
import { DEFAULT_TIMEOUT_MS, delivered, postJson, type HttpOptions } from './http.js';

const COLOURS: Record<Severity, string> = { failure: '#d0342c', degraded: '#f2a900', recovery: '#2eb67d', warning: '#f2a900' };
const EMOJI: Record<Severity, string> = { failure: ':red_circle:', degraded: ':large_orange_circle:', recovery: ':large_green_circle:', warning: ':warning:' };

/** Slack's mrkdwn escapes: &, < and > only. */
const mrkdwn = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The body of a Slack-style incoming webhook: a text fallback, blocks and a coloured attachment. */
export function chatMessage(alert: AlertMessage, channel: string | null): Record<string, unknown> {
  const severity = severityOf(alert.alertType);
  const facts = alertFacts(alert);
  const text = `${EMOJI[severity]} ${mrkdwn(alert.title)}`;
  return {
    ...(channel ? { channel } : {}),
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      {
        type: 'section',
        fields: facts.slice(0, 10).map(([label, value]) => ({ type: 'mrkdwn', text: `*${mrkdwn(label)}*\n${mrkdwn(value)}` })),
      },
    ],
    attachments: [{ color: COLOURS[severity], fallback: alert.title, footer: `Vigil ${alert.alertType}` }],
  };
}

/** CHAT channels: a Slack-style incoming webhook (`{url, channel?}`), under the host's target policy. */
export function chatTransport(options: HttpOptions = {}): AlertTransport {
  return {
    channelType: 'CHAT',
    configSchema: ChatConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal, context?: DeliveryContext) {
      const config = v.parse(ChatConfigSchema, channel.config);
      const answer = await postJson(config.url, chatMessage(alert, config.channel), signal, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, {
        policy: context?.targetPolicy,
      });
      return { detail: delivered(answer) };
    },
  };
}

const CARD_STYLE: Record<Severity, string> = { failure: 'Attention', degraded: 'Warning', recovery: 'Good', warning: 'Warning' };

/** The body of a Teams-style workflow webhook: a message holding one Adaptive Card. */
export function chatAppCard(alert: AlertMessage): Record<string, unknown> {
  const severity = severityOf(alert.alertType);
  return {
    type: 'message',
    summary: alert.title,
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: alert.title, weight: 'Bolder', size: 'Medium', wrap: true, color: CARD_STYLE[severity] },
            { type: 'FactSet', facts: alertFacts(alert).map(([title, value]) => ({ title, value })) },
          ],
        },
      },
    ],
  };
}

/** CHAT_APP channels: a Teams-style webhook receiving an Adaptive Card (`{url}`), under the host's target policy. */
export function chatAppTransport(options: HttpOptions = {}): AlertTransport {
  return {
    channelType: 'CHAT_APP',
    configSchema: ChatAppConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal, context?: DeliveryContext) {
      const config = v.parse(ChatAppConfigSchema, channel.config);
      const answer = await postJson(config.url, chatAppCard(alert), signal, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, { policy: context?.targetPolicy });
      return { detail: delivered(answer) };
    },
  };
}
