/** Exit codes of the `vigil` command. */
export const EXIT_OK = 0;
/** Invalid constructs, a failed check, or an error along the way. */
export const EXIT_FAILURE = 1;
/** The command line itself is wrong: unknown command or option, missing or malformed value. */
export const EXIT_USAGE = 2;

/** Options the commands that read the config file share. */
export const CONFIG_OPTIONS = {
  config: { type: 'string', short: 'c' },
  account: { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parsed option values of a command. */
export type Values = Record<string, string | boolean | string[] | undefined>;
