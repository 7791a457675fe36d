import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  formatIpAddress,
  OPEN_TARGET_POLICY,
  parseCidr,
  parseIpAddress,
  targetPolicy,
  targetRefusalMessage,
} from '../src/runner-kit/target-policy.js';
import { lookupChecked } from '../src/runner-kit/target-lookup.js';
import { thisMachineAddresses } from '../src/runner-kit/own-addresses.js';

describe('parseIpAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7F.0.0.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['10.0.0.010', '10.0.0.8'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
    ['::ffff:7f00:1', '::ffff:127.0.0.1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['2001:DB8::0:1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
  ])('%s reads as %s', (text, shown) => {
    const ip = parseIpAddress(text);
    expect(ip).not.toBeNull();
    expect(formatIpAddress(ip!)).toBe(shown);
  });

  it.each(['localhost', 'example.com', '', '256.0.0.1', '1.2.3.4.5', '1.2.3.256', '09.1.1.1', '0x', '::1::', '1:2:3:4:5:6:7:8:9', ':::', '[::1', 'gggg::1', '::ffff:1.2.3', '1.2.3.4:80'])(
    '%j is not an address',
    (text) => {
      if (text === '0x') {
        // The WHATWG URL parser and inet_aton read a bare "0x" as 0.
        expect(formatIpAddress(parseIpAddress(text)!)).toBe('0.0.0.0');
        return;
      }
      expect(parseIpAddress(text)).toBeNull();
    },
  );
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['127.255.255.254', 'loopback', '127.0.0.0/8'],
    ['10.1.2.3', 'private', '10.0.0.0/8'],
    ['172.16.0.1', 'private', '172.16.0.0/12'],
    ['172.31.255.255', 'private', '172.16.0.0/12'],
    ['192.168.1.1', 'private', '192.168.0.0/16'],
    ['169.254.169.254', 'link-local', '169.254.0.0/16'],
    ['100.64.0.1', 'shared (carrier-grade NAT)', '100.64.0.0/10'],
    ['100.127.255.255', 'shared (carrier-grade NAT)', '100.64.0.0/10'],
    ['0.0.0.0', 'unspecified', '0.0.0.0/32'],
    ['0.1.2.3', '"this network"', '0.0.0.0/8'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['239.255.255.250', 'multicast', '224.0.0.0/4'],
    ['255.255.255.255', 'broadcast', '255.255.255.255/32'],
    ['240.0.0.1', 'reserved', '240.0.0.0/4'],
    ['::', 'unspecified', '::/128'],
    ['::1', 'loopback', '::1/128'],
    ['[::1]', 'loopback', '::1/128'],
    ['fc00::1', 'unique-local (private)', 'fc00::/7'],
    ['fd12:3456::1', 'unique-local (private)', 'fc00::/7'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['febf::1', 'link-local', 'fe80::/10'],
    ['fec0::1', 'site-local (private)', 'fec0::/10'],
    ['ff02::1', 'multicast', 'ff00::/8'],
    // IPv6 forms that reach an IPv4 address are judged by that address.
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['[::ffff:127.0.0.1]', 'loopback', '127.0.0.0/8'],
    ['::ffff:a00:1', 'private', '10.0.0.0/8'],
    ['::127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['64:ff9b::192.168.0.1', 'private', '192.168.0.0/16'],
    ['2002:a9fe:a9fe::1', 'link-local', '169.254.0.0/16'],
    // Forms a resolver accepts for 127.0.0.1.
    ['0x7f.1', 'loopback', '127.0.0.0/8'],
    ['2130706433', 'loopback', '127.0.0.0/8'],
    ['017700000001', 'loopback', '127.0.0.0/8'],
  ])('%s is %s (%s)', (address, name, cidr) => {
    expect(classifyAddress(address)).toEqual({ name, cidr });
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '100.63.255.255', '169.253.0.1', '192.169.0.1', '11.0.0.1',
    '223.255.255.255', '2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', 'fbff::1', 'fe7f::1', 'localhost', 'example.com'])(
    '%s is not internal',
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );
});

describe('parseCidr', () => {
  it('masks the network and accepts single addresses', () => {
    expect(parseCidr('10.20.30.40/16').text).toBe('10.20.0.0/16');
    expect(parseCidr('192.168.1.10').text).toBe('192.168.1.10/32');
    expect(parseCidr('fd00:1::5/64').text).toBe('fd00:1::/64');
    expect(parseCidr('::1').text).toBe('::1/128');
    expect(parseCidr('0.0.0.0/0').text).toBe('0.0.0.0/0');
  });

  it.each(['10.0.0.0/33', '10/8', '0x7f.1/8', 'example.com/24', '10.0.0.0/8/8', '::/129', '10.0.0.0/-1', '10.0.0.0/ 8'])('refuses %j', (text) => {
    expect(() => parseCidr(text)).toThrow(TypeError);
  });
});

describe('targetPolicy', () => {
  const strict = targetPolicy({ refuseInternalAddresses: true });

  it('refuses nothing by default (the embedded case)', () => {
    for (const policy of [OPEN_TARGET_POLICY, targetPolicy(), targetPolicy({ allow: ['10.0.0.0/8'] })]) {
      expect(policy.refuseInternalAddresses).toBe(false);
      expect(policy.checkAddress('127.0.0.1')).toBeNull();
      expect(policy.checkHost('localhost')).toBeNull();
    }
  });

  it('checkAddress refuses internal addresses, saying which and why, and lets public ones through', () => {
    expect(strict.checkAddress('127.0.0.1')).toEqual({
      address: '127.0.0.1', range: { name: 'loopback', cidr: '127.0.0.0/8' }, reason: '127.0.0.1 is a loopback address (127.0.0.0/8)',
    });
    expect(strict.checkAddress('::ffff:10.0.0.5')?.reason).toBe('::ffff:10.0.0.5 is a private address (10.0.0.0/8)');
    expect(strict.checkAddress('fe80::1')?.reason).toBe('fe80::1 is a link-local address (fe80::/10)');
    expect(strict.checkAddress('8.8.8.8')).toBeNull();
    expect(strict.checkAddress('2001:4860:4860::8888')).toBeNull();
  });

  it('checkAddress refuses what is not an address: runners check addresses, never names', () => {
    expect(strict.checkAddress('example.com')?.reason).toBe('"example.com" is not an IP address');
  });

  it.each([
    ['0x7f.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
    ['[::1]', '::1'],
    ['169.254.169.254', '169.254.169.254'],
  ])('checkHost refuses the literal %s (%s)', (host, address) => {
    expect(strict.checkHost(host)?.address).toBe(address);
  });

  it('checkHost refuses localhost names and leaves other names to run time', () => {
    expect(strict.checkHost('localhost')?.reason).toBe('"localhost" names this machine: 127.0.0.1 is a loopback address (127.0.0.0/8)');
    expect(strict.checkHost('LOCALHOST.')).not.toBeNull();
    expect(strict.checkHost('api.localhost')).not.toBeNull();
    expect(strict.checkHost('localhost.example.com')).toBeNull();
    expect(strict.checkHost('example.com')).toBeNull();
    expect(strict.checkHost('{{HOST}}')).toBeNull();
  });

  it('allow lets listed CIDRs through, IPv4 ones in their IPv6-mapped form too', () => {
    const policy = targetPolicy({ refuseInternalAddresses: true, allow: ['10.20.0.0/16', '127.0.0.1', 'fd00:1::/32'] });
    expect(policy.checkAddress('10.20.3.4')).toBeNull();
    expect(policy.checkAddress('10.21.0.1')?.range.cidr).toBe('10.0.0.0/8');
    expect(policy.checkAddress('127.0.0.1')).toBeNull();
    expect(policy.checkAddress('::ffff:127.0.0.1')).toBeNull();
    expect(policy.checkAddress('127.0.0.2')).not.toBeNull();
    expect(policy.checkAddress('fd00:1:2::3')).toBeNull();
    expect(policy.checkAddress('fd00:2::3')).not.toBeNull();
    // localhost is refused only when both of its addresses are.
    expect(policy.checkHost('localhost')).toBeNull();
  });

  it('refuses the host\'s own public addresses and its refuse list, which allow does not reopen', () => {
    const policy = targetPolicy({
      refuseInternalAddresses: true, allow: ['198.51.100.0/24', '10.20.0.0/16'], refuse: ['198.51.100.7', '10.20.9.0/24'],
      ownAddresses: () => ['203.0.113.5', '10.20.0.4', 'fe80::1'],
    });
    expect(policy.checkAddress('203.0.113.5')).toMatchObject({ reason: '203.0.113.5 is an address of this host' });
    expect(policy.checkAddress('::ffff:203.0.113.5')).toMatchObject({ address: '203.0.113.5' });
    expect(policy.checkHost('0xcb007105')).toMatchObject({ address: '203.0.113.5' });
    expect(policy.checkAddress('203.0.113.6')).toBeNull();
    expect(policy.checkAddress('198.51.100.7')).toMatchObject({ reason: "198.51.100.7 is refused by this host's target policy (198.51.100.7/32)" });
    expect(policy.checkAddress('198.51.100.8')).toBeNull();
    expect(policy.checkAddress('10.20.9.1')?.range.name).toBe('refused by the host');
    // An internal address of the host stays a matter of allow: the host opened 10.20/16 itself.
    expect(policy.checkAddress('10.20.0.4')).toBeNull();
    expect(targetRefusalMessage(policy.checkAddress('203.0.113.5')!, 'status.example.com')).toMatch(/^The target policy refused "status.example.com" \(203\.0\.113\.5\): 203\.0\.113\.5 is an address of this host/);
    // Open policies refuse nothing, whatever the lists say.
    expect(targetPolicy({ refuse: ['203.0.113.5'], ownAddresses: () => ['203.0.113.5'] }).checkAddress('203.0.113.5')).toBeNull();
  });

  it('by default takes this host\'s addresses from its network interfaces, and refuses each', () => {
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
    expect(addresses).toContain('127.0.0.1');
    expect(thisMachineAddresses()).toEqual(addresses);
    const strictPolicy = targetPolicy({ refuseInternalAddresses: true });
    for (const address of addresses) expect(strictPolicy.checkAddress(address), address).not.toBeNull();
  });

  it('names a malformed allow or refuse entry', () => {
    expect(() => targetPolicy({ refuseInternalAddresses: true, refuse: ['intranet'] })).toThrow('targetPolicy.refuse[0]: "intranet" is not a CIDR');
    expect(() => targetPolicy({ refuseInternalAddresses: true, allow: ['10.0.0.0/8', 'intranet'] })).toThrow(
      'targetPolicy.allow[1]: "intranet" is not a CIDR: "intranet" is not an IPv4 or IPv6 address',
    );
  });

  it('targetRefusalMessage names the host, the address and the range', () => {
    const refusal = strict.checkAddress('127.0.0.1')!;
    expect(targetRefusalMessage(refusal, 'localhost')).toMatch(
      /^The target policy refused "localhost" \(127\.0\.0\.1\): 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)\. .*targetPolicy\.allow/,
    );
    expect(targetRefusalMessage(refusal, '127.0.0.1')).toMatch(/^The target policy refused 127\.0\.0\.1: /);
    expect(targetRefusalMessage(strict.checkAddress('::1')!, '[::1]')).toMatch(/^The target policy refused ::1: /);
  });
});

describe('lookupChecked', () => {
  const strict = targetPolicy({ refuseInternalAddresses: true });
  /** A host's own name service: names to the addresses it answers. */
  const names = (table: Record<string, string[]>) => async (host: string) => (table[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses a name that resolves to loopback (localhost, through the system resolver)', async () => {
    const checked = await lookupChecked(strict, 'localhost');
    expect(checked.addresses).toEqual([]);
    expect(checked.refusal?.range.name).toBe('loopback');
  });

  it('answers every address once all of them passed, and refuses a name with one internal address among public ones', async () => {
    const lookupAll = names({ 'api.example.com': ['93.184.216.34', '2606:2800:220:1::1'], 'mixed.example.com': ['93.184.216.34', '10.0.0.5'] });
    expect(await lookupChecked(strict, 'api.example.com', 0, lookupAll)).toEqual({
      refusal: null,
      addresses: [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }],
    });
    expect((await lookupChecked(strict, 'mixed.example.com', 0, lookupAll)).refusal).toMatchObject({ address: '10.0.0.5', range: { name: 'private' } });
  });

  it('checks an IP address as written without looking it up, brackets and all', async () => {
    const never = async () => {
      throw new Error('looked up');
    };
    expect((await lookupChecked(strict, '[::1]', 0, never)).refusal?.address).toBe('::1');
    expect(await lookupChecked(targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8'] }), '127.0.0.2', 0, never)).toEqual({ refusal: null, addresses: [{ address: '127.0.0.2', family: 4 }] });
  });

  it('rejects with ENOTFOUND when the name has no address', async () => {
    await expect(lookupChecked(strict, 'nothing.example.com', 0, names({}))).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
