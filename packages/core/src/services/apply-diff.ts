import { LOCKED_CONFIG_LISTS, SECRET_CONFIG_FIELDS, type AlertChannelType } from '../model/alert-channel.js';
import type { ResourceKind } from '../model/managed-resource.js';
import type { EnvironmentVariable } from '../model/shared.js';
import { MASKED, maskVariables } from './masking.js';

/** JSON with object keys sorted, so that equal values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }) ?? 'undefined';
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The fields (of those given) whose desired value differs from the stored one. */
export function changedFields(desired: Record<string, unknown>, stored: Record<string, unknown>, fields: readonly string[]): string[] {
  return fields.filter((f) => !sameValue(desired[f], stored[f]));
}

/**
 * A value as a plan may show it: secret environment variables, secret channel config fields and
 * the locked entries of a channel's key/value lists (a webhook's headers and query parameters)
 * masked, so that a plan printed in a deployment log leaks nothing.
 */
export function displayValue(kind: ResourceKind, type: string | null, field: string, value: unknown, secretFields?: readonly string[]): unknown {
  if (field === 'environmentVariables' && Array.isArray(value)) return maskVariables(value as EnvironmentVariable[]);
  if (kind === 'AlertChannel' && field === 'config' && value && typeof value === 'object') {
    const hidden = secretFields ?? (type && type in SECRET_CONFIG_FIELDS ? SECRET_CONFIG_FIELDS[type as AlertChannelType] : []);
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const f of hidden) if (typeof out[f] === 'string' && out[f] !== '') out[f] = MASKED;
    const lists = type && type in LOCKED_CONFIG_LISTS ? LOCKED_CONFIG_LISTS[type as AlertChannelType] : [];
    for (const list of lists) {
      const entries = out[list];
      if (!Array.isArray(entries)) continue;
      out[list] = entries.map((e: unknown) => (e && typeof e === 'object' && (e as { locked?: unknown }).locked === true ? { ...(e as object), value: MASKED } : e));
    }
    return out;
  }
  return value;
}
