import { vigilBuild } from '../../tsup.config';

export default vigilBuild({ index: 'src/index.ts' });
