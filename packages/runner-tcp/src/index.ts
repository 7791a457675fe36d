/** @vigil/runner-tcp: runs TCP checks. */
export {
  TCP_CHECK_TYPE,
  registerTcpRunner,
  tcpRunner,
  type TcpRunner,
  type TcpRunnerOptions,
} from './tcp-runner.js';
export type { LookupFunction } from './exchange.js';
export { validateTcpCheck } from './validate.js';
