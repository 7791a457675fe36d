import type { Check } from '../model/check.js';
import { isSecretVariable, type EnvironmentVariable } from '../model/shared.js';
import type { SecretBox } from '../ports/secret-box.js';
import { fillVariables } from '../runner-kit/variables.js';

/** What a secret value reads as in every response. */
export const MASKED = '********';

/** Secret variables (flagged, or named SERVICE_SECRET_*) with their values masked. */
export function maskVariables(vars: readonly EnvironmentVariable[] | null): EnvironmentVariable[] | null {
  if (vars === null) return null;
  return vars.map((x) => (isSecretVariable(x) ? { ...x, value: MASKED } : { ...x }));
}

/**
 * Seals secret values before they are stored. A client that echoes back a masked value it read
 * keeps the stored secret for that key.
 */
export function sealVariables(
  vars: readonly EnvironmentVariable[] | null,
  box: SecretBox,
  previous: readonly EnvironmentVariable[] | null = null,
): EnvironmentVariable[] | null {
  if (vars === null) return null;
  const before = new Map((previous ?? []).map((x) => [x.key, x]));
  return vars.map((x) => {
    if (!isSecretVariable(x)) return { ...x };
    const old = before.get(x.key);
    if (x.value === MASKED && old && box.isSealed(old.value)) return { ...x, value: old.value };
    return { ...x, value: box.encrypt(x.value) };
  });
}

/** Opened copies for a run. Only secret variables were sealed; any other value is taken as it is. */
export function openVariables(vars: readonly EnvironmentVariable[] | null, box: SecretBox): EnvironmentVariable[] {
  return (vars ?? []).map((x) => (isSecretVariable(x) && box.isSealed(x.value) ? { ...x, value: box.decrypt(x.value) } : { ...x }));
}

/**
 * The values a run must keep out of what it stores and shows: each secret variable's value, and
 * for an API check whose basic auth a secret fills in, `user:password` too. That pair travels as
 * base64 of the whole (an echoed Authorization header), where base64 of the password alone does
 * not occur.
 */
export function runSecrets(vars: readonly EnvironmentVariable[], check: Check): string[] {
  const secrets = vars.filter(isSecretVariable).map((x) => x.value).filter((x) => x.length > 0);
  const auth = check.checkType === 'API' ? check.request.basicAuth : null;
  if (!auth || auth.username === '' || secrets.length === 0) return secrets;
  const environment = Object.fromEntries(vars.map((x) => [x.key, x.value]));
  const pair = `${fillVariables(auth.username, environment)}:${fillVariables(auth.password, environment)}`;
  return secrets.some((secret) => pair.includes(secret)) ? [...secrets, pair] : secrets;
}
