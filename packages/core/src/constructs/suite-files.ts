import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** Folders a suite's files never come from: dependencies, Playwright's output, hidden ones. */
const SKIPPED = new Set(['node_modules', 'test-results', 'playwright-report', 'blob-report']);

/**
 * A Playwright Test project's files in a folder, by their path in it (`/`-separated), for a
 * `PlaywrightCheck`'s `files`: `new PlaywrightCheck('shop', { name: 'Shop', files: suiteFiles('checks/shop') })`.
 * A relative folder is taken from the current directory (where `vigil apply` runs). Hidden files
 * and folders, `node_modules` and Playwright's output folders are left out; what is left is sent
 * as it is, and apply refuses a suite over its limits naming them.
 */
export function suiteFiles(folder: string): Record<string, string> {
  const root = resolve(folder);
  if (!statSync(root).isDirectory()) throw new TypeError(`suiteFiles: ${folder} is not a folder`);
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files[relative(root, path).split(sep).join('/')] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return files;
}
