import { describe, expect, it } from 'vitest';
import {
  ALERT_CHANNEL_CONFIG_SCHEMAS,
  ALERT_CHANNEL_TYPES,
  ALERT_TYPES,
  AlertChannelCreateSchema,
  AlertChannelFlagsSchema,
  AlertChannelResponseSchema,
  AlertChannelSchema,
  AlertChannelSubscriptionsUpdateSchema,
  AlertChannelUpdateSchema,
  AlertSubscriptionSchema,
  AlertTypeSchema,
  SECRET_CONFIG_FIELDS,
} from '../src/model/alert-channel.js';
import { parse } from '../src/model/parse.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';


const flagDefaults = {
  sendRecovery: true, sendFailure: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false,
};

const minimalConfigs: Record<string, [Record<string, unknown>, Record<string, unknown>]> = {
  EMAIL: [{ address: 'ops@example.com' }, { address: 'ops@example.com' }],
  WEBHOOK: [
    { name: 'hook', url: 'https://hooks.example.com/x' },
    { name: 'hook', url: 'https://hooks.example.com/x', method: 'POST', headers: [], queryParameters: [], template: null, webhookSecret: null },
  ],
  SMS: [{ number: '+14155550100', name: 'On call' }, { number: '+14155550100', name: 'On call' }],
  CALL: [{ number: '+442071838750', name: 'Desk' }, { number: '+442071838750', name: 'Desk' }],
  CHAT: [{ url: 'https://chat.example.com/hook' }, { url: 'https://chat.example.com/hook', channel: null }],
  CHAT_APP: [{ url: 'http://teams.example.com/hook' }, { url: 'http://teams.example.com/hook' }],
  PAGING_A: [{ serviceKey: 'k' }, { serviceKey: 'k', account: null, serviceName: null }],
  PAGING_B: [{ name: 'ops', apiKey: 'key', region: 'EU' }, { name: 'ops', apiKey: 'key', region: 'EU', priority: 'P3' }],
};

describe('alert channel create', () => {
  it.each(ALERT_CHANNEL_TYPES.map((t) => [t]))('%s: fills config and flag defaults', (type) => {
    const [config, expected] = minimalConfigs[type]!;
    expect(parse(AlertChannelCreateSchema, { type, config, unknown: 1 })).toEqual({ type, config: expected, ...flagDefaults });
  });

  it('rejects an unknown or missing type, naming type', () => {
    expect(issuesOf(AlertChannelCreateSchema, { type: 'PIGEON', config: {} })).toEqual([
      { path: 'type', message: 'must be one of EMAIL, WEBHOOK, SMS, CALL, CHAT, CHAT_APP, PAGING_A, PAGING_B' },
    ]);
    expect(pathsOf(AlertChannelCreateSchema, { config: {} })).toEqual(['type']);
    expect(issuesOf(AlertChannelCreateSchema, 'EMAIL')).toEqual([{ path: '', message: 'must be an object' }]);
  });

  it('requires config and its required fields', () => {
    expect(pathsOf(AlertChannelCreateSchema, { type: 'EMAIL' })).toEqual(['config']);
    expect(pathsOf(AlertChannelCreateSchema, { type: 'WEBHOOK', config: {} })).toEqual(['config.name', 'config.url']);
    expect(pathsOf(AlertChannelCreateSchema, { type: 'PAGING_B', config: {} })).toEqual(['config.name', 'config.apiKey', 'config.region']);
  });

  it.each([
    ['EMAIL', { address: 'not-an-email' }, 'config.address'],
    ['WEBHOOK', { name: 'h', url: 'ftp://example.com' }, 'config.url'],
    ['WEBHOOK', { name: 'h', url: 'not a url' }, 'config.url'],
    ['WEBHOOK', { name: 'h', url: 'https://x.example', method: 'TRACE' }, 'config.method'],
    ['WEBHOOK', { name: 'h', url: 'https://x.example', headers: [{ key: '', value: 'v' }] }, 'config.headers.0.key'],
    ['SMS', { number: '14155550100', name: 'n' }, 'config.number'],
    ['CALL', { number: '+0123', name: 'n' }, 'config.number'],
    ['CHAT', { url: 'chat' }, 'config.url'],
    ['CHAT_APP', { url: 'mailto:a@b.c' }, 'config.url'],
    ['PAGING_A', { serviceKey: '' }, 'config.serviceKey'],
    ['PAGING_B', { name: 'n', apiKey: 'k', region: 'ASIA' }, 'config.region'],
    ['PAGING_B', { name: 'n', apiKey: 'k', region: 'US', priority: 'P6' }, 'config.priority'],
  ])('%s rejects %j at %s', (type, config, path) => {
    expect(pathsOf(AlertChannelCreateSchema, { type, config })).toEqual([path]);
  });

  it('keeps webhook options it is given', () => {
    const parsed = parse(AlertChannelCreateSchema, {
      type: 'WEBHOOK',
      config: { name: 'h', url: 'https://x.example', method: 'PUT', headers: [{ key: 'X-Env', value: 'prod' }], template: '{{CHECK_NAME}}', webhookSecret: 's3cret' },
    });
    expect(parsed.type === 'WEBHOOK' && parsed.config).toMatchObject({
      method: 'PUT', headers: [{ key: 'X-Env', value: 'prod', locked: false }], template: '{{CHECK_NAME}}', webhookSecret: 's3cret',
    });
  });

  it.each([[0, false], [1, true], [30, true], [31, false]])('sslExpiryThreshold %s accepted: %s', (sslExpiryThreshold, ok) => {
    expect(accepts(AlertChannelCreateSchema, { type: 'EMAIL', config: { address: 'a@example.com' }, sslExpiryThreshold })).toBe(ok);
  });

  it('names sslExpiryThreshold with its range', () => {
    expect(issuesOf(AlertChannelCreateSchema, { type: 'EMAIL', config: { address: 'a@example.com' }, sslExpiryThreshold: 31 })).toEqual([
      { path: 'sslExpiryThreshold', message: 'must be between 1 and 30' },
    ]);
  });

  it('every channel type has a config schema and a list of secret fields', () => {
    for (const type of ALERT_CHANNEL_TYPES) {
      expect(ALERT_CHANNEL_CONFIG_SCHEMAS[type]).toBeDefined();
      expect(Array.isArray(SECRET_CONFIG_FIELDS[type])).toBe(true);
    }
    expect(SECRET_CONFIG_FIELDS.WEBHOOK).toEqual(['webhookSecret']);
    expect(SECRET_CONFIG_FIELDS.PAGING_A).toEqual(['serviceKey']);
    expect(SECRET_CONFIG_FIELDS.PAGING_B).toEqual(['apiKey']);
    expect(SECRET_CONFIG_FIELDS.EMAIL).toEqual([]);
  });

  it('the flags schema alone fills the defaults (for plugin channel types)', () => {
    expect(parse(AlertChannelFlagsSchema, {})).toEqual(flagDefaults);
  });
});

describe('alert channel update', () => {
  it('applies no defaults and requires nothing', () => {
    expect(parse(AlertChannelUpdateSchema, {})).toEqual({});
    expect(parse(AlertChannelUpdateSchema, { sendDegraded: true, config: { address: 'x' } })).toEqual({ sendDegraded: true, config: { address: 'x' } });
  });

  it('validates the type, the config shape and the flags it is given', () => {
    expect(pathsOf(AlertChannelUpdateSchema, { type: 'FAX', config: 'x', sslExpiryThreshold: 0 })).toEqual([
      'type', 'config', 'sslExpiryThreshold',
    ]);
  });
});

describe('alert channel records and responses', () => {
  const stored = { id: 3, accountId: 'acc', created_at: '2026-05-01T12:00:00.000Z', updated_at: null };

  it('a record is typed by its channel type', () => {
    const record = parse(AlertChannelSchema, { ...parse(AlertChannelCreateSchema, { type: 'SMS', config: minimalConfigs.SMS![0] }), ...stored });
    expect(record).toMatchObject({ id: 3, accountId: 'acc', type: 'SMS', config: { number: '+14155550100' } });
    expect(pathsOf(AlertChannelSchema, { type: 'SMS', config: minimalConfigs.SMS![0], ...stored, id: undefined })).toEqual(['id']);
  });

  it('a response adds subscriptions and drops accountId', () => {
    const response = parse(AlertChannelResponseSchema, {
      type: 'EMAIL',
      config: { address: 'a@example.com' },
      ...stored,
      subscriptions: [{ id: 1, checkId: 'c1', groupId: null, activated: true }],
    });
    expect(response).not.toHaveProperty('accountId');
    expect(response.subscriptions).toHaveLength(1);
    expect(pathsOf(AlertChannelResponseSchema, { type: 'EMAIL', config: { address: 'a@example.com' }, ...stored })).toEqual(['subscriptions']);
  });

  it('a subscription record names a check or a group', () => {
    const record = { id: 1, accountId: 'acc', alertChannelId: 3, checkId: null, groupId: 4, activated: true };
    expect(parse(AlertSubscriptionSchema, record)).toEqual(record);
    expect(pathsOf(AlertSubscriptionSchema, { ...record, groupId: undefined })).toEqual(['groupId']);
  });
});

describe('AlertChannelSubscriptionsUpdateSchema', () => {
  it('accepts items naming a check or a group, activated defaulting to true', () => {
    expect(parse(AlertChannelSubscriptionsUpdateSchema, [{ checkId: 'c1', activated: false }, { groupId: 2 }])).toEqual([
      { checkId: 'c1', activated: false },
      { groupId: 2, activated: true },
    ]);
    expect(parse(AlertChannelSubscriptionsUpdateSchema, [])).toEqual([]);
  });

  it('rejects an item naming both or neither, naming its index', () => {
    expect(issuesOf(AlertChannelSubscriptionsUpdateSchema, [{ checkId: 'c', groupId: 1, activated: true }, { activated: true }])).toEqual([
      { path: '0', message: 'must name exactly one of checkId or groupId' },
      { path: '1', message: 'must name exactly one of checkId or groupId' },
    ]);
  });

  it('rejects a wrong groupId or a body that is not an array', () => {
    expect(pathsOf(AlertChannelSubscriptionsUpdateSchema, [{ groupId: 0 }])).toEqual(['0.groupId']);
    expect(issuesOf(AlertChannelSubscriptionsUpdateSchema, {})).toEqual([{ path: '', message: 'must be an array of subscriptions' }]);
  });
});

describe('alert types', () => {
  it('lists the alert messages and rejects others', () => {
    expect(ALERT_TYPES).toEqual([
      'ALERT_FAILURE', 'ALERT_RECOVERY', 'ALERT_DEGRADED', 'ALERT_DEGRADED_RECOVERY', 'ALERT_FAILURE_REMAIN',
      'ALERT_DEGRADED_FAILURE', 'ALERT_FAILURE_DEGRADED', 'ALERT_SSL',
    ]);
    expect(parse(AlertTypeSchema, 'ALERT_SSL')).toBe('ALERT_SSL');
    expect(accepts(AlertTypeSchema, 'ALERT_MAYBE')).toBe(false);
  });
});
