import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger, Vigil, VigilOptions } from '@vigil/core';
import { createJiti } from 'jiti';

/**
 * What the `vigil` command asks of the host's Vigil: an engine that claims only the check sessions
 * this process starts (no scheduled runs, reminders or retention: those are the server's), and no
 * alert delivery (the alerts of those runs wait in the outbox for the server). Pass them on to
 * `createVigil` beside the host's own store, secret key and runners.
 */
export interface CliVigilOptions {
  engine: { kinds: ['session'] };
  alerts: { enabled: false };
  /** A console logger at VIGIL_LOG_LEVEL, when that is set. */
  logger?: Logger;
}

/** The default export of `vigil.config.ts` (or a function answering it, sync or async). */
export interface VigilCliConfig {
  /** Builds the host's Vigil (store, secret key, runners) with the options the command gives. */
  vigil: (options: CliVigilOptions) => Vigil | Promise<Vigil>;
  /**
   * The account the commands act for (`plan`, `apply`, `trigger`, `keys create`); `--account`
   * overrides it. Required by those commands, and it must exist: the host makes its accounts (e.g.
   * `accounts.ensure` in its `vigil` function).
   */
  account?: string;
  /** The project the constructs form (default `default`); `--project` overrides it. */
  project?: string;
  /** The constructs `plan` and `apply` sync (from `@vigil/core/constructs`). */
  constructs?: readonly unknown[];
}

/** What a config file may export by default. */
export type VigilCliConfigExport = VigilCliConfig | (() => VigilCliConfig | Promise<VigilCliConfig>);

/** Types a config file's default export: `export default defineConfig({ vigil, account, constructs })`. */
export function defineConfig<T extends VigilCliConfigExport>(config: T): T {
  return config;
}

/** The names looked for in the working directory, first found wins. */
export const CONFIG_FILES = ['vigil.config.ts', 'vigil.config.mts', 'vigil.config.mjs', 'vigil.config.cjs', 'vigil.config.js'] as const;

/** The config file is missing or wrong: answered with the usage exit code. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Which file to load: `--config`, else VIGIL_CONFIG, else the first of CONFIG_FILES in `cwd`. */
export function findConfigFile(given: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  const named = given ?? (env.VIGIL_CONFIG || undefined);
  if (named !== undefined) {
    const file = resolve(cwd, named);
    if (!existsSync(file)) throw new ConfigError(`no config file at ${file}${given === undefined ? ' (from VIGIL_CONFIG)' : ''}`);
    return file;
  }
  for (const name of CONFIG_FILES) {
    const file = resolve(cwd, name);
    if (existsSync(file)) return file;
  }
  throw new ConfigError(`no config file: write ${CONFIG_FILES.join(', ')} in ${cwd}, or pass --config <file> (or set VIGIL_CONFIG)`);
}

/** Loads a config file through jiti (TypeScript or JavaScript, ESM or CommonJS) and checks its shape. */
export async function loadConfigFile(file: string): Promise<VigilCliConfig> {
  let exported: unknown;
  try {
    const jiti = createJiti(file, { interopDefault: true });
    exported = await jiti.import(file, { default: true });
  } catch (err) {
    throw new ConfigError(`${file} failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  let config = exported;
  if (typeof exported === 'function') {
    try {
      config = await (exported as () => unknown)();
    } catch (err) {
      throw new ConfigError(`${file}: its default export (a function) failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return checkConfig(file, config);
}

function checkConfig(file: string, config: unknown): VigilCliConfig {
  const shape = '{ vigil, account, project, constructs }';
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ConfigError(`${file} must export by default an object ${shape}, or a function answering one`);
  }
  const c = config as Record<string, unknown>;
  if (typeof c.vigil !== 'function') {
    throw new ConfigError(`${file}: \`vigil\` must be a function (options) => Vigil that builds the host's Vigil with those createVigil options`);
  }
  for (const field of ['account', 'project'] as const) {
    if (c[field] !== undefined && (typeof c[field] !== 'string' || c[field] === '')) throw new ConfigError(`${file}: \`${field}\` must be a non-empty string`);
  }
  if (c.constructs !== undefined && !Array.isArray(c.constructs)) throw new ConfigError(`${file}: \`constructs\` must be an array`);
  return c as unknown as VigilCliConfig;
}

/** The createVigil options of a CLI process. */
export function cliVigilOptions(logger: Logger | undefined): CliVigilOptions {
  const options: CliVigilOptions = { engine: { kinds: ['session'] }, alerts: { enabled: false }, ...(logger ? { logger } : {}) };
  // What the command gives, createVigil takes.
  return options satisfies Pick<VigilOptions, 'engine' | 'alerts' | 'logger'>;
}
