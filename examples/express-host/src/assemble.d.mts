// Types of src/assemble.mjs, for the host's TypeScript (src/host-class).
import type { Vigil, VigilOptions } from '@vigil/core';

export interface HostSettings {
  /** A SQLite file, or a postgres:// URL. */
  db: string;
  postgres: boolean;
  /** The state directory (secret key, account id, API key, screenshots). */
  stateDir: string;
}

export function hostSettings(env?: Record<string, string | undefined>): HostSettings;
export function persisted(stateDir: string, envName: string, file: string, make: () => string): { value: string; made: boolean };
export function hostAccountId(stateDir: string): string;
export function accountTargetPolicy(stateDir: string, env?: Record<string, string | undefined>): (accountId: string) => 'open' | 'public-only';
export function assembleVigil(settings: HostSettings, options?: Omit<VigilOptions, 'secretKey'>): Vigil;
