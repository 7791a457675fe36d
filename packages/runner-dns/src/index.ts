export { answerText, DNS_PROTOCOLS, DNS_RCODES, DNS_RECORD_TYPES, DnsQueryError, queryDns, reverseName } from './query.js';
export type { DnsAnswer, DnsProtocol, DnsQuery, DnsRecordType, DnsResponse } from './query.js';
