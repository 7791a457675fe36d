/** @vigil/runner-http: runs API (HTTP) checks. */
export {
  API_CHECK_TYPE,
  httpRunner,
  registerHttpRunner,
  type HttpRunner,
  type HttpRunnerOptions,
} from './http-runner.js';
export type { LookupFunction } from './connector.js';
export { validateApiCheck } from './validate.js';
