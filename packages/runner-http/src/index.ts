/** @vigil/runner-http: runs API (HTTP) checks, URL checks and multi-step checks. */
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
export {
  MULTI_STEP_CHECK_TYPE,
  multiStepRunner,
  registerMultiStepRunner,
  type MultiStepRunner,
  type MultiStepRunnerOptions,
} from './multistep-runner.js';
export { declaredSteps, multiStepSyntaxError, validateMultiStepCheck } from './multistep-script.js';
