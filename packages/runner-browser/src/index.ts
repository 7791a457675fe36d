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
export { directoryArtifacts, type ArtifactFile, type ArtifactKey, type ArtifactRecord, type ArtifactStore } from './artifacts.js';
export { cumulativeLayoutShift, type ConsoleEntry, type FailedRequest, type NavigationVitals } from './page-recorder.js';
export { validateBrowserCheck } from './validate.js';
export type { ProxyConnectionError, RefusedTarget } from './target-proxy.js';
