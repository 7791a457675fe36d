import { vigilBuild } from '../../tsup.config';

// shims: the runner finds its script worker (child/worker.cjs) beside its own file in both builds.
export default vigilBuild({ index: 'src/index.ts' }, { shims: true });
