/** @vigil/runner-playwright: runs Playwright checks, a Playwright Test suite per check, against Chromium. */
export {
  PLAYWRIGHT_CHECK_TYPE,
  playwrightRunner,
  registerPlaywrightRunner,
  type PlaywrightRunner,
  type PlaywrightRunnerOptions,
} from './playwright-runner.js';
export type { SuiteTest } from './report.js';
export { validatePlaywrightCheck } from './validate.js';
export type { RefusedTarget } from '@vigil/core';
// The artifact store is core's (the runner kit), shared with the other runners that keep files of a run.
export { directoryArtifacts, type ArtifactFile, type ArtifactKey, type ArtifactRecord, type ArtifactStore } from '@vigil/core';
