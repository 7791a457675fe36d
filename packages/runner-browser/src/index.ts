/** @vigil/runner-browser: runs browser checks as scripts in a real Chromium. */
export {
  BROWSER_CHECK_TYPE,
  browserRunner,
  registerBrowserRunner,
  type BrowserRunner,
  type BrowserRunnerOptions,
  type BrowserRuntime,
} from './browser-runner.js';
export { defaultChromium } from './chromium.js';
// The artifact store is core's (the runner kit), shared with the other runners that keep files of a run.
export { directoryArtifacts, type ArtifactFile, type ArtifactKey, type ArtifactRecord, type ArtifactStore } from '@vigil/core';
export { cumulativeLayoutShift, type ConsoleEntry, type FailedRequest, type NavigationVitals } from './page-recorder.js';
export { validateBrowserCheck } from './validate.js';
// The target proxy is core's (the runner kit), shared with the Playwright runner.
export type { ProxyConnectionError, RefusedTarget } from '@vigil/core';
