// Runs a TypeScript file of the repository under plain Node, against the packages' sources as
// vitest does (same aliases, esbuild's transform): `node --import <this file> fixture.ts`. For
// tests whose subject is a whole process of its own, one a test can kill with SIGKILL.
import { readFile } from 'node:fs/promises';
import { isMainThread } from 'node:worker_threads';
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';

const packages = new URL('../../packages/', import.meta.url);
const ALIASES = {
  '@vigil/core/testing': 'core/src/testing/index.ts',
  '@vigil/core/constructs': 'core/src/constructs/index.ts',
  '@vigil/core/internals': 'core/src/internals.ts',
};

export async function resolve(specifier, context, next) {
  const own = ALIASES[specifier] ?? (/^@vigil\/[a-z-]+$/.test(specifier) ? `${specifier.slice(7)}/src/index.ts` : null);
  if (own) return next(new URL(own, packages).href, context);
  try {
    return await next(specifier, context);
  } catch (err) {
    // The sources import each other as `./file.js`, as TypeScript emits them.
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    throw err;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await readFile(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file, sourcemap: 'inline' });
  return { format: 'module', source: code, shortCircuit: true };
}

if (isMainThread) register(import.meta.url, pathToFileURL('./'));
