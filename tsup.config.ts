import { defineConfig, type Options } from 'tsup';

/**
 * The one build every package shares: ESM (.mjs) and CJS (.cjs), each with its own
 * declaration file (.d.mts / .d.cts). A package passes its entry points and nothing else.
 */
export function vigilBuild(entry: Record<string, string>, extra: Partial<Options> = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
    ...extra,
  });
}

export default vigilBuild({ index: 'src/index.ts' });
