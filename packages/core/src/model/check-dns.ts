import { isIP } from 'node:net';
import * as v from 'valibot';
import {
  recordEntries, responseEntries, responseTimeSchema, typeEntries, withFrequencyOffsetRule,
} from './check-common.js';
import { DEFAULT_FREQUENCY, TcpFrequencySchema, type Same } from './primitives.js';
import { ASSERTION_COMPARISONS, assertionCommonEntries, integerAtLeast, integerBetween, modelObject, oneOf, updateEntries } from './shared.js';

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
export function dnsAssertionProblem(a: { source: string; comparison: string; target: string; regex: string | null }): { path: 'comparison' | 'target' | 'regex'; message: string } | null {
  if (a.regex !== null && a.source !== 'TEXT_ANSWER') return { path: 'regex', message: `applies to TEXT_ANSWER only, not ${a.source}` };
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

// A DNS answer has no properties to read: an assertion has a target and may extract with a regex.
const { property: _property, ...dnsAssertionEntries } = assertionCommonEntries;

const dnsAssertionSchema = v.pipe(
  modelObject({
    source: oneOf(DNS_ASSERTION_SOURCES),
    comparison: oneOf(ASSERTION_COMPARISONS),
    ...dnsAssertionEntries,
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
/** DnsAssertionSchema's type, by name (see `Same`). */
export interface DnsAssertionSchema extends Same<typeof dnsAssertionSchema> {}
export const DnsAssertionSchema: DnsAssertionSchema = dnsAssertionSchema;
export type DnsAssertion = v.InferOutput<typeof DnsAssertionSchema>;

/** A host name as DNS writes it: labels of letters, digits, `-` and `_`, at most 253 characters, a trailing dot allowed. */
export const DOMAIN_NAME = /^(?=.{1,253}\.?$)(?:(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.)*(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.?$/;

const QUERY_FORMAT = 'must be a domain name such as shop.example.com (or, for PTR, an IP address)';

const IpAddressSchema = v.pipe(v.string(), v.trim(), v.check((s) => isIP(s) !== 0, 'must be an IPv4 or IPv6 address'));

const dnsRequestSchema = v.pipe(
  modelObject({
    recordType: v.optional(oneOf(DNS_RECORD_TYPES), 'A'),
    // At most 253 characters: a domain name's format bounds it, and an address's.
    query: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.check((q) => q === '' || DOMAIN_NAME.test(q) || isIP(q) !== 0, QUERY_FORMAT)),
    nameServer: v.optional(v.nullable(IpAddressSchema), null),
    port: v.optional(integerBetween(1, 65535), 53),
    protocol: v.optional(oneOf(DNS_PROTOCOLS), 'UDP'),
    assertions: v.optional(v.pipe(v.array(DnsAssertionSchema), v.maxLength(20, 'must hold at most 20 assertions')), () => []),
  }),
  // An address that is no domain name (an IPv6 one) is asked only by PTR checks.
  v.forward(v.check((r) => isIP(r.query) === 0 || DOMAIN_NAME.test(r.query) || r.recordType === 'PTR', QUERY_FORMAT), ['query']),
);
/** DnsRequestSchema's type, by name (see `Same`). */
export interface DnsRequestSchema extends Same<typeof dnsRequestSchema> {}
/**
 * A DNS check's request. `query` is the name asked for; for PTR it may be an address, which is
 * asked as its reverse name. `nameServer` null asks the host's first system name server.
 */
export const DnsRequestSchema: DnsRequestSchema = dnsRequestSchema;
export type DnsRequest = v.InferOutput<typeof DnsRequestSchema>;

// DNS checks run as often as TCP checks (frequency 0 with a 10, 20 or 30 second offset included).
// A name server that takes a second to answer is unwell: degraded past 1,000 ms by default, failed
// past 3,000 ms.
const dnsEntries = typeEntries({
  frequency: v.optional(TcpFrequencySchema, DEFAULT_FREQUENCY),
  request: DnsRequestSchema,
  frequencyOffset: v.optional(v.nullable(integerAtLeast(1)), null),
  degradedResponseTime: responseTimeSchema(1000),
  maxResponseTime: responseTimeSchema(3000),
});

export const DnsCheckCreateSchema = withFrequencyOffsetRule(dnsEntries);
export type DnsCheckCreate = v.InferOutput<typeof DnsCheckCreateSchema>;
export const DnsCheckUpdateSchema = modelObject(updateEntries(dnsEntries));
export type DnsCheckUpdate = v.InferOutput<typeof DnsCheckUpdateSchema>;
export const DnsCheckSchema = v.object(recordEntries(dnsEntries, 'DNS'));
export type DnsCheck = v.InferOutput<typeof DnsCheckSchema>;
export const DnsCheckResponseSchema = v.object(responseEntries(dnsEntries, 'DNS'));
export type DnsCheckResponse = v.InferOutput<typeof DnsCheckResponseSchema>;
