/** @vigil/runner-http: runs API (HTTP) checks and URL checks. */
export {
  API_CHECK_TYPE,
  httpRunner,
  registerHttpRunner,
  type HttpRunner,
  type HttpRunnerOptions,
} from './http-runner.js';
export { expectedStatusAssertions, registerUrlRunner, URL_CHECK_TYPE, urlRunner, type UrlRunner } from './url-runner.js';
export type { LookupFunction } from './connector.js';
export { validateApiCheck } from './validate.js';
