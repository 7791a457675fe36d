import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { isSuiteConfigFile } from '@vigil/core';

/** The runner's own files in a suite's folder: a hidden name, which no suite path may have. */
export const WRAPPER_CONFIG = '.vigil.config.ts';
const OWN_FOLDER = '.vigil';

/** What the wrapper config forces over the suite's own config. */
export interface RunConfig {
  globalTimeoutMs: number;
  workers: number;
  /** The shared browser's endpoint; null: each worker launches `executablePath` itself. */
  wsEndpoint: string | null;
  executablePath: string;
  /** The target policy's proxy (`socks5://127.0.0.1:port`), or null. */
  proxyServer: string | null;
}

export interface SuiteFolder {
  dir: string;
  configFile: string;
  reportFile: string;
  outputDir: string;
  remove(): Promise<void>;
}

/** Why a suite path may not be written, or null: it must stay inside the folder and keep off node_modules and the runner's files. */
export function suitePathProblem(path: string): string | null {
  const root = resolve('/suite');
  const full = resolve(root, path);
  if (path === '' || !full.startsWith(root + sep)) return `${path} would be written outside the suite's folder`;
  const first = relative(root, full).split(sep)[0]!;
  if (first === 'node_modules' || first.startsWith('.')) return `${path} is where the runner keeps its own files (node_modules, hidden files)`;
  return null;
}

/**
 * A fresh folder for one run: the check's files, `node_modules` linked to the folder that holds
 * the host's `@playwright/test` (so that the suite's `import ... from '@playwright/test'` resolves),
 * and the wrapper config that loads the suite's own config and holds it to Vigil's settings.
 */
export async function writeSuiteFolder(files: Record<string, string>, nodeModules: string, config: RunConfig): Promise<SuiteFolder> {
  const dir = await mkdtemp(join(tmpdir(), 'vigil-playwright-'));
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    for (const [path, content] of Object.entries(files)) {
      const problem = suitePathProblem(path);
      if (problem) throw new SuitePathError(problem);
      const full = join(dir, path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, content, { flag: 'wx' });
    }
    await symlink(nodeModules, join(dir, 'node_modules'), 'dir');
    const outputDir = join(dir, OWN_FOLDER, 'output');
    const reportFile = join(dir, OWN_FOLDER, 'report.json');
    await mkdir(outputDir, { recursive: true });
    const suiteConfig = Object.keys(files).find(isSuiteConfigFile) ?? null;
    const configFile = join(dir, WRAPPER_CONFIG);
    await writeFile(configFile, wrapperConfig(suiteConfig, { ...config, outputDir, reportFile }));
    return { dir, configFile, reportFile, outputDir, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

export class SuitePathError extends Error {}

/** The module specifier of the suite's config from the wrapper (`.ts` without its extension, as TypeScript imports it). */
const specifier = (config: string) => `./${config.replace(/\.ts$/, '')}`;

/**
 * The config Playwright runs: the suite's own (its projects, timeouts, retries, `use`, ...) with
 * Vigil's settings over it, in `use` and in every project's `use` (a project's own would win).
 */
export function wrapperConfig(suiteConfig: string | null, settings: RunConfig & { outputDir: string; reportFile: string }): string {
  const use: Record<string, unknown> = {
    browserName: 'chromium',
    channel: undefined,
    headless: true,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
  };
  // Under a target policy every context's traffic goes through the policy's proxy, loopback included.
  if (settings.proxyServer) use.proxy = { server: settings.proxyServer };
  if (settings.wsEndpoint) use.connectOptions = { wsEndpoint: settings.wsEndpoint };
  else use.launchOptions = { executablePath: settings.executablePath };
  const vigil = {
    globalTimeout: settings.globalTimeoutMs,
    workers: settings.workers,
    outputDir: settings.outputDir,
    reporter: [['json', { outputFile: settings.reportFile }]],
    use,
  };
  return [
    '// Written by Vigil for one run of a Playwright check: the suite\'s config with Vigil\'s settings over it.',
    suiteConfig ? `import * as suite from ${JSON.stringify(specifier(suiteConfig))};` : 'const suite = {};',
    `const vigil: any = ${JSON.stringify(vigil, (_, value: unknown) => (value === undefined ? null : value))};`,
    // JSON has no undefined: a setting the runner clears is null there and removed here.
    'for (const key of Object.keys(vigil.use)) if (vigil.use[key] === null) vigil.use[key] = undefined;',
    'const loaded: any = (suite as any).default ?? suite;',
    'const base: any = loaded && typeof loaded === \'object\' ? loaded : {};',
    'const held = (use: any) => ({ ...(use ?? {}), ...vigil.use });',
    'export default {',
    '  ...base,',
    '  globalTimeout: vigil.globalTimeout,',
    '  outputDir: vigil.outputDir,',
    '  reporter: vigil.reporter,',
    '  workers: vigil.workers,',
    '  forbidOnly: true,',
    '  use: held(base.use),',
    '  ...(Array.isArray(base.projects) ? { projects: base.projects.map((p: any) => ({ ...p, outputDir: undefined, use: held(p?.use) })) } : {}),',
    '};',
    '',
  ].join('\n');
}
