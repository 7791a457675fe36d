import * as v from 'valibot';
import { defineCheckType, integerBetween, modelObject, oneOf, type CheckOf } from '@vigil/core';

/** The record types a DNS check asks for. */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

const DOMAIN_NAME = /^(?=.{1,253}\.?$)(?:(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.)*(?!-)[A-Za-z0-9_-]{1,63}(?<!-)\.?$/;

/**
 * The DNS check type: the spec names DNS in its check type enumeration and shows none of its
 * fields, so this example chooses them. Beside the common check fields (name, frequency,
 * locations, alertSettings, ...):
 *
 * - `request.hostname`: the name to look up (`shop.example.com`).
 * - `request.recordType`: A (default), AAAA, CNAME, MX, NS or TXT.
 * - `request.expectedValues`: values that must all be among the answers (an address, a name, an MX
 *   as `10 mail.example.com` or its exchange alone, a TXT record's text). Empty: any answer passes.
 * - `degradedResponseTime` / `maxResponseTime`: milliseconds, 0..5000, as for TCP checks;
 *   defaults 1000 and 3000 (a name server that takes seconds to answer is unwell).
 */
export const dnsCheckType = defineCheckType({
  checkType: 'DNS',
  entries: {
    request: modelObject({
      hostname: v.pipe(v.string(), v.regex(DOMAIN_NAME, 'must be a domain name such as shop.example.com')),
      recordType: v.optional(oneOf(DNS_RECORD_TYPES), 'A'),
      expectedValues: v.optional(v.pipe(v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'))), v.maxLength(20, 'must hold at most 20 values')), () => []),
    }),
    degradedResponseTime: v.optional(v.nullable(integerBetween(0, 5000)), 1000),
    maxResponseTime: v.optional(v.nullable(integerBetween(0, 5000)), 3000),
  },
});

/** A stored DNS check, as the runner receives it. */
export type DnsCheck = CheckOf<typeof dnsCheckType>;
