import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
/** `require` from this package's root: the host's `@playwright/test` as this package resolves it. */
const localRequire = createRequire(join(realpathSync(join(here, '..')), 'package.json'));

/** Where the host's Playwright Test is: its CLI, and the node_modules folder a suite's folder links to. */
export interface PlaywrightInstall {
  /** `@playwright/test`'s cli.js, run with the host's Node. */
  cli: string;
  /** The node_modules folder that holds `@playwright/test`. */
  nodeModules: string;
  version: string;
}

let found: PlaywrightInstall | null = null;

/** The host's `@playwright/test` (a peer dependency), found once. */
export function playwrightInstall(): PlaywrightInstall {
  if (found) return found;
  let manifest: string;
  try {
    manifest = localRequire.resolve('@playwright/test/package.json');
  } catch {
    throw new Error('@playwright/test is not installed beside @vigil/runner-playwright (npm install @playwright/test)');
  }
  // The folder a suite's `import ... from '@playwright/test'` resolves from: the one that holds the
  // package as it is named (a workspace's or pnpm's symlinks kept as they are).
  const root = dirname(manifest);
  const nodeModules = dirname(dirname(root));
  const cli = join(root, 'cli.js');
  if (!existsSync(cli)) throw new Error(`@playwright/test at ${root} has no cli.js`);
  const { version } = localRequire(manifest) as { version: string };
  found = { cli, nodeModules, version };
  return found;
}

interface BrowserServerHandle {
  wsEndpoint(): string;
  close(): Promise<void>;
  kill(): Promise<void>;
  process(): { pid?: number; exitCode: number | null; signalCode: NodeJS.Signals | null; once(event: 'exit', fn: () => void): unknown };
}
interface ChromiumType {
  launchServer(options: { executablePath: string; headless: boolean; args?: string[]; timeout?: number; proxy?: { server: string } }): Promise<BrowserServerHandle>;
}

/** Playwright's `chromium` browser type (from `@playwright/test`), loaded on first use. */
export function chromiumType(): ChromiumType {
  return (localRequire('@playwright/test') as { chromium: ChromiumType }).chromium;
}
