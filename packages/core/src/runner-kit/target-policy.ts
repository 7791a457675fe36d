/**
 * Which addresses checks may reach. A host that lets untrusted accounts create checks turns on
 * `refuseInternalAddresses`, so a check cannot be aimed at the host's own machine or network
 * (loopback, private, link-local, ...). Runners apply the policy to the address they actually
 * connect to, after name lookup, so a name that resolves to an internal address is refused too.
 */
import { thisMachineAddresses } from './own-addresses.js';

export interface TargetPolicyOptions {
  /** Refuse loopback, private, link-local, shared (CGNAT), multicast, broadcast and unspecified addresses. Default false. */
  refuseInternalAddresses?: boolean;
  /** CIDRs (or single addresses) that checks may reach even so: `10.20.0.0/16`, `fd00:1::/64`, `192.168.1.10`. */
  allow?: readonly string[];
  /**
   * With `refuseInternalAddresses`: CIDRs (or single addresses) refused too, even public ones and
   * even when `allow` holds them, such as the public address a balancer or NAT forwards to this
   * host: `203.0.113.7`.
   */
  refuse?: readonly string[];
  /**
   * With `refuseInternalAddresses`: the addresses of this host, refused whatever `allow` says (a
   * check must not reach the host's own listening ports by a public address of its own). Default:
   * the addresses of this machine's network interfaces; `() => []` turns it off.
   */
  ownAddresses?: () => readonly string[];
}

/** A range of addresses the policy refuses, e.g. `{ name: 'loopback', cidr: '127.0.0.0/8' }`. */
export interface AddressRange {
  name: string;
  cidr: string;
}

export interface TargetRefusal {
  /** The address refused, as written in the usual form (`127.0.0.1`, `::1`, `::ffff:10.0.0.1`). */
  address: string;
  range: AddressRange;
  /** `127.0.0.1 is a loopback address (127.0.0.0/8)` */
  reason: string;
}

export interface TargetPolicy {
  readonly refuseInternalAddresses: boolean;
  readonly allow: readonly string[];
  /**
   * The refusal of an address a runner is about to connect to, or null when it may. Anything that
   * is not an IP address is refused: a runner checks addresses, never names.
   */
  checkAddress(address: string): TargetRefusal | null;
  /**
   * The refusal of a host as a check writes it, known before any lookup: an IP address in any
   * form a resolver accepts (`0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`) or a `localhost` name
   * (RFC 6761). Null for other names: they are checked when a run looks them up.
   */
  checkHost(host: string): TargetRefusal | null;
}

/** An IP address as numbers: IPv4 in 32 bits, IPv6 in 128. */
export type IpAddress = { family: 4; value: number } | { family: 6; value: bigint };

const IPV4_PART = /^(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

/**
 * An IPv4 address in the forms `inet_aton` (and so `getaddrinfo` and the WHATWG URL parser)
 * accepts: one to four parts, each decimal, octal (leading 0) or hex (0x), the last filling the
 * bytes left (`127.1`, `0x7f.1`, `2130706433`), and one trailing dot. Null when it is not one.
 */
export function parseIpv4(text: string): number | null {
  const s = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = s.split('.');
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const p of parts) {
    if (!IPV4_PART.test(p)) return null;
    const lower = p.toLowerCase();
    const n = lower.startsWith('0x') ? (lower.length === 2 ? 0 : parseInt(lower.slice(2), 16)) : lower.length > 1 && lower.startsWith('0') ? parseInt(lower, 8) : parseInt(lower, 10);
    if (!Number.isSafeInteger(n)) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce((sum, n, i) => sum + n * 256 ** (3 - i), last);
}

const STRICT_IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/** An IPv6 address (brackets and a `%zone` allowed, a dotted IPv4 tail too); null when it is not one. */
export function parseIpv6(text: string): bigint | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return null;
  const groups: number[] = [];
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const read = (half: string, allowTail: boolean): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i]!;
      if (allowTail && i === pieces.length - 1 && p.includes('.')) {
        if (!STRICT_IPV4.test(p)) return null;
        const v4 = parseIpv4(p)!;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else if (HEX_GROUP.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  if (halves.length === 2) {
    const head = read(halves[0]!, false);
    const tail = read(halves[1]!, true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  } else {
    const all = read(s, true);
    if (!all || all.length !== 8) return null;
    groups.push(...all);
  }
  return groups.reduce((sum, g) => (sum << 16n) | BigInt(g), 0n);
}

/** An IP address in any form `parseIpv4` or `parseIpv6` reads; null for a name. */
export function parseIpAddress(text: string): IpAddress | null {
  const host = text.trim();
  if (host.includes(':') || host.startsWith('[')) {
    const v6 = parseIpv6(host);
    return v6 === null ? null : { family: 6, value: v6 };
  }
  const v4 = parseIpv4(host);
  return v4 === null ? null : { family: 4, value: v4 };
}

export function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/** The RFC 5952 form: lower case, the longest run of zero groups as `::`, a mapped IPv4 dotted. */
export function formatIpv6(value: bigint): string {
  if (value >> 32n === 0xffffn) return `::ffff:${formatIpv4(Number(value & 0xffffffffn))}`;
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

export function formatIpAddress(ip: IpAddress): string {
  return ip.family === 4 ? formatIpv4(ip.value) : formatIpv6(ip.value);
}

interface Cidr {
  family: 4 | 6;
  /** The network, masked. */
  base: bigint;
  bits: number;
  text: string;
}

const asBig = (ip: IpAddress) => (ip.family === 4 ? BigInt(ip.value) : ip.value);
const width = (family: 4 | 6) => (family === 4 ? 32 : 128);

function mask(value: bigint, bits: number, family: 4 | 6): bigint {
  const w = width(family);
  return bits === 0 ? 0n : (value >> BigInt(w - bits)) << BigInt(w - bits);
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (all its bits). Throws a TypeError naming what is wrong. */
export function parseCidr(text: string): Cidr {
  const [addr = '', prefix, extra] = text.trim().split('/');
  if (extra !== undefined) throw new TypeError(`"${text}" is not a CIDR: more than one "/"`);
  // A CIDR is written in the usual form: a four-part dotted IPv4 or an IPv6 address.
  const ip = addr.includes(':') ? parseIpAddress(addr) : STRICT_IPV4.test(addr) ? parseIpAddress(addr) : null;
  if (!ip) throw new TypeError(`"${text}" is not a CIDR: "${addr}" is not an IPv4 or IPv6 address`);
  const w = width(ip.family);
  const bits = prefix === undefined ? w : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  if (!(bits >= 0 && bits <= w)) throw new TypeError(`"${text}" is not a CIDR: the prefix length must be 0..${w}`);
  const base = mask(asBig(ip), bits, ip.family);
  const shown = ip.family === 4 ? formatIpv4(Number(base)) : formatIpv6(base);
  return { family: ip.family, base, bits, text: `${shown}/${bits}` };
}

function inCidr(ip: IpAddress, cidr: Cidr): boolean {
  return ip.family === cidr.family && mask(asBig(ip), cidr.bits, ip.family) === cidr.base;
}

const range = (name: string, cidr: string) => ({ name, cidr, parsed: parseCidr(cidr) });

// Most specific first: the first range that holds an address names it.
const INTERNAL_RANGES = [
  range('unspecified', '0.0.0.0/32'),
  range('"this network"', '0.0.0.0/8'),
  range('private', '10.0.0.0/8'),
  range('shared (carrier-grade NAT)', '100.64.0.0/10'),
  range('loopback', '127.0.0.0/8'),
  range('link-local', '169.254.0.0/16'),
  range('private', '172.16.0.0/12'),
  range('private', '192.168.0.0/16'),
  range('multicast', '224.0.0.0/4'),
  range('broadcast', '255.255.255.255/32'),
  range('reserved', '240.0.0.0/4'),
  range('unspecified', '::/128'),
  range('loopback', '::1/128'),
  range('unique-local (private)', 'fc00::/7'),
  range('link-local', 'fe80::/10'),
  range('site-local (private)', 'fec0::/10'),
  range('multicast', 'ff00::/8'),
];

/**
 * The IPv4 address an IPv6 one stands for, where reaching it reaches that IPv4 address:
 * IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and
 * 6to4 (`2002:AABB:CCDD::/48`).
 */
export function embeddedIpv4(value: bigint): number | null {
  const low32 = Number(value & 0xffffffffn);
  if (value >> 32n === 0xffffn || (value >> 32n === 0n && value > 1n)) return low32;
  if (value >> 32n === 0x64ff9b0000000000000000n) return low32;
  if (value >> 112n === 0x2002n) return Number((value >> 80n) & 0xffffffffn);
  return null;
}

/** The internal range an address is in (null for a public address). IPv6 forms of an IPv4 address are judged by the IPv4 one. */
export function classifyAddress(address: string | IpAddress): AddressRange | null {
  const ip = typeof address === 'string' ? parseIpAddress(address) : address;
  if (!ip) return null;
  const hit = INTERNAL_RANGES.find((r) => inCidr(ip, r.parsed));
  if (hit) return { name: hit.name, cidr: hit.cidr };
  if (ip.family === 6) {
    const v4 = embeddedIpv4(ip.value);
    if (v4 !== null) return classifyAddress({ family: 4, value: v4 });
  }
  return null;
}

const LOCALHOST = /^(?:.+\.)?localhost\.?$/i;
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/** Builds the policy a host configured; a malformed `allow` entry is a TypeError naming it. */
export function targetPolicy(options: TargetPolicyOptions = {}): TargetPolicy {
  const refuse = options.refuseInternalAddresses === true;
  const allow = [...(options.allow ?? [])];
  const cidrs = (field: 'allow' | 'refuse') => (options[field] ?? []).map((text, i) => {
    try {
      return parseCidr(text);
    } catch (err) {
      throw new TypeError(`targetPolicy.${field}[${i}]: ${(err as Error).message}`);
    }
  });
  const allowed = cidrs('allow');
  const refused = cidrs('refuse');
  const ownAddresses = options.ownAddresses ?? thisMachineAddresses;
  // Parsed once per list the source gives (the default gives the same list until it re-reads).
  let own: { list: readonly string[]; parsed: (IpAddress | null)[] } | null = null;
  const ownParsed = () => {
    const list = ownAddresses();
    if (own?.list !== list) own = { list, parsed: list.map(parseIpAddress) };
    return own.parsed;
  };
  // The host's `refuse` list, which `allow` does not reopen, and this host's own public addresses
  // (its internal ones are refused as internal, or reopened by `allow`).
  const hostRefusal = (ip: IpAddress, internal: boolean): TargetRefusal | null => {
    const address = formatIpAddress(ip);
    const cidr = refused.find((c) => inCidr(ip, c));
    if (cidr) return { address, range: { name: 'refused by the host', cidr: cidr.text }, reason: `${address} is refused by this host's target policy (${cidr.text})` };
    if (internal) return null;
    const own = ownParsed().find((o) => o !== null && o.family === ip.family && asBig(o) === asBig(ip));
    if (own) return { address, range: { name: "this host's own", cidr: `${address}/${width(ip.family)}` }, reason: `${address} is an address of this host` };
    return null;
  };
  const isAllowed = (ip: IpAddress) => {
    if (allowed.some((c) => inCidr(ip, c))) return true;
    const v4 = ip.family === 6 ? embeddedIpv4(ip.value) : null;
    return v4 !== null && allowed.some((c) => inCidr({ family: 4, value: v4 }, c));
  };
  const judge = (ip: IpAddress): TargetRefusal | null => {
    const hit = classifyAddress(ip);
    const v4 = ip.family === 6 ? embeddedIpv4(ip.value) : null;
    const own = hostRefusal(ip, hit !== null) ?? (v4 !== null ? hostRefusal({ family: 4, value: v4 }, hit !== null) : null);
    if (own) return own;
    if (!hit || isAllowed(ip)) return null;
    const address = formatIpAddress(ip);
    return { address, range: hit, reason: `${address} is ${article(hit.name)} ${hit.name} address (${hit.cidr})` };
  };
  return {
    refuseInternalAddresses: refuse,
    allow,
    checkAddress(address) {
      if (!refuse) return null;
      const ip = parseIpAddress(address);
      if (!ip) return { address, range: { name: 'unknown', cidr: '' }, reason: `"${address}" is not an IP address` };
      return judge(ip);
    },
    checkHost(host) {
      if (!refuse) return null;
      const ip = parseIpAddress(host);
      if (ip) return judge(ip);
      if (!LOCALHOST.test(host.trim())) return null;
      // localhost names resolve to loopback (RFC 6761 §6.3), unless the host allowed loopback.
      const v4 = judge({ family: 4, value: 0x7f000001 });
      const v6 = judge({ family: 6, value: 1n });
      if (!v4 || !v6) return null;
      return { ...v4, reason: `"${host.trim()}" names this machine: ${v4.reason}` };
    },
  };
}

/** The policy when the host sets none: every address may be reached (the embedded default). */
export const OPEN_TARGET_POLICY: TargetPolicy = targetPolicy();

/** The policy of an account whose checks may reach public addresses only. */
export const PUBLIC_ONLY_TARGET_POLICY: TargetPolicy = targetPolicy({ refuseInternalAddresses: true });

/**
 * One account's policy as a host writes it: `'open'` (every address), `'public-only'` (no
 * loopback, private, link-local or other internal address), options, or a built policy.
 */
export type TargetPolicySetting = 'open' | 'public-only' | TargetPolicyOptions | TargetPolicy;

/**
 * The host's `targetPolicy` option: one setting for every account, or a function that gives each
 * account its own (`(accountId) => accountId === own ? 'open' : 'public-only'`).
 */
export type TargetPolicyChoice = TargetPolicySetting | ((accountId: string) => TargetPolicySetting | Promise<TargetPolicySetting>);

/** The policy a setting stands for; a malformed `allow` entry is a TypeError naming it. */
export function policyOf(setting: TargetPolicySetting | undefined): TargetPolicy {
  if (setting === undefined || setting === 'open') return OPEN_TARGET_POLICY;
  if (setting === 'public-only') return PUBLIC_ONLY_TARGET_POLICY;
  if (typeof setting !== 'object' || setting === null) throw new TypeError(`targetPolicy: ${JSON.stringify(setting)} is not 'open', 'public-only', options or a policy`);
  return 'checkAddress' in setting ? setting : targetPolicy(setting);
}

/**
 * A policy that differs by account: it answers as public-only wherever no account is known, and
 * `forAccount` gives an account's own. The engine, the dispatcher and the services resolve it
 * (`policyForAccount`), so a run or a delivery carries its account's plain policy.
 */
export interface AccountTargetPolicy extends TargetPolicy {
  forAccount(accountId: string): Promise<TargetPolicy>;
}

/**
 * The policy a host's `targetPolicy` option gives. A single setting is built at once (so a
 * malformed one stops the host at start-up); a function is asked at each use, its answer built.
 */
export function hostTargetPolicy(choice: TargetPolicyChoice | undefined): TargetPolicy | AccountTargetPolicy {
  if (typeof choice !== 'function') return policyOf(choice);
  // A function that fails (its store is down) or answers no setting gives public-only: a policy fails closed.
  const forAccount = (accountId: string) => Promise.resolve().then(() => choice(accountId)).then(policyOf).catch(() => PUBLIC_ONLY_TARGET_POLICY);
  return { ...PUBLIC_ONLY_TARGET_POLICY, forAccount };
}

/** The policy that applies to one account's checks and channels (undefined: every address). */
export async function policyForAccount(policy: TargetPolicy | undefined, accountId: string): Promise<TargetPolicy | undefined> {
  return policy && 'forAccount' in policy ? (policy as AccountTargetPolicy).forAccount(accountId) : policy;
}

/**
 * The error message of a run the policy stopped, the same from every runner:
 * `The target policy refused "db.example.com" (10.0.0.5): 10.0.0.5 is a private address (10.0.0.0/8). ...`
 */
export function targetRefusalMessage(refusal: TargetRefusal, hostname?: string): string {
  const host = hostname?.replace(/^\[|\]$/g, '');
  const what = host && host !== refusal.address ? `"${host}" (${refusal.address})` : refusal.address;
  return `The target policy refused ${what}: ${refusal.reason}. This Vigil connects to no loopback, private, link-local or other internal address unless its targetPolicy.allow lists it`;
}
