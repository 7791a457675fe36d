import { vigilBuild } from '../../tsup.config';

// shims: the router finds swagger-ui-dist beside its own file in both builds (import.meta.url in ESM, __dirname in CJS).
export default vigilBuild({ index: 'src/index.ts' }, { shims: true });
