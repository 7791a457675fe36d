import { LOCKED_CONFIG_LISTS, SECRET_CONFIG_FIELDS, type AlertChannelType } from '../model/alert-channel.js';
import type { ResourceKind } from '../model/managed-resource.js';
import type { EnvironmentVariable } from '../model/shared.js';
import { MASKED, maskVariables } from './masking.js';
import { ChannelCredentials, maskOpenedApiRequest, UNOPENED, type ApiCredentials } from './sealing.js';

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

const isApiCredentials = (value: unknown): value is ApiCredentials =>
  !!value && typeof value === 'object' && Array.isArray((value as { headers?: unknown }).headers);

/**
 * A value (opened) as a plan may show it, masked as a response shows it, so that a plan printed in
 * a deployment log leaks nothing: secret environment variables; an API check's request and a
 * group's apiCheckDefaults with their credential headers and basic-auth password; a channel's
 * secret config fields, the locked entries of its key/value lists, a webhook's credential headers
 * and a chat channel's URL (its scheme and host shown).
 */
export function displayValue(kind: ResourceKind, type: string | null, field: string, value: unknown, secretFields?: readonly string[]): unknown {
  if (field === 'environmentVariables' && Array.isArray(value)) return maskVariables(value as EnvironmentVariable[]);
  if (((kind === 'Check' && type === 'API' && field === 'request') || (kind === 'CheckGroup' && field === 'apiCheckDefaults')) && isApiCredentials(value)) {
    return maskOpenedApiRequest(value);
  }
  if (kind === 'AlertChannel' && field === 'config' && value && typeof value === 'object') {
    const hidden = secretFields ?? (type && type in SECRET_CONFIG_FIELDS ? SECRET_CONFIG_FIELDS[type as AlertChannelType] : []);
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const f of hidden) if (typeof out[f] === 'string' && out[f] !== '') out[f] = MASKED;
    const lists = type && type in LOCKED_CONFIG_LISTS ? LOCKED_CONFIG_LISTS[type as AlertChannelType] : [];
    // The values are opened already: the box is never asked.
    return new ChannelCredentials(type ?? '', lists, UNOPENED).mask(out);
  }
  return value;
}
