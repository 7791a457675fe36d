/** A DNS check type and its runner, written against @vigil/core alone. */
export { DNS_RECORD_TYPES, dnsCheckType, type DnsCheck, type DnsRecordType } from './dns-check-type.js';
export { dnsRunner, validateDnsCheck, type DnsRunnerOptions } from './dns-runner.js';
export { registerDnsChecks } from './register.js';
