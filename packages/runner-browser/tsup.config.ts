import { build } from 'tsup';
import { vigilBuild } from '../../tsup.config';

/**
 * puppeteer-core's parts a script's process cannot use: WebDriver BiDi (chromium-bidi; the
 * process is handed a CDP connection) and downloading browsers (proxy-agent, yargs; no writes
 * outside its folder). They stay out of the bundle, a third of its size; using one throws.
 */
const UNUSABLE = /^(chromium-bidi|proxy-agent|yargs)($|\/)/;

// shims: the runner finds its script worker beside its own file in both builds.
export default vigilBuild({ index: 'src/index.ts' }, {
  shims: true,
  // The script worker with puppeteer-core and expect in one file, built after the main build has
  // cleaned dist: a script's process reads one file instead of resolving and reading ~250 modules.
  onSuccess: async () => {
    await build({
      entry: { 'script-worker': 'child/worker.cjs' },
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
      esbuildPlugins: [{
        name: 'unusable-modules',
        setup(esbuild) {
          esbuild.onResolve({ filter: UNUSABLE }, (args) => ({ path: args.path, namespace: 'unusable' }));
          // Required at load time by modules that use them only on call: loading succeeds, a call throws.
          esbuild.onLoad({ filter: /.*/, namespace: 'unusable' }, (args) => ({
            loader: 'js',
            contents: `const unusable = () => { throw new Error(${JSON.stringify(`${args.path} is not available to check scripts`)}); };
module.exports = new Proxy({}, { get: (_, key) => (key === '__esModule' || typeof key === 'symbol' ? undefined : unusable) });`,
          }));
        },
      }],
    });
  },
});
