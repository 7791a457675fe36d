import { vigilBuild } from '../../tsup.config';

// valibot is bundled, code and types (it is no dependency): the declarations carry the few valibot
// types the exported schemas use instead of importing valibot's whole declaration file.
export default vigilBuild({ index: 'src/index.ts' }, {
  noExternal: ['valibot'],
  dts: { resolve: ['valibot'] },
});
