import { randomBytes } from 'node:crypto';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_OK, type Vigil } from '@vigil/core';

/** Raised for a wrong command line of `secret` or `keys`; answered with EXIT_USAGE. */
export class CliUsageError extends Error {}

/** What the commands of this package write to and work on. */
export interface ExtraContext {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The host's Vigil, built from the config file on first need. */
  vigil: () => Promise<Vigil>;
  /** The account: `--account`, else the config's `account`; checked to exist in the store. */
  account: (given: string | undefined) => Promise<string>;
  /** Loads the config file named by `--config` (or found the usual way), once. */
  loadConfig: (path: string | undefined) => Promise<unknown>;
  /** The full usage text, as `vigil --help` prints it. */
  usage: () => Promise<string>;
}

/** The default name of a key made by `vigil keys create`. */
export const DEFAULT_KEY_NAME = 'vigil cli';

function parse(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): Record<string, unknown> {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
}

/** `vigil secret`: a new 32-byte key (64 hex characters) for createVigil's `secretKey`. */
export async function secretCommand(args: readonly string[], ctx: Pick<ExtraContext, 'stdout' | 'usage'>): Promise<number> {
  const values = parse(args, { help: { type: 'boolean', short: 'h' } });
  if (values.help === true) {
    ctx.stdout(await ctx.usage());
    return EXIT_OK;
  }
  ctx.stdout(`${randomBytes(32).toString('hex')}\n`);
  return EXIT_OK;
}

/**
 * `vigil keys create [--name <name>]`: a new API key for the account, printed once. The key alone
 * goes to stdout (so `KEY=$(vigil keys create)` works), what it is to stderr; `--json` prints the
 * key with its record.
 */
export async function keysCommand(args: readonly string[], ctx: ExtraContext): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    ctx.stdout(await ctx.usage());
    return EXIT_OK;
  }
  if (sub !== 'create') throw new CliUsageError(sub === undefined ? 'which? `keys create`' : `unknown subcommand "${sub}" (there is \`keys create\`)`);
  const values = parse(rest, {
    name: { type: 'string', short: 'n' },
    config: { type: 'string', short: 'c' },
    account: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) {
    ctx.stdout(await ctx.usage());
    return EXIT_OK;
  }
  const name = (values.name as string | undefined) ?? DEFAULT_KEY_NAME;
  if (name.trim() === '') throw new CliUsageError('--name must not be empty');
  await ctx.loadConfig(values.config as string | undefined);
  const accountId = await ctx.account(values.account as string | undefined);
  const vigil = await ctx.vigil();
  const { apiKey, key } = await vigil.apiKeys.create(accountId, { name });
  if (values.json === true) {
    ctx.stdout(`${JSON.stringify({ key, apiKey }, null, 2)}\n`);
  } else {
    ctx.stdout(`${key}\n`);
    ctx.stderr(`Created API key "${apiKey.name}" (id ${apiKey.id}) for account ${accountId}. It is shown only this once: keep it now.\n`);
  }
  return EXIT_OK;
}

const EXTRA_LINES = [
  '  secret   Print a new secret key (32 random bytes, hex) for createVigil\'s secretKey; needs no config',
  '  keys     create [--name <name>]: create an API key for the account and print it once',
];

const EXTRA_OPTIONS = `Options of keys create:
  -n, --name <name>      The key's name (default "${DEFAULT_KEY_NAME}")
  -c, --config <file>    The config file; --account <id> as for plan
      --json             Print the key with its record as JSON
  The key alone goes to stdout, what it is to stderr.

The config file: --config <file>, else VIGIL_CONFIG, else the first of vigil.config.ts, .mts,
.mjs, .cjs or .js in the working directory. migrate, plan, apply, destroy, trigger and keys create need one; secret does not.

`;

/**
 * Adds `secret` and `keys` to the usage text of core's runCli wherever it appears in a piece of
 * output (help, or an unknown command's message), and names this package's config files.
 */
export function augmentUsage(text: string): string {
  const start = text.indexOf('\nCommands:\n');
  if (start < 0) return text;
  const blockEnd = text.indexOf('\n\n', start + 1);
  if (blockEnd < 0) return text;
  let out = `${text.slice(0, blockEnd)}\n${EXTRA_LINES.join('\n')}${text.slice(blockEnd)}`;
  out = out
    .replace('(default: vigil.config.mjs)', '(default: see below)')
    .replace("(default: the config's, else the host's)", "(default: the config's account)");
  const exit = out.indexOf('Exit codes:');
  if (exit >= 0) out = `${out.slice(0, exit)}${EXTRA_OPTIONS}${out.slice(exit)}`;
  return out.replace(/1 a check failed, a construct is invalid, or an error; 2 usage error\./, '1 a check failed, a construct is invalid, or an error;\n2 usage error, or the config file is missing or malformed.');
}
