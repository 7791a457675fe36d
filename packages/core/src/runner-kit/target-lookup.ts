import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { TargetPolicy, TargetRefusal } from './target-policy.js';

/** An address a name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of a name (family 0: both), as `dns.lookup(name, { family, all: true })` answers them. */
export type LookupAllFunction = (hostname: string, family: 0 | 4 | 6) => Promise<ResolvedAddress[]>;

export const systemLookupAll: LookupAllFunction = (hostname, family) => dnsLookup(hostname, { family, all: true });

/** The addresses a host may be reached at (none refused), or the first refusal among them. */
export type CheckedTarget =
  | { refusal: null; addresses: [ResolvedAddress, ...ResolvedAddress[]] }
  | { refusal: TargetRefusal; addresses: [] };

/**
 * Looks a host up once and checks every address it resolves to, so that a name with one internal
 * address among public ones is refused. A connection then goes to an address answered here and
 * looks nothing up again, which leaves no window for the name to resolve elsewhere in between.
 * An IP address is checked as written, without a lookup. Rejects as the lookup does, and with
 * ENOTFOUND when it found no address.
 */
export async function lookupChecked(policy: TargetPolicy, host: string, family: 0 | 4 | 6 = 0, lookupAll: LookupAllFunction = systemLookupAll): Promise<CheckedTarget> {
  const name = host.replace(/^\[|\]$/g, '');
  const literal = isIP(name);
  const found = literal ? [{ address: name, family: literal }] : await lookupAll(name, family);
  const refusal = found.map((f) => policy.checkAddress(f.address)).find((r) => r !== null);
  if (refusal) return { refusal, addresses: [] };
  if (found.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name });
  return { refusal: null, addresses: found as [ResolvedAddress, ...ResolvedAddress[]] };
}
