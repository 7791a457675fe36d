import { isIP } from 'node:net';
import * as v from 'valibot';
import { ASSERTION_COMPARISONS, assertionCommonEntries, integerBetween, modelObject, oneOf } from './shared.js';

/** The record types a DNS check asks for. */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'SRV', 'CAA', 'PTR'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

/** How a DNS check's query travels. */
export const DNS_PROTOCOLS = ['UDP', 'TCP'] as const;
export type DnsProtocol = (typeof DNS_PROTOCOLS)[number];

/** The response codes a name server answers with (RFC 1035, RFC 2136). */
export const DNS_RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'] as const;
export type DnsRcode = (typeof DNS_RCODES)[number];

/**
 * What a DNS check's assertions read: the response code (`NOERROR`, `NXDOMAIN`, …), the answers
 * as text (one record per line, as zone files write them: `10 mail.example.com` for MX), how many
 * records answered, and the response time in milliseconds.
 */
export const DNS_ASSERTION_SOURCES = ['RESPONSE_CODE', 'TEXT_ANSWER', 'ANSWER_COUNT', 'RESPONSE_TIME'] as const;
export type DnsAssertionSource = (typeof DNS_ASSERTION_SOURCES)[number];

const NUMERIC_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'];

/** Why an assertion cannot be judged as written, or null: comparisons and targets that fit their source. */
export function dnsAssertionProblem(a: { source: string; comparison: string; target: string; regex: string | null }): { path: 'comparison' | 'target'; message: string } | null {
  switch (a.source) {
    case 'RESPONSE_CODE':
      if (a.comparison !== 'EQUALS' && a.comparison !== 'NOT_EQUALS') return { path: 'comparison', message: 'must be EQUALS or NOT_EQUALS for RESPONSE_CODE' };
      if (!(DNS_RCODES as readonly string[]).includes(a.target.trim().toUpperCase())) return { path: 'target', message: `must be a response code: ${DNS_RCODES.join(', ')}` };
      return null;
    case 'ANSWER_COUNT':
    case 'RESPONSE_TIME':
      if (!NUMERIC_COMPARISONS.includes(a.comparison)) return { path: 'comparison', message: `must be one of ${NUMERIC_COMPARISONS.join(', ')} for ${a.source}` };
      if (a.target.trim() === '' || !Number.isFinite(Number(a.target))) return { path: 'target', message: `must be a number for ${a.source}` };
      return null;
    default:
      return null;
  }
}

export const DnsAssertionSchema = v.pipe(
  modelObject({
    source: oneOf(DNS_ASSERTION_SOURCES),
    comparison: oneOf(ASSERTION_COMPARISONS),
    ...assertionCommonEntries,
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = dnsAssertionProblem(dataset.value);
    if (problem) {
      addIssue({
        message: problem.message,
        path: [{ type: 'object', origin: 'value', input: dataset.value, key: problem.path, value: dataset.value[problem.path] }],
      });
    }
  }),
);
export type DnsAssertion = v.InferOutput<typeof DnsAssertionSchema>;

/** A host name as DNS writes it: labels of letters, digits, `-` and `_`, at most 253 characters, a trailing dot allowed. */
export const DOMAIN_NAME = /^(?=.{1,253}\.?$)(?:(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.)*(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.?$/;

const IpAddressSchema = v.pipe(v.string(), v.trim(), v.check((s) => isIP(s) !== 0, 'must be an IPv4 or IPv6 address'));

/**
 * A DNS check's request. `query` is the name asked for; for PTR it may be an address, which is
 * asked as its reverse name. `nameServer` null asks the host's first system name server.
 */
export const DnsRequestSchema = v.pipe(
  modelObject({
    recordType: v.optional(oneOf(DNS_RECORD_TYPES), 'A'),
    query: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(253, 'must be at most 253 characters')),
    nameServer: v.optional(v.nullable(IpAddressSchema), null),
    port: v.optional(integerBetween(1, 65535), 53),
    protocol: v.optional(oneOf(DNS_PROTOCOLS), 'UDP'),
    assertions: v.optional(v.pipe(v.array(DnsAssertionSchema), v.maxLength(20, 'must hold at most 20 assertions')), () => []),
  }),
  v.forward(
    v.check(
      // An empty or overlong query already has its issue.
      (r) => r.query.length === 0 || r.query.length > 253 || DOMAIN_NAME.test(r.query) || (r.recordType === 'PTR' && isIP(r.query) !== 0),
      'must be a domain name such as shop.example.com (or, for PTR, an IP address)',
    ),
    ['query'],
  ),
);
export type DnsRequest = v.InferOutput<typeof DnsRequestSchema>;
