import { ValidationError, type ValidationIssue } from '../errors.js';
import { isAbsoluteHttpUrl, isTemplatedUrl } from '../model/urls.js';
import type { TargetPolicy } from '../runner-kit/target-policy.js';

const REFUSED = 'which the target policy of this Vigil refuses (it runs no checks against loopback, private, link-local or other internal addresses)';
const REFUSED_FOR_ALERTS = 'which the target policy of this Vigil refuses (it sends no alerts to loopback, private, link-local or other internal addresses)';

/**
 * The config fields of built-in channel types that hold a URL the account writes. Other types
 * send to endpoints the host configured (a provider's base URL, an SMTP server).
 */
const CHANNEL_URL_FIELDS: Readonly<Record<string, readonly string[]>> = { WEBHOOK: ['url'], CHAT: ['url'], CHAT_APP: ['url'] };

/** The host of an http(s) URL written out in full; null for a relative or templated one (known only at run time). */
function urlHost(url: unknown): string | null {
  if (typeof url !== 'string' || isTemplatedUrl(url) || !isAbsoluteHttpUrl(url)) return null;
  return new URL(url).hostname;
}

function issue(policy: TargetPolicy, path: string, host: string | null, refused = REFUSED): ValidationIssue[] {
  if (host === null || host === '') return [];
  const refusal = policy.checkHost(host);
  return refusal ? [{ path, message: `names ${refusal.reason}, ${refused}` }] : [];
}

/**
 * A check (or a group's apiCheckDefaults) whose target is written as an address the policy refuses
 * (`127.0.0.1`, `0x7f.1`, `[::1]`, `localhost`) is refused when it is created or updated, naming
 * the field. Names are only known when a run looks them up; the runner refuses them then.
 */
export function checkTargetFields(policy: TargetPolicy | undefined, record: Record<string, unknown>, checkType: string | null): void {
  if (!policy?.refuseInternalAddresses) return;
  const request = (record.request ?? null) as Record<string, unknown> | null;
  const issues: ValidationIssue[] = [];
  if ((checkType === 'TCP' || checkType === 'ICMP') && typeof request?.hostname === 'string') issues.push(...issue(policy, 'request.hostname', request.hostname));
  if (checkType === 'API' || checkType === 'URL') issues.push(...issue(policy, 'request.url', urlHost(request?.url)));
  if (checkType === 'DNS' && typeof request?.nameServer === 'string') issues.push(...issue(policy, 'request.nameServer', request.nameServer));
  if (typeof record.sslCheckDomain === 'string') issues.push(...issue(policy, 'sslCheckDomain', record.sslCheckDomain));
  const defaults = (record.apiCheckDefaults ?? null) as Record<string, unknown> | null;
  if (checkType === null && defaults) issues.push(...issue(policy, 'apiCheckDefaults.url', urlHost(defaults.url)));
  if (issues.length) throw new ValidationError(issues);
}

/**
 * A WEBHOOK, CHAT or CHAT_APP channel whose URL is written as an address the policy refuses
 * (`http://127.0.0.1/`, `http://localhost/`) is refused when it is created or updated, naming the
 * field (`config.url`). Names and templated URLs are only known at delivery, which checks them then.
 */
export function checkChannelTargetFields(policy: TargetPolicy | undefined, channelType: string, config: unknown): void {
  if (!policy?.refuseInternalAddresses) return;
  const values = (config ?? {}) as Record<string, unknown>;
  const fields = CHANNEL_URL_FIELDS[channelType] ?? [];
  const issues = fields.flatMap((field) => issue(policy, `config.${field}`, urlHost(values[field]), REFUSED_FOR_ALERTS));
  if (issues.length) throw new ValidationError(issues);
}
