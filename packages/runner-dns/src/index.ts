export { answerText, DnsQueryError, queryDns, reverseName } from './query.js';
export type { DnsAnswer, DnsQuery, DnsResponse } from './query.js';
