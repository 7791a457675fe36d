import { vigilBuild } from '../../tsup.config';

export default vigilBuild({
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  constructs: 'src/constructs/index.ts',
  internals: 'src/internals.ts',
});
