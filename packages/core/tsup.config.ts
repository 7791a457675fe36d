import { vigilBuild } from '../../tsup.config';

const entry = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  constructs: 'src/constructs/index.ts',
  internals: 'src/internals.ts',
};

/**
 * valibot is bundled, code and types: a strict host (skipLibCheck false) then checks the valibot
 * types core's declarations use instead of valibot's whole declaration file (633 KB, most of its
 * check time). Bundling needs valibot out of core's dependencies: tsup leaves every dependency
 * external in the declaration build, whatever `resolve` says. A plugin's schemas, made with its own
 * valibot 1.x, match core's copy of the types structurally. The root declarations come from
 * src/model/index-declarations.ts: src/index.ts plus those valibot types, so that a plugin's own
 * declarations can name them.
 */
export default vigilBuild(entry, {
  noExternal: ['valibot'],
  dts: { resolve: ['valibot'], entry: { ...entry, index: 'src/model/index-declarations.ts' } },
});
