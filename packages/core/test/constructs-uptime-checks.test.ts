import { describe, expect, it } from 'vitest';
import { DnsCheck, IcmpCheck, UrlCheck } from '../src/constructs/index.js';
import { createVigil } from '../src/container.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { ACCOUNT_A } from './helpers.js';

describe('DNS, URL and ICMP checks as code', () => {
  it('are created by apply with their defaults, unchanged on the next apply, and refused naming the field when wrong', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: '0d'.repeat(32) });
    try {
      await vigil.accounts.ensure(ACCOUNT_A);
      const constructs = [
        new DnsCheck('shop-mx', { name: 'Shop mail', request: { query: 'shop.example.com', recordType: 'MX' } }),
        new UrlCheck('home', { name: 'Home page', request: { url: 'https://shop.example.com/', expectedStatus: '200-399' } }),
        new IcmpCheck('edge', { name: 'Edge router', request: { hostname: '2001:db8::1', ipFamily: 'IPv6', pingCount: 3 } }),
      ];
      const plan = await vigil.apply(ACCOUNT_A, constructs);
      expect(plan.entries.map((e) => `${e.action} ${e.type}`)).toEqual(['create DNS', 'create URL', 'create ICMP']);
      const checks = await vigil.checks.list(ACCOUNT_A, {});
      expect(checks.items.map((c) => c.checkType).sort()).toEqual(['DNS', 'ICMP', 'URL']);
      expect(checks.items.find((c) => c.checkType === 'DNS')).toMatchObject({ request: { recordType: 'MX', port: 53, protocol: 'UDP' }, maxResponseTime: 3000 });
      expect(checks.items.find((c) => c.checkType === 'URL')).toMatchObject({ request: { method: 'GET', expectedStatus: '200-399' }, maxResponseTime: 10000 });
      expect(checks.items.find((c) => c.checkType === 'ICMP')).toMatchObject({
        request: { hostname: '2001:db8::1', pingCount: 3, timeout: 2000 }, maxResponseTime: 1000, degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20,
      });
      expect((await vigil.apply(ACCOUNT_A, constructs)).summary.unchanged).toBe(3);

      const wrong = await vigil.apply(ACCOUNT_A, [
        new DnsCheck('bad-dns', { name: 'Bad', request: { query: 'shop.example.com', recordType: 'AXFR' as never } }),
        new UrlCheck('bad-url', { name: 'Bad', request: { url: 'https://shop.example.com/', expectedStatus: '6xx' } }),
        new IcmpCheck('bad-icmp', { name: 'Bad', request: { hostname: 'edge.example.com', pingCount: 11 } }),
      ]).catch((err: unknown) => err);
      expect(wrong).toBeInstanceOf(ConstructValidationError);
      expect((wrong as ConstructValidationError).constructIssues.map((i) => `${i.construct} ${i.path}`)).toEqual([
        'DnsCheck "bad-dns" request.recordType',
        'UrlCheck "bad-url" request.expectedStatus',
        'IcmpCheck "bad-icmp" request.pingCount',
      ]);
    } finally {
      await vigil.close();
    }
  });
});
