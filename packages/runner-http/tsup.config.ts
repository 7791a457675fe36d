import { vigilBuild } from '../../tsup.config';

// shims: the runner finds child/script-worker.cjs beside its own folder in both builds.
export default vigilBuild({ index: 'src/index.ts' }, { shims: true });
