import * as v from 'valibot';
import { PagingAConfigSchema, PagingBConfigSchema, type AlertChannel, type AlertMessage, type AlertTransport } from '@vigil/core';
import { alertFacts, isRecovery, severityOf } from './fields.js';
import { DEFAULT_TIMEOUT_MS, delivered, jsonOf, joinUrl, postJson, type HttpOptions } from './http.js';

/**
 * The incident key of a check: every alert of a check triggers, updates and resolves the same
 * incident. Certificate alerts have their own, so a recovery does not close them.
 */
export function dedupKey(alert: AlertMessage): string {
  return alert.alertType === 'ALERT_SSL' ? `vigil-ssl-${alert.check.id}` : `vigil-check-${alert.check.id}`;
}

const details = (alert: AlertMessage) => Object.fromEntries(alertFacts(alert));

export interface PagingAOptions extends HttpOptions {
  /** Default `https://events.pagerduty.com`. */
  baseUrl?: string;
}

export const DEFAULT_PAGING_A_BASE_URL = 'https://events.pagerduty.com';

/** An Events-v2 event: trigger on a problem, resolve on a recovery, one dedup key per check. */
export function pagingAEvent(alert: AlertMessage, config: v.InferOutput<typeof PagingAConfigSchema>): Record<string, unknown> {
  const routing = { routing_key: config.serviceKey, dedup_key: dedupKey(alert) };
  if (isRecovery(alert.alertType)) return { ...routing, event_action: 'resolve' };
  const severity = severityOf(alert.alertType) === 'failure' ? 'critical' : 'warning';
  return {
    ...routing,
    event_action: 'trigger',
    client: 'Vigil',
    payload: {
      summary: alert.title.slice(0, 1024),
      source: alert.result?.runLocation || 'vigil',
      severity,
      timestamp: alert.result?.startedAt ?? alert.created_at,
      component: alert.check.name,
      group: alert.check.groupName ?? config.serviceName ?? undefined,
      class: alert.check.checkType,
      custom_details: { ...details(alert), alertType: alert.alertType, checkId: alert.check.id, ...(config.account ? { account: config.account } : {}) },
    },
  };
}

/** PAGING_A channels: an Events-v2-style API (`POST /v2/enqueue`). */
export function pagingATransport(options: PagingAOptions = {}): AlertTransport {
  const url = joinUrl(options.baseUrl ?? DEFAULT_PAGING_A_BASE_URL, '/v2/enqueue');
  return {
    channelType: 'PAGING_A',
    configSchema: PagingAConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal) {
      const config = v.parse(PagingAConfigSchema, channel.config);
      const answer = await postJson(url, pagingAEvent(alert, config), signal, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const key = jsonOf(answer)?.dedup_key;
      return { providerId: typeof key === 'string' ? key : dedupKey(alert), detail: delivered(answer) };
    },
  };
}

export interface PagingBOptions extends HttpOptions {
  /** The API of each region. Default `https://api.opsgenie.com` (US) and `https://api.eu.opsgenie.com` (EU). */
  baseUrls?: Partial<Record<'EU' | 'US', string>>;
}

export const DEFAULT_PAGING_B_BASE_URLS = { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' } as const;

/** An Alerts-v2 request: create an alert with the check's alias, or close it by alias on recovery. */
export function pagingBRequest(alert: AlertMessage, config: v.InferOutput<typeof PagingBConfigSchema>): { path: string; body: Record<string, unknown> } {
  const alias = dedupKey(alert);
  if (isRecovery(alert.alertType)) {
    return { path: `/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`, body: { source: 'Vigil', note: alert.title } };
  }
  return {
    path: '/v2/alerts',
    body: {
      message: alert.title.slice(0, 130),
      alias,
      description: alertFacts(alert).map(([label, value]) => `${label}: ${value}`).join('\n').slice(0, 15_000),
      tags: alert.check.tags.slice(0, 20),
      details: { ...details(alert), alertType: alert.alertType, checkId: alert.check.id },
      entity: alert.check.name,
      source: 'Vigil',
      priority: severityOf(alert.alertType) === 'failure' ? config.priority : lower(config.priority),
    },
  };
}

/** One step less urgent (a degraded check or an expiring certificate is not an outage). */
function lower(priority: string): string {
  const n = Number(priority.slice(1));
  return `P${Math.min(5, n + 1)}`;
}

/** PAGING_B channels: an Alerts-v2-style API in the channel's region (EU or US). */
export function pagingBTransport(options: PagingBOptions = {}): AlertTransport {
  const bases = { ...DEFAULT_PAGING_B_BASE_URLS, ...options.baseUrls };
  return {
    channelType: 'PAGING_B',
    configSchema: PagingBConfigSchema,
    async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal) {
      const config = v.parse(PagingBConfigSchema, channel.config);
      const { path, body } = pagingBRequest(alert, config);
      const answer = await postJson(joinUrl(bases[config.region], path), body, signal, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, {
        headers: { authorization: `GenieKey ${config.apiKey}` },
      });
      const requestId = jsonOf(answer)?.requestId;
      return { providerId: typeof requestId === 'string' ? requestId : null, detail: delivered(answer) };
    },
  };
}
