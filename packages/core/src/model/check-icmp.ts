import { isIP } from 'node:net';
import * as v from 'valibot';
import { recordEntries, responseEntries, responseTimeSchema, typeEntries, withFrequencyOffsetRule } from './check-common.js';
import { DOMAIN_NAME } from './check-dns.js';
import { DEFAULT_FREQUENCY, TcpFrequencySchema, type Same } from './primitives.js';
import { integerAtLeast, integerBetween, modelObject, oneOf, updateEntries } from './shared.js';

/**
 * What an ICMP check's assertions read: the round-trip latency in milliseconds (property `avg`,
 * `min`, `max` or `stdDev` of the replies) and the packet loss in percent.
 */
export const ICMP_ASSERTION_SOURCES = ['LATENCY', 'PACKET_LOSS'] as const;
export type IcmpAssertionSource = (typeof ICMP_ASSERTION_SOURCES)[number];

/** The latency statistics an assertion on LATENCY names as its property. */
export const ICMP_LATENCY_PROPERTIES = ['avg', 'min', 'max', 'stdDev'] as const;
export type IcmpLatencyProperty = (typeof ICMP_LATENCY_PROPERTIES)[number];

/** Latency and loss are numbers: an assertion compares them as numbers. */
export const ICMP_ASSERTION_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'] as const;

const icmpAssertionSchema = v.pipe(
  modelObject({
    source: oneOf(ICMP_ASSERTION_SOURCES),
    comparison: oneOf(ICMP_ASSERTION_COMPARISONS),
    // LATENCY reads `avg` unless the property names another statistic; PACKET_LOSS has none.
    property: v.optional(v.picklist(['', ...ICMP_LATENCY_PROPERTIES], `must be ${ICMP_LATENCY_PROPERTIES.join(', ')} or empty (avg)`), ''),
    // Milliseconds or percent: a number such as 100 or 2.5, which bounds its length.
    target: v.pipe(v.string(), v.trim(), v.regex(/^\d{1,7}(?:\.\d{1,3})?$/, 'must be a number such as 100 or 2.5')),
  }),
  v.forward(
    v.check(
      (a) => a.source === 'LATENCY' || a.property === '',
      'must be empty for PACKET_LOSS (LATENCY reads avg, min, max or stdDev)',
    ),
    ['property'],
  ),
);
/** IcmpAssertionSchema's type, by name (see `Same`). */
export interface IcmpAssertionSchema extends Same<typeof icmpAssertionSchema> {}
export const IcmpAssertionSchema: IcmpAssertionSchema = icmpAssertionSchema;
export type IcmpAssertion = v.InferOutput<typeof IcmpAssertionSchema>;

const HOSTNAME_FORMAT = 'must be a host name such as db.example.com, or an IPv4 or IPv6 address';

const icmpRequestSchema = v.pipe(
  modelObject({
    // At most 253 characters: a host name's format bounds it, and an address's.
    hostname: v.pipe(
      v.string(),
      v.trim(),
      v.minLength(1, 'must not be empty'),
      v.check((h) => h === '' || DOMAIN_NAME.test(h) || isIP(h) !== 0, HOSTNAME_FORMAT),
    ),
    ipFamily: v.optional(oneOf(['IPv4', 'IPv6']), 'IPv4'),
    pingCount: v.optional(integerBetween(1, 10), 10),
    timeout: v.optional(integerBetween(100, 10_000), 2000),
    assertions: v.optional(v.pipe(v.array(IcmpAssertionSchema), v.maxLength(20, 'must hold at most 20 assertions')), () => []),
  }),
  // An address names its family: an IPv6 address with ipFamily IPv4 (or the reverse) is a mistake.
  v.forward(
    v.check((r) => {
      const family = isIP(r.hostname);
      return family === 0 || (family === 4) === (r.ipFamily === 'IPv4');
    }, (issue) => {
      const family = isIP((issue.input as { hostname: string }).hostname) === 6 ? 'IPv6' : 'IPv4';
      return `is an ${family} address: set ipFamily to ${family}`;
    }),
    ['hostname'],
  ),
);
/** IcmpRequestSchema's type, by name (see `Same`). */
export interface IcmpRequestSchema extends Same<typeof icmpRequestSchema> {}
/**
 * An ICMP check's request: `pingCount` echo requests to `hostname` (a name is resolved in its
 * `ipFamily`; an address is pinged as it is). A reply later than `timeout` ms counts as lost.
 */
export const IcmpRequestSchema: IcmpRequestSchema = icmpRequestSchema;
export type IcmpRequest = v.InferOutput<typeof IcmpRequestSchema>;

const packetLossSchema = (fallback: number) => v.optional(integerBetween(0, 100), fallback);

// ICMP checks run as often as TCP checks. Their response time is the replies' average round trip:
// degraded past 500 ms, failed past 1,000 ms by default. Packet loss (percent of echo requests
// unanswered) degrades a run from 10% and fails it from 20%, as the product the spec follows does.
const icmpEntries = typeEntries({
  frequency: v.optional(TcpFrequencySchema, DEFAULT_FREQUENCY),
  request: IcmpRequestSchema,
  frequencyOffset: v.optional(v.nullable(integerAtLeast(1)), null),
  degradedResponseTime: responseTimeSchema(500),
  maxResponseTime: responseTimeSchema(1000),
  degradedPacketLossThreshold: packetLossSchema(10),
  maxPacketLossThreshold: packetLossSchema(20),
});

export const IcmpCheckCreateSchema = withFrequencyOffsetRule(icmpEntries);
export type IcmpCheckCreate = v.InferOutput<typeof IcmpCheckCreateSchema>;
export const IcmpCheckUpdateSchema = modelObject(updateEntries(icmpEntries));
export type IcmpCheckUpdate = v.InferOutput<typeof IcmpCheckUpdateSchema>;
export const IcmpCheckSchema = v.object(recordEntries(icmpEntries, 'ICMP'));
export type IcmpCheck = v.InferOutput<typeof IcmpCheckSchema>;
export const IcmpCheckResponseSchema = v.object(responseEntries(icmpEntries, 'ICMP'));
export type IcmpCheckResponse = v.InferOutput<typeof IcmpCheckResponseSchema>;
