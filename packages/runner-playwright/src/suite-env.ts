/** The names the runner sets itself: a check's or group's variable of one of these names is replaced. */
export const RUNNER_SET_VARIABLES = ['PATH', 'HOME', 'TMPDIR', 'CI', 'FORCE_COLOR', 'PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD'] as const;

/**
 * Names a check's or group's variable may not have: Playwright's and Node's own switches, which
 * would change how the runner's Playwright runs (its browsers, its reporters, its output, the
 * options of its Node), not only what the suite reads. They are dropped.
 */
export const isReservedVariable = (name: string): boolean => /^(PLAYWRIGHT_|PW_|NODE_OPTIONS$|NODE_PATH$)/.test(name);

/**
 * The environment of a suite's processes: the job's (the check's and its group's variables, and
 * the engine's `VIGIL_RUN_SOURCE`) without the reserved names, then the runner's own. Nothing of the
 * host's environment but `PATH`.
 */
export function suiteEnvironment(jobEnvironment: Readonly<Record<string, string>>, dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(jobEnvironment)) if (!isReservedVariable(name)) env[name] = value;
  return {
    ...env,
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: dir,
    TMPDIR: dir,
    CI: '1',
    FORCE_COLOR: '0',
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
  };
}
