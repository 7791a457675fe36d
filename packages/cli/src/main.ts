import { consoleLogger, EXIT_FAILURE, EXIT_USAGE, isVigilError, runCli, type Vigil } from '@vigil/core';
import { cliVigilOptions, ConfigError, findConfigFile, loadConfigFile, type VigilCliConfig } from './config.js';
import { augmentUsage, CliUsageError, keysCommand, secretCommand, type ExtraContext } from './extra-commands.js';

/** Where the command runs: its arguments, directory, environment and output. */
export interface MainOptions {
  /** The working directory the config file is looked for in. Default `process.cwd()`. */
  cwd?: string;
  /** Default `process.env` (VIGIL_CONFIG, VIGIL_LOG_LEVEL). */
  env?: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** ANSI colours. Default false. */
  color?: boolean;
  /** stdout is a terminal (progress redraws one line). Default false. */
  interactive?: boolean;
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** The value of `--name value` or `--name=value` in argv, if given (the last one wins). */
function optionValue(args: readonly string[], names: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (names.includes(arg) && i + 1 < args.length) found = args[++i];
    for (const name of names) if (name.startsWith('--') && arg.startsWith(`${name}=`)) found = arg.slice(name.length + 1);
  }
  return found;
}

/** argv without `--config <file>` / `-c <file>` / `--config=<file>` (which migrate does not take from runCli). */
function withoutConfig(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if ((arg === '--config' || arg === '-c') && i + 1 < args.length) i++;
    else if (!arg.startsWith('--config=')) out.push(arg);
  }
  return out;
}

/**
 * The `vigil` command: core's runCli (plan, apply, trigger, migrate) on the Vigil the config file
 * builds, plus `secret` and `keys create`. Answers the exit code; closes the Vigil it built.
 */
export async function main(argv: readonly string[], options: MainOptions): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const stdout = (text: string) => options.stdout(augmentUsage(text));
  const stderr = (text: string) => options.stderr(augmentUsage(text));
  const level = env.VIGIL_LOG_LEVEL as (typeof LOG_LEVELS)[number] | undefined;
  const logger = level && LOG_LEVELS.includes(level) ? consoleLogger(level) : undefined;

  let configFailed = false;
  let loaded: Promise<VigilCliConfig> | null = null;
  const loadConfig = (path: string | undefined): Promise<VigilCliConfig> =>
    (loaded ??= (async () => {
      try {
        return await loadConfigFile(findConfigFile(path, cwd, env));
      } catch (err) {
        if (err instanceof ConfigError) configFailed = true;
        throw err;
      }
    })());

  const [name, ...rest] = argv;
  // migrate takes no --config from runCli: the file it builds the Vigil from is named here.
  const configPath = name === 'migrate' ? optionValue(rest, ['--config', '-c']) : undefined;
  let built: Vigil | null = null;
  let building: Promise<Vigil> | null = null;
  const vigil = (): Promise<Vigil> =>
    (building ??= (async () => {
      const config = await loadConfig(configPath);
      const made = await config.vigil(cliVigilOptions(logger));
      if (typeof made !== 'object' || made === null || typeof (made as Partial<Vigil>).close !== 'function' || typeof (made as Partial<Vigil>).apply !== 'function') {
        configFailed = true;
        throw new ConfigError('the config\'s `vigil` function must answer a Vigil (what createVigil answers)');
      }
      return (built = made);
    })());

  const accountOverride = optionValue(argv.slice(1), ['--account']);
  /** The account commands act for; it must exist (the CLI makes no accounts: the host does). */
  const account = async (given: string | undefined): Promise<string> => {
    const config = await loadConfig(undefined);
    const accountId = given ?? config.account;
    if (!accountId) throw new Error('no account: set `account` in the config file or pass --account <id>');
    const v = await vigil();
    if (!(await v.storage.accounts.get(accountId))) {
      throw new Error(`no account "${accountId}" in the store: the host makes its accounts (accounts.ensure in the config's vigil function, or its admin API)`);
    }
    return accountId;
  };

  const usage = async (): Promise<string> => {
    let text = '';
    await runCli(['--help'], { vigil, stdout: (t) => (text += t) });
    return augmentUsage(text);
  };

  let code: number;
  try {
    if (name === 'secret' || name === 'keys') {
      const ctx: ExtraContext = { stdout: options.stdout, stderr: options.stderr, vigil, account, loadConfig, usage };
      try {
        code = name === 'secret' ? await secretCommand(rest, ctx) : await keysCommand(rest, ctx);
      } catch (err) {
        if (err instanceof CliUsageError) {
          options.stderr(`vigil ${name}: ${err.message}\nRun "vigil --help" for the options.\n`);
          code = EXIT_USAGE;
        } else {
          options.stderr(`vigil ${name}: ${isVigilError(err) || err instanceof Error ? err.message : String(err)}\n`);
          code = EXIT_FAILURE;
        }
      }
    } else {
      const args = name === 'migrate' ? [name, ...withoutConfig(rest)] : [...argv];
      code = await runCli(args, {
        vigil,
        loadConfig: async (path) => {
          const config = await loadConfig(path);
          // An account the store lacks is named now, not as "Account not found" from the service.
          if (accountOverride ?? config.account) await account(accountOverride);
          return { accountId: config.account, project: config.project, constructs: config.constructs ?? null };
        },
        stdout,
        stderr,
        color: options.color ?? false,
        interactive: options.interactive ?? false,
      });
    }
  } finally {
    // Sessions are final here; closing stops the engine and releases the store, so the process ends.
    if (built) await (built as Vigil).close().catch((err: unknown) => options.stderr(`vigil: closing the store failed: ${err instanceof Error ? err.message : String(err)}\n`));
  }
  return configFailed && code !== 0 ? EXIT_USAGE : code;
}
