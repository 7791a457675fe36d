import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The files of child/ the runner loads or hands to a script's process, found beside src/ (the
// sources) or dist/ (the built package, whose `files` ship child/).

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
const packageRoot = realpathSync(join(here, '..'));
/** `require` from the package's root: its dependencies and child/ files. */
export const localRequire = createRequire(join(packageRoot, 'package.json'));

/**
 * The script worker and what its process may read. The built package runs the bundle beside it
 * (the worker with puppeteer-core and expect in one file: one read, no module resolution);
 * from the sources, child/worker.cjs loads its modules from node_modules. The loader requires
 * core's child/fence.cjs at the real path it is handed (`fenceFile`): resolving the name itself
 * would read folders (a workspace's or pnpm's symlinks) the process may not read.
 */
export function scriptWorker(): { loaderFile: string; workerFile: string; fenceFile: string; readPaths: string[] } {
  const loaderFile = join(packageRoot, 'child', 'load-worker.cjs');
  const fenceFile = realpathSync(localRequire.resolve('@vigil/core/child/fence.cjs'));
  const bundle = join(realpathSync(here), 'script-worker.cjs');
  if (existsSync(bundle)) return { loaderFile, workerFile: bundle, fenceFile, readPaths: [loaderFile, bundle, fenceFile] };
  const folders = new Set<string>([`${packageRoot}/*`, fenceFile]);
  for (const name of ['puppeteer-core', 'expect']) {
    const manifest = realpathSync(localRequire.resolve(`${name}/package.json`));
    const at = manifest.lastIndexOf(`${join('node_modules', name)}`);
    folders.add(`${at >= 0 ? manifest.slice(0, at + 'node_modules'.length) : dirname(manifest)}/*`);
  }
  return { loaderFile, workerFile: join(packageRoot, 'child', 'worker.cjs'), fenceFile, readPaths: [...folders] };
}
