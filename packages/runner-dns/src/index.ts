export { DNS_CHECK_TYPE, dnsRunner, parseServer, registerDnsRunner, type DnsRunner, type DnsRunnerOptions } from './dns-runner.js';
export { DnsQueryError, queryDns, reverseName } from './query.js';
export type { DnsAnswer, DnsQuery, DnsResponse } from './query.js';
