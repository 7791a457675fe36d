import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loginApi, loginFlow, multiStepJob, stepsOf, TOKEN } from './multistep-support.js';
import { localServers } from './support.js';

// The other tests run the sources (child/multistep-worker.cjs, loading expect from node_modules);
// these load the built package (ESM and CJS), whose runner runs dist/multistep-worker.cjs, the
// worker with expect and its child files bundled into one file.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const BUILT = existsSync(join(dist, 'index.mjs')) && existsSync(join(dist, 'index.cjs')) && existsSync(join(dist, 'multistep-worker.cjs'));

type RunnerModule = typeof import('../src/index.js');

describe('the package ships its multi-step worker', () => {
  it('child/ and dist/ in `files`, expect bundled for the build only (a devDependency)', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[]; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'child']));
    expect(manifest.devDependencies?.expect).toBe('^30.5.2');
    expect(manifest.dependencies?.expect).toBeUndefined();
    for (const file of ['multistep-worker.cjs', 'multistep-request.cjs', 'multistep-expect.cjs', 'script-guard.cjs', 'target-fence.cjs']) {
      expect(existsSync(join(root, 'child', file)), file).toBe(true);
    }
  });
});

describe.runIf(BUILT)('the built multi-step runner (dist, after npm run build)', () => {
  const serve = localServers();

  it('bundles expect: the worker requires no package at run time', () => {
    const bundle = readFileSync(join(dist, 'multistep-worker.cjs'), 'utf8');
    const required = [...bundle.matchAll(/\brequire\((['"])([^'"]+)\1\)/g)].map((m) => m[2]!).filter((name) => !name.startsWith('node:') && !name.includes('${'));
    const builtins = new Set(createRequire(import.meta.url)('node:module').builtinModules as string[]);
    expect(required.filter((name) => !builtins.has(name))).toEqual([]);
  });

  const builds: [string, () => Promise<RunnerModule>][] = [
    ['ESM', async () => (await import(pathToFileURL(join(dist, 'index.mjs')).href)) as RunnerModule],
    ['CJS', async () => createRequire(import.meta.url)(join(dist, 'index.cjs')) as RunnerModule],
  ];

  it.each(builds)('%s: runs a login flow in the bundled worker, a failing step and the next not run', async (_name, load) => {
    const { multiStepRunner } = await load();
    const api = await serve(loginApi);
    const runner = multiStepRunner();
    const passing = await runner.run(multiStepJob(loginFlow(api.origin)), new AbortController().signal);
    expect(passing).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(JSON.stringify(passing)).not.toContain(TOKEN);
    const failing = await runner.run(multiStepJob(loginFlow(api.origin, { profileStatus: 404 })), new AbortController().signal);
    expect(failing.errorMessage).toBe('Step "Get profile": expect(received).toBe(expected) … Expected: 404 Received: 200 (line 10)');
    expect(stepsOf(failing.details).map((s) => s.status)).toEqual(['passed', 'failed', 'not run']);
  });
});
