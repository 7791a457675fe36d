import { ValidationError, type ValidationIssue } from '../errors.js';
import { isAbsoluteHttpUrl, isTemplatedUrl } from '../model/urls.js';
import type { TargetPolicy } from '../runner-kit/target-policy.js';

const REFUSED = 'which the target policy of this Vigil refuses (it runs no checks against loopback, private, link-local or other internal addresses)';

/** The host of an http(s) URL written out in full; null for a relative or templated one (known only at run time). */
function urlHost(url: unknown): string | null {
  if (typeof url !== 'string' || isTemplatedUrl(url) || !isAbsoluteHttpUrl(url)) return null;
  return new URL(url).hostname;
}

function issue(policy: TargetPolicy, path: string, host: string | null): ValidationIssue[] {
  if (host === null || host === '') return [];
  const refusal = policy.checkHost(host);
  return refusal ? [{ path, message: `names ${refusal.reason}, ${REFUSED}` }] : [];
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
  if (checkType === 'TCP' && typeof request?.hostname === 'string') issues.push(...issue(policy, 'request.hostname', request.hostname));
  if (checkType === 'API') issues.push(...issue(policy, 'request.url', urlHost(request?.url)));
  if (typeof record.sslCheckDomain === 'string') issues.push(...issue(policy, 'sslCheckDomain', record.sslCheckDomain));
  const defaults = (record.apiCheckDefaults ?? null) as Record<string, unknown> | null;
  if (checkType === null && defaults) issues.push(...issue(policy, 'apiCheckDefaults.url', urlHost(defaults.url)));
  if (issues.length) throw new ValidationError(issues);
}
