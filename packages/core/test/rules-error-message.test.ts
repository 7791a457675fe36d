import { describe, expect, it } from 'vitest';
import { cleanErrorMessage, hashErrorMessage, MAX_CLEANED_LENGTH } from '../src/rules/error-message.js';

describe('error message cleaning', () => {
  it.each([
    ['connect ECONNREFUSED 10.0.0.1:5432', 'connect ECONNREFUSED 192.168.4.20:6543', 'connect ECONNREFUSED <ip>'],
    ['request 0d6c1f2e-1111-4a1b-8c1d-000000000001 failed', 'request 9a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d failed', 'request <uuid> failed'],
    ['at 2026-05-01T12:00:00.000Z timeout', 'at 2025-12-31T23:59:59Z timeout', 'at <timestamp> timeout'],
    ['Timeout of 5000ms exceeded after 3 tries', 'Timeout of 120ms exceeded after 1 tries', 'Timeout of <number>ms exceeded after <number> tries'],
    ['GET https://api.example.com/users?id=1&token=abc 404', 'GET https://api.example.com/users?id=99 500', 'GET https://api.example.com/users?<query> <number>'],
    ['expected "foo" but got \'bar\'', 'expected "something else" but got \'x\'', 'expected "<value>" but got \'<value>\''],
    ['segfault at 0x7ffde4a0 in deadbeefcafe12', 'segfault at 0x1 in 0123456789abcdef', 'segfault at <hex> in <hex>'],
    ['peer [2001:db8::1]:443 reset', 'peer [fe80::1:2]:8443 reset', 'peer <ip> reset'],
    ['reset by 2001:db8:0:0:0:0:0:1', 'reset by ::1', 'reset by <ip>'],
    ['on 2026-05-01 at 12:30:05', 'on 2025-01-31 at 01:02:03', 'on <timestamp> at <number>:<number>:<number>'],
    ['id abcdef12 not found', 'id 9f8e7d6c5b4a not found', 'id <hex> not found'],
    ['id 12345678 gone', 'id 7 gone', 'id <number> gone'],
  ])('"%s" and "%s" clean to the same text', (a, b, cleaned) => {
    expect(cleanErrorMessage(a)).toBe(cleaned);
    expect(cleanErrorMessage(b)).toBe(cleaned);
    expect(hashErrorMessage(cleanErrorMessage(a))).toBe(hashErrorMessage(cleanErrorMessage(b)));
  });

  it('keeps words, apostrophes and version-like names', () => {
    expect(cleanErrorMessage("can't reach 'db' on host's port 5432")).toBe("can't reach '<value>' on host's port <number>");
    expect(cleanErrorMessage('IPv4 only in v2, see std::vector')).toBe('IPv4 only in v2, see std::vector');
    expect(cleanErrorMessage('deadbeef is a word')).toBe('deadbeef is a word');
  });

  it('replaces a UUID whole, before hex ids and numbers eat its parts', () => {
    expect(cleanErrorMessage('0d6c1f2e-1111-4a1b-8c1d-000000000001')).toBe('<uuid>');
  });

  it('keeps different errors apart and folds white space', () => {
    expect(cleanErrorMessage('connection refused')).not.toBe(cleanErrorMessage('connection reset'));
    expect(cleanErrorMessage('  a \n\t b  ')).toBe('a b');
  });

  it('caps the cleaned message', () => {
    expect(cleanErrorMessage('x'.repeat(5000))).toHaveLength(MAX_CLEANED_LENGTH);
    expect(cleanErrorMessage('x'.repeat(MAX_CLEANED_LENGTH))).toHaveLength(MAX_CLEANED_LENGTH);
    expect(cleanErrorMessage('x'.repeat(MAX_CLEANED_LENGTH - 1))).toHaveLength(MAX_CLEANED_LENGTH - 1);
  });

  it('hashes with SHA-256', () => {
    expect(hashErrorMessage('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
