import { isSecretVariable, type EnvironmentVariable } from '../model/shared.js';
import type { SecretBox } from '../ports/secret-box.js';

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
