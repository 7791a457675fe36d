import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { AccountSchema, ApiKeyCreateSchema, ApiKeyResponseSchema, ApiKeySchema } from '../src/model/account.js';
import { parse } from '../src/model/parse.js';
import { DEFAULT_ALERT_SETTINGS } from '../src/model/shared.js';

const pathsOf = (schema: v.GenericSchema, input: unknown): string[] => {
  try {
    parse(schema, input);
  } catch (err) {
    if (err instanceof ValidationError) return err.keys;
    throw err;
  }
  throw new Error('expected a ValidationError');
};

const ACCOUNT_ID = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const KEY_ID = '5b0d5c1e-7c1a-4f5e-9d1e-1a2b3c4d5e6f';

describe('account', () => {
  const account = { id: ACCOUNT_ID, name: 'Acme', alertSettings: DEFAULT_ALERT_SETTINGS, created_at: '2026-05-01T12:00:00.000Z', updated_at: null };

  it('round-trips an account with its alert settings', () => {
    expect(parse(AccountSchema, account)).toEqual(account);
  });

  it('requires a UUID id and valid alert settings', () => {
    expect(pathsOf(AccountSchema, { ...account, id: 'acme', alertSettings: { reminders: { interval: 7 } } })).toEqual([
      'id', 'alertSettings.reminders.interval',
    ]);
  });
});

describe('API keys', () => {
  const key = {
    id: KEY_ID,
    accountId: ACCOUNT_ID,
    name: 'CI',
    prefix: 'vgl_abcdefgh',
    hash: 'a'.repeat(64),
    created_at: '2026-05-01T12:00:00.000Z',
    lastUsedAt: null,
    revokedAt: null,
  };

  it('stores a hex hash and answers without it', () => {
    expect(parse(ApiKeySchema, key)).toEqual(key);
    expect(pathsOf(ApiKeySchema, { ...key, hash: 'not hex' })).toEqual(['hash']);
    const { hash: _hash, ...response } = key;
    expect(parse(ApiKeyResponseSchema, key)).toEqual(response);
  });

  it.each([['', false], ['   ', false], ['k', true], ['k'.repeat(200), true], ['k'.repeat(201), false]])(
    'create name %j accepted: %s',
    (name, ok) => {
      expect(v.safeParse(ApiKeyCreateSchema, { name }).success).toBe(ok);
    },
  );

  it('requires a name and drops other fields', () => {
    expect(pathsOf(ApiKeyCreateSchema, {})).toEqual(['name']);
    expect(parse(ApiKeyCreateSchema, { name: ' CI ', accountId: 'other' })).toEqual({ name: 'CI' });
  });
});
