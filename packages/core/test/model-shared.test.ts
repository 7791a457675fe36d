import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parse } from '../src/model/parse.js';
import {
  API_ASSERTION_COMPARISONS,
  API_ASSERTION_SOURCES,
  ASSERTION_COMPARISONS,
  AlertChannelSubscriptionSchema,
  AlertSettingsSchema,
  ApiAssertionSchema,
  ApiCheckDefaultsSchema,
  DEFAULT_ALERT_SETTINGS,
  EnvironmentVariableSchema,
  EnvironmentVariablesSchema,
  GroupRetryStrategySchema,
  KeyValueSchema,
  RetryStrategySchema,
  SECRET_ENV_PREFIX,
  TCP_ASSERTION_SOURCES,
  TcpAssertionSchema,
  TriggerIncidentSchema,
  UNLIMITED_REMINDERS,
  WebhookKeyValueSchema,
  integerAtLeast,
  isSecretVariable,
  modelObject,
  updateEntries,
} from '../src/model/shared.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';


describe('AlertSettingsSchema', () => {
  it('parses {} to the full default settings', () => {
    const expected = {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      timeBasedEscalation: { minutesFailingThreshold: 5 },
      reminders: { amount: 0, interval: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    };
    expect(parse(AlertSettingsSchema, {})).toEqual(expected);
    expect(DEFAULT_ALERT_SETTINGS).toEqual(expected);
  });

  it('fills the defaults of a partly given nested object', () => {
    const parsed = parse(AlertSettingsSchema, { reminders: { amount: 2 } });
    expect(parsed.reminders).toEqual({ amount: 2, interval: 5 });
  });

  it('gives each parse its own objects', () => {
    const first = parse(AlertSettingsSchema, {});
    first.reminders.amount = 3;
    expect(parse(AlertSettingsSchema, {}).reminders.amount).toBe(0);
  });

  it.each([
    [0, false], [1, true], [5, true], [6, false], [2.5, false],
  ])('failedRunThreshold %s accepted: %s', (value, ok) => {
    expect(accepts(AlertSettingsSchema, { runBasedEscalation: { failedRunThreshold: value } })).toBe(ok);
  });

  it('names the field and the range of failedRunThreshold', () => {
    expect(issuesOf(AlertSettingsSchema, { runBasedEscalation: { failedRunThreshold: 6 } })).toEqual([
      { path: 'runBasedEscalation.failedRunThreshold', message: 'must be between 1 and 5' },
    ]);
  });

  it.each([
    [-1, false], [0, true], [5, true], [6, false], [1.5, false], [99999, false], [UNLIMITED_REMINDERS, true], [100001, false],
  ])('reminders.amount %s accepted: %s', (amount, ok) => {
    expect(accepts(AlertSettingsSchema, { reminders: { amount } })).toBe(ok);
  });

  it.each([
    [1, true], [5, true], [6, false], [10, true], [30, true], [31, false], [0, false],
  ])('reminders.interval %s accepted: %s', (interval, ok) => {
    expect(accepts(AlertSettingsSchema, { reminders: { interval } })).toBe(ok);
  });

  it.each([
    [5, true], [10, true], [15, true], [30, true], [4, false], [20, false],
  ])('minutesFailingThreshold %s accepted: %s', (value, ok) => {
    expect(accepts(AlertSettingsSchema, { timeBasedEscalation: { minutesFailingThreshold: value } })).toBe(ok);
  });

  it.each([
    [0, false], [9, false], [10, true], [15, false], [50, true], [100, true], [110, false],
  ])('parallelRunFailureThreshold.percentage %s accepted: %s', (percentage, ok) => {
    expect(accepts(AlertSettingsSchema, { parallelRunFailureThreshold: { percentage } })).toBe(ok);
  });

  it('accepts TIME_BASED and rejects another escalation type', () => {
    expect(parse(AlertSettingsSchema, { escalationType: 'TIME_BASED' }).escalationType).toBe('TIME_BASED');
    expect(issuesOf(AlertSettingsSchema, { escalationType: 'SOMETIMES' })).toEqual([
      { path: 'escalationType', message: 'must be one of RUN_BASED, TIME_BASED' },
    ]);
  });

  it('rejects a nested value that is not an object', () => {
    expect(issuesOf(AlertSettingsSchema, { reminders: 3 })).toEqual([{ path: 'reminders', message: 'must be an object' }]);
  });
});

describe('RetryStrategySchema', () => {
  it('requires type and fills the defaults', () => {
    expect(pathsOf(RetryStrategySchema, {})).toEqual(['type']);
    expect(parse(RetryStrategySchema, { type: 'LINEAR' })).toEqual({
      type: 'LINEAR', baseBackoffSeconds: 60, maxRetries: 2, maxDurationSeconds: 600, sameRegion: true, onlyOn: [],
    });
  });

  it.each(['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY'])('accepts type %s', (type) => {
    expect(accepts(RetryStrategySchema, { type })).toBe(true);
  });

  it('rejects another type', () => {
    expect(pathsOf(RetryStrategySchema, { type: 'RANDOM' })).toEqual(['type']);
  });

  it.each([
    ['baseBackoffSeconds', -1, false], ['baseBackoffSeconds', 0, true], ['baseBackoffSeconds', 600, true], ['baseBackoffSeconds', 601, false],
    ['maxRetries', 0, false], ['maxRetries', 1, true], ['maxRetries', 10, true], ['maxRetries', 11, false],
    ['maxDurationSeconds', -1, false], ['maxDurationSeconds', 0, true], ['maxDurationSeconds', 600, true], ['maxDurationSeconds', 601, false],
  ])('%s %s accepted: %s', (field, value, ok) => {
    expect(accepts(RetryStrategySchema, { type: 'FIXED', [field]: value })).toBe(ok);
  });

  it('allows onlyOn to hold NETWORK_ERROR once', () => {
    expect(parse(RetryStrategySchema, { type: 'FIXED', onlyOn: ['NETWORK_ERROR'] }).onlyOn).toEqual(['NETWORK_ERROR']);
    expect(pathsOf(RetryStrategySchema, { type: 'FIXED', onlyOn: ['NETWORK_ERROR', 'NETWORK_ERROR'] })).toEqual(['onlyOn']);
    expect(pathsOf(RetryStrategySchema, { type: 'FIXED', onlyOn: ['TIMEOUT'] })).toEqual(['onlyOn.0']);
  });

  it('groups also accept FALLBACK, nothing else as a string', () => {
    expect(parse(GroupRetryStrategySchema, 'FALLBACK')).toBe('FALLBACK');
    expect(parse(GroupRetryStrategySchema, { type: 'FIXED' })).toMatchObject({ type: 'FIXED', maxRetries: 2 });
    expect(issuesOf(GroupRetryStrategySchema, 'NEVER')[0]?.message).toBe('must be FALLBACK or a retry strategy object');
  });
});

describe('TriggerIncidentSchema and AlertChannelSubscriptionSchema', () => {
  it('defaults notifySubscribers to false and requires the other fields', () => {
    expect(parse(TriggerIncidentSchema, { serviceId: 's1', name: 'Outage', description: '' })).toEqual({
      serviceId: 's1', name: 'Outage', description: '', notifySubscribers: false,
    });
    expect(pathsOf(TriggerIncidentSchema, {})).toEqual(['serviceId', 'name', 'description']);
  });

  it('needs a positive integer channel id and defaults activated to true', () => {
    expect(parse(AlertChannelSubscriptionSchema, { alertChannelId: 1 })).toEqual({ alertChannelId: 1, activated: true });
    expect(pathsOf(AlertChannelSubscriptionSchema, { alertChannelId: 0 })).toEqual(['alertChannelId']);
    expect(pathsOf(AlertChannelSubscriptionSchema, { alertChannelId: 1.5 })).toEqual(['alertChannelId']);
  });
});

describe('environment variables', () => {
  const variable = (key: string) => ({ key, value: 'v' });

  it('defaults locked and secret to false', () => {
    expect(parse(EnvironmentVariableSchema, variable('API_URL'))).toEqual({ key: 'API_URL', value: 'v', locked: false, secret: false });
  });

  it.each([
    ['_a1', true], ['A', true], ['1A', false], ['A-B', false], ['A B', false], ['', false],
    ['K'.repeat(255), true], ['K'.repeat(256), false],
  ])('key %j accepted: %s', (key, ok) => {
    expect(accepts(EnvironmentVariableSchema, variable(key))).toBe(ok);
  });

  it('accepts 100 variables and names the 101st', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => variable(`V${i}`));
    expect(parse(EnvironmentVariablesSchema, list(100))).toHaveLength(100);
    expect(issuesOf(EnvironmentVariablesSchema, list(101))).toEqual([
      { path: '100', message: 'is over the limit of 100 environment variables' },
    ]);
  });

  it('names each duplicate key', () => {
    const issues = issuesOf(EnvironmentVariablesSchema, [variable('A'), variable('B'), variable('A')]);
    expect(issues).toEqual([{ path: '2.key', message: 'is a duplicate key: A' }]);
  });

  it('accepts null', () => {
    expect(parse(EnvironmentVariablesSchema, null)).toBeNull();
  });

  it('treats secret variables and SERVICE_SECRET_ keys as secret', () => {
    expect(SECRET_ENV_PREFIX).toBe('SERVICE_SECRET_');
    expect(isSecretVariable({ key: 'TOKEN', secret: true })).toBe(true);
    expect(isSecretVariable({ key: 'SERVICE_SECRET_TOKEN', secret: false })).toBe(true);
    expect(isSecretVariable({ key: 'TOKEN', secret: false })).toBe(false);
    expect(isSecretVariable({ key: 'service_secret_token' })).toBe(false);
  });
});

describe('key/value pairs', () => {
  it('needs a non-empty key; webhook pairs default locked to false', () => {
    expect(parse(KeyValueSchema, { key: 'Accept', value: 'json', extra: 1 })).toEqual({ key: 'Accept', value: 'json' });
    expect(pathsOf(KeyValueSchema, { key: '', value: 'x' })).toEqual(['key']);
    expect(parse(WebhookKeyValueSchema, { key: 'X', value: 'y' })).toEqual({ key: 'X', value: 'y', locked: false });
  });
});

describe('assertions', () => {
  it('fills target, property and regex defaults', () => {
    expect(parse(TcpAssertionSchema, { source: 'RESPONSE_DATA', comparison: 'CONTAINS' })).toEqual({
      source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '', property: '', regex: null,
    });
  });

  it.each(TCP_ASSERTION_SOURCES.flatMap((s) => ASSERTION_COMPARISONS.map((c) => [s, c])))('TCP accepts %s %s', (source, comparison) => {
    expect(accepts(TcpAssertionSchema, { source, comparison })).toBe(true);
  });

  it.each(API_ASSERTION_SOURCES.flatMap((s) => API_ASSERTION_COMPARISONS.map((c) => [s, c])))('API accepts %s %s', (source, comparison) => {
    expect(accepts(ApiAssertionSchema, { source, comparison })).toBe(true);
  });

  it('keeps API-only sources and comparisons out of TCP assertions', () => {
    expect(pathsOf(TcpAssertionSchema, { source: 'STATUS_CODE', comparison: 'HAS_KEY' })).toEqual(['source', 'comparison']);
    expect(pathsOf(ApiAssertionSchema, { source: 'RESPONSE_DATA', comparison: 'MATCHES' })).toEqual(['source', 'comparison']);
  });

  it('requires a regex that compiles', () => {
    expect(parse(TcpAssertionSchema, { source: 'RESPONSE_DATA', comparison: 'EQUALS', regex: '^OK (\\d+)' }).regex).toBe('^OK (\\d+)');
    expect(issuesOf(TcpAssertionSchema, { source: 'RESPONSE_DATA', comparison: 'EQUALS', regex: '(' })).toEqual([
      { path: 'regex', message: 'must be a valid regular expression' },
    ]);
  });
});

describe('ApiCheckDefaultsSchema', () => {
  it('parses {} to the full defaults', () => {
    expect(parse(ApiCheckDefaultsSchema, {})).toEqual({
      url: '', headers: [], queryParameters: [], assertions: [], basicAuth: { username: '', password: '' },
    });
  });

  it('names nested fields', () => {
    expect(pathsOf(ApiCheckDefaultsSchema, { assertions: [{ source: 'TEXT_BODY', comparison: 'NOPE' }] })).toEqual([
      'assertions.0.comparison',
    ]);
  });
});

describe('updateEntries', () => {
  const create = modelObject({ a: v.optional(v.number(), 1), b: v.string(), c: v.optional(v.nullable(v.string()), null) });
  const update = modelObject(updateEntries(create.entries));

  it('makes every field optional and drops defaults', () => {
    expect(parse(update, {})).toEqual({});
    expect(parse(update, { b: 'x', c: null })).toEqual({ b: 'x', c: null });
  });

  it('keeps the field validation', () => {
    expect(pathsOf(update, { a: 'x' })).toEqual(['a']);
  });

  it('integerAtLeast names its bound', () => {
    expect(issuesOf(integerAtLeast(3), 2)).toEqual([{ path: '', message: 'must be an integer of at least 3' }]);
  });
});
