import type { Check } from '../model/check.js';
import { isSecretVariable, type EnvironmentVariable } from '../model/shared.js';
import type { SecretBox } from '../ports/secret-box.js';
import { MIN_SCRUBBED_LENGTH } from '../runner-kit/scrub.js';
import { credentialSecrets } from '../runner-kit/credential-headers.js';
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
 * The values a run must keep out of what it stores and shows (its results, bodies, logs, error
 * groups and artifacts): each secret variable's value, and for an API check (its group's
 * apiCheckDefaults merged in) what its credential headers carry once their variables are filled
 * (`Bearer {{TOKEN}}` as sent), and its basic-auth password with `user:password`, which travels as
 * base64 of the whole (an echoed Authorization header), where base64 of the password alone does
 * not occur.
 */
export function runSecrets(vars: readonly EnvironmentVariable[], check: Check): string[] {
  const secrets = vars.filter(isSecretVariable).map((x) => x.value).filter((x) => x.length > 0);
  if (check.checkType !== 'API') return secrets;
  const environment = Object.fromEntries(vars.map((x) => [x.key, x.value]));
  const fill = (text: string) => fillVariables(text, environment);
  const out = new Set(secrets);
  for (const header of check.request.headers) {
    for (const value of credentialSecrets(header.key, fill(header.value))) out.add(value);
  }
  const auth = check.request.basicAuth;
  const password = auth && auth.username !== '' ? fill(auth.password) : '';
  if (password !== '') {
    for (const value of [password, `${fill(auth!.username)}:${password}`]) if (value.length >= MIN_SCRUBBED_LENGTH) out.add(value);
  }
  return [...out];
}
