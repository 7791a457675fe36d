import { vigilBuild } from '../../tsup.config';

// The bin (dist/bin.mjs, with its shebang) and the library: defineConfig and the config's types.
export default vigilBuild({ index: 'src/index.ts', bin: 'src/bin.ts' });
