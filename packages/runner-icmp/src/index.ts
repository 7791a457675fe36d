export { ICMP_CHECK_TYPE, icmpRunner, registerIcmpRunner, validateIcmpCheck, type IcmpRunner, type IcmpRunnerOptions } from './icmp-runner.js';
export { describeAssertion, evaluateAssertion, icmpVerdict } from './assertions.js';
export type { EvaluatedAssertion, IcmpLimits, IcmpSubject, IcmpVerdict, VerdictInput } from './assertions.js';
export { IcmpUnavailableError, latencyStats, parsePingOutput, ping, pingArgs, pingDeadlineMs, PingHostError, PingNetworkError } from './ping.js';
export type { LatencyStats, PingOptions, PingOutcome, PingReply } from './ping.js';
export { icmpSupport, unprivilegedIcmpSockets, type IcmpSupport, type IcmpSupportOptions } from './support.js';
