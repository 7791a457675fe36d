import { build } from 'tsup';
import { vigilBuild } from '../../tsup.config';

// shims: the runner finds child/script-worker.cjs beside its own folder in both builds.
export default vigilBuild({ index: 'src/index.ts' }, {
  shims: true,
  // The multi-step worker with `expect` and the child files it loads in one file, built after the
  // main build has cleaned dist: a script's process reads one file instead of resolving and
  // reading expect's modules. child/script-worker.cjs loads Node's own modules only and ships as is.
  onSuccess: async () => {
    await build({
      entry: { 'multistep-worker': 'child/multistep-worker.cjs' },
      format: ['cjs'],
      outExtension: () => ({ js: '.cjs' }),
      outDir: 'dist',
      clean: false,
      dts: false,
      sourcemap: false,
      splitting: false,
      platform: 'node',
      target: 'node20',
      noExternal: [/./],
      silent: true,
      // This file's own config would run this hook again.
      config: false,
    });
  },
});
