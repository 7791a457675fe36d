import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import {
  BUILTIN_CHECK_TYPES,
  BrowserCheckCreateSchema,
  BrowserCheckResponseSchema,
  BrowserCheckUpdateSchema,
  CheckCommonCreateSchema,
  CheckCreateSchemas,
  CheckResponseSchema,
  CheckSchema,
  CheckUpdateSchemas,
  HeartbeatCheckCreateSchema,
  HeartbeatCheckSchema,
  HeartbeatCheckUpdateSchema,
  TcpCheckCreateSchema,
  TcpCheckSchema,
  TcpCheckUpdateSchema,
  heartbeatSeconds,
  isBuiltinCheckType,
} from '../src/model/check.js';
import { parse } from '../src/model/parse.js';
import { CHECK_DEFAULTS } from '../src/testing/fixtures.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';


const tcp = (extra: Record<string, unknown> = {}) => ({ name: 'db', request: { port: 5432, hostname: 'db.internal' }, ...extra });
const browser = (extra: Record<string, unknown> = {}) => ({ name: 'home', script: 'await page.goto("/")', ...extra });
const heartbeat = (hb: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'nightly job',
  heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes', ...hb },
  ...extra,
});

const commonDefaults = CHECK_DEFAULTS;

describe('TCP check create', () => {
  it('fills every default from a minimal body and drops unknown fields', () => {
    expect(parse(TcpCheckCreateSchema, tcp({ surprise: true, id: 'x' }))).toEqual({
      ...commonDefaults,
      name: 'db',
      request: { port: 5432, hostname: 'db.internal', data: null, assertions: [], ipFamily: 'IPv4' },
      frequencyOffset: null,
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
    });
  });

  it('requires name and request, and port and hostname inside request', () => {
    expect(issuesOf(TcpCheckCreateSchema, {})).toEqual([
      { path: 'name', message: 'is required' },
      { path: 'request', message: 'is required' },
    ]);
    expect(pathsOf(TcpCheckCreateSchema, { name: 'db', request: {} })).toEqual(['request.port', 'request.hostname']);
    expect(pathsOf(TcpCheckCreateSchema, tcp({ name: '  ' }))).toEqual(['name']);
  });

  it.each([[0, false], [1, true], [65535, true], [65536, false]])('request.port %s accepted: %s', (port, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ request: { port, hostname: 'h' } }))).toBe(ok);
  });

  it('names request.port with a readable range', () => {
    const err = (() => {
      try {
        parse(TcpCheckCreateSchema, tcp({ request: { port: 70000, hostname: 'h' } }));
      } catch (e) {
        return e as ValidationError;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect(err?.keys).toEqual(['request.port']);
    expect(err?.message).toBe('"request.port" must be between 1 and 65535');
  });

  it.each([
    ['degradedResponseTime', -1, false], ['degradedResponseTime', 0, true], ['degradedResponseTime', 5000, true],
    ['degradedResponseTime', 5001, false], ['degradedResponseTime', null, true],
    ['maxResponseTime', -1, false], ['maxResponseTime', 0, true], ['maxResponseTime', 5000, true],
    ['maxResponseTime', 5001, false], ['maxResponseTime', null, true],
  ])('%s %s accepted: %s', (field, value, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ [field]: value }))).toBe(ok);
  });

  it.each([[500, true], [501, false]])('description of %s characters accepted: %s', (length, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ description: 'd'.repeat(length) }))).toBe(ok);
  });

  it.each([[-1, false], [0, true], [null, true]])('groupOrder %s accepted: %s', (groupOrder, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ groupOrder }))).toBe(ok);
  });

  it.each([[0, false], [1, true], [null, true]])('groupId %s accepted: %s', (groupId, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ groupId }))).toBe(ok);
  });

  it('accepts frequency 0 with an offset and rejects a frequency outside the list', () => {
    expect(parse(TcpCheckCreateSchema, tcp({ frequency: 0, frequencyOffset: 10 })).frequency).toBe(0);
    expect(pathsOf(TcpCheckCreateSchema, tcp({ frequency: 3 }))).toEqual(['frequency']);
  });

  it('rejects a wrong value of each enum, naming the field', () => {
    expect(pathsOf(TcpCheckCreateSchema, tcp({
      locations: ['mars-1'],
      runtimeId: '2019.01',
      request: { port: 1, hostname: 'h', ipFamily: 'IPv5', assertions: [{ source: 'BODY', comparison: 'EQUALS' }] },
      alertSettings: { reminders: { amount: 7 } },
    }))).toEqual(['locations.0', 'alertSettings.reminders.amount', 'runtimeId', 'request.assertions.0.source', 'request.ipFamily']);
  });

  it('accepts IPv6, data, assertions, tags, subscriptions, a retry strategy and a trigger', () => {
    const parsed = parse(TcpCheckCreateSchema, tcp({
      request: { port: 25, hostname: '::1', ipFamily: 'IPv6', data: 'HELO\r\n', assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200' }] },
      tags: ['prod'],
      alertChannelSubscriptions: [{ alertChannelId: 4 }],
      retryStrategy: { type: 'EXPONENTIAL' },
      triggerIncident: { serviceId: 's', name: 'n', description: 'd' },
      locations: null,
      privateLocations: null,
    }));
    expect(parsed.request.ipFamily).toBe('IPv6');
    expect(parsed.request.assertions[0]).toEqual({ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200', property: '', regex: null });
    expect(parsed.alertChannelSubscriptions).toEqual([{ alertChannelId: 4, activated: true }]);
    expect(parsed.retryStrategy?.maxRetries).toBe(2);
    expect(parsed.triggerIncident?.notifySubscribers).toBe(false);
    expect(parsed.locations).toBeNull();
    expect(parsed.privateLocations).toBeNull();
  });
});

describe('TCP frequencyOffset rules', () => {
  it.each([
    [0, 10, true], [0, 20, true], [0, 30, true], [0, 15, false], [0, 40, false], [0, undefined, false], [0, null, false],
    [1, 1, true], [1, 10, true], [1, 11, false],
    [5, 0, false], [5, 1, true], [5, 50, true], [5, 51, false],
    [60, 600, true], [60, 601, false],
    [120, 2, true], [120, 3, false],
    [720, 12, true], [720, 13, false],
    [1440, 1, true], [1440, 24, true], [1440, 25, false],
    [10, undefined, true], [10, null, true], [10, 2.5, false],
  ])('frequency %s with offset %s accepted: %s', (frequency, frequencyOffset, ok) => {
    expect(accepts(TcpCheckCreateSchema, tcp({ frequency, frequencyOffset }))).toBe(ok);
  });

  it('names frequencyOffset and says what is allowed', () => {
    expect(issuesOf(TcpCheckCreateSchema, tcp({ frequency: 0 }))).toEqual([
      { path: 'frequencyOffset', message: 'is required when frequency is 0 (10, 20 or 30)' },
    ]);
    expect(issuesOf(TcpCheckCreateSchema, tcp({ frequency: 0, frequencyOffset: 15 }))).toEqual([
      { path: 'frequencyOffset', message: 'must be 10, 20 or 30 when frequency is 0' },
    ]);
    expect(issuesOf(TcpCheckCreateSchema, tcp({ frequency: 720, frequencyOffset: 13 }))).toEqual([
      { path: 'frequencyOffset', message: 'must be between 1 and 12 when frequency is 720' },
    ]);
  });

  it('checks the offset against the default frequency of 10', () => {
    expect(accepts(TcpCheckCreateSchema, tcp({ frequencyOffset: 100 }))).toBe(true);
    expect(pathsOf(TcpCheckCreateSchema, tcp({ frequencyOffset: 101 }))).toEqual(['frequencyOffset']);
  });

  it('still checks the offset when another field is invalid', () => {
    expect(pathsOf(TcpCheckCreateSchema, tcp({ name: '', frequency: 5, frequencyOffset: 51 }))).toEqual(['name', 'frequencyOffset']);
  });
});

describe('TCP check update', () => {
  it('applies no defaults and requires nothing', () => {
    expect(parse(TcpCheckUpdateSchema, {})).toEqual({});
    expect(parse(TcpCheckUpdateSchema, { muted: true, description: null, unknown: 1 })).toEqual({ muted: true, description: null });
  });

  it('still validates the fields it is given', () => {
    expect(pathsOf(TcpCheckUpdateSchema, { degradedResponseTime: 5001, request: { port: 0, hostname: 'h' } })).toEqual([
      'request.port',
      'degradedResponseTime',
    ]);
  });
});

describe('browser check', () => {
  it('fills the defaults and requires a script', () => {
    expect(parse(BrowserCheckCreateSchema, browser())).toEqual({
      ...commonDefaults,
      name: 'home',
      script: 'await page.goto("/")',
      scriptPath: null,
      dependencies: null,
      sslCheckDomain: null,
      environmentVariables: [],
    });
    expect(pathsOf(BrowserCheckCreateSchema, { name: 'home' })).toEqual(['script']);
    expect(issuesOf(BrowserCheckCreateSchema, browser({ script: '  \n' }))).toEqual([{ path: 'script', message: 'must not be empty' }]);
    expect(pathsOf(BrowserCheckCreateSchema, browser({ script: null }))).toEqual(['script']);
  });

  it('accepts only the listed frequencies (no 0)', () => {
    expect(accepts(BrowserCheckCreateSchema, browser({ frequency: 1440 }))).toBe(true);
    expect(pathsOf(BrowserCheckCreateSchema, browser({ frequency: 0 }))).toEqual(['frequency']);
  });

  it.each([
    ['lib/helpers.js', true], ['a/b/c.json', true], ['./x.js', true], ['', false], ['/etc/passwd', false],
    ['\\share\\x', false], ['C:\\x.js', false], ['../x.js', false], ['a/../../b', false], ['a\\..\\b', false],
  ])('dependency path %j accepted: %s', (path, ok) => {
    expect(accepts(BrowserCheckCreateSchema, browser({ dependencies: [{ path, content: 'x' }] }))).toBe(ok);
  });

  it('names the offending dependency', () => {
    expect(issuesOf(BrowserCheckCreateSchema, browser({ dependencies: [{ path: 'ok.js', content: '' }, { path: '../x', content: '' }] }))).toEqual([
      { path: 'dependencies.1.path', message: 'must be a relative path without .. segments' },
    ]);
  });

  it.each([
    ['example.com', true], ['shop.example.co.uk', true], ['xn--bcher-kva.example', true],
    ['https://example.com', false], ['example.com/path', false], ['localhost', false], ['-bad.example.com', false],
    ['exa mple.com', false],
  ])('sslCheckDomain %j accepted: %s', (sslCheckDomain, ok) => {
    expect(accepts(BrowserCheckCreateSchema, browser({ sslCheckDomain }))).toBe(ok);
  });

  it('accepts 100 environment variables and names the 101st', () => {
    const vars = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `K${i}`, value: 'v' }));
    expect(accepts(BrowserCheckCreateSchema, browser({ environmentVariables: vars(100) }))).toBe(true);
    expect(pathsOf(BrowserCheckCreateSchema, browser({ environmentVariables: vars(101) }))).toEqual(['environmentVariables.100']);
    expect(pathsOf(BrowserCheckCreateSchema, browser({ environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }))).toEqual([
      'environmentVariables.1.key',
    ]);
    expect(parse(BrowserCheckCreateSchema, browser({ environmentVariables: null })).environmentVariables).toBeNull();
  });

  it('update applies no defaults and keeps the script rule', () => {
    expect(parse(BrowserCheckUpdateSchema, { tags: ['a'] })).toEqual({ tags: ['a'] });
    expect(pathsOf(BrowserCheckUpdateSchema, { script: '' })).toEqual(['script']);
  });
});

describe('heartbeat check', () => {
  it('fills the common defaults and keeps the heartbeat settings', () => {
    const parsed = parse(HeartbeatCheckCreateSchema, heartbeat());
    expect(parsed).toEqual({
      ...commonDefaults,
      name: 'nightly job',
      heartbeat: { period: 1, periodUnit: 'days', grace: 30, graceUnit: 'minutes' },
    });
  });

  it('requires heartbeat and its four fields', () => {
    expect(pathsOf(HeartbeatCheckCreateSchema, { name: 'x' })).toEqual(['heartbeat']);
    expect(pathsOf(HeartbeatCheckCreateSchema, { name: 'x', heartbeat: {} })).toEqual([
      'heartbeat.period', 'heartbeat.periodUnit', 'heartbeat.grace', 'heartbeat.graceUnit',
    ]);
  });

  it.each([
    [29, 'seconds', false], [30, 'seconds', true], [1, 'minutes', true], [0, 'minutes', false],
    [365, 'days', true], [366, 'days', false], [8760, 'hours', true], [8761, 'hours', false], [1.5, 'hours', false],
  ])('period %s %s accepted: %s', (period, periodUnit, ok) => {
    expect(accepts(HeartbeatCheckCreateSchema, heartbeat({ period, periodUnit }))).toBe(ok);
  });

  it.each([
    [-1, 'seconds', false], [0, 'seconds', true], [365, 'days', true], [366, 'days', false], [525600, 'minutes', true], [525601, 'minutes', false],
  ])('grace %s %s accepted: %s', (grace, graceUnit, ok) => {
    expect(accepts(HeartbeatCheckCreateSchema, heartbeat({ grace, graceUnit }))).toBe(ok);
  });

  it('names heartbeat.period and heartbeat.grace when out of bounds', () => {
    expect(issuesOf(HeartbeatCheckCreateSchema, heartbeat({ period: 10, periodUnit: 'seconds', grace: 400, graceUnit: 'days' }))).toEqual([
      { path: 'heartbeat.period', message: 'must be at least 30 seconds and at most 365 days' },
      { path: 'heartbeat.grace', message: 'must be at most 365 days' },
    ]);
    expect(pathsOf(HeartbeatCheckCreateSchema, heartbeat({ periodUnit: 'weeks' }))).toEqual(['heartbeat.periodUnit']);
  });

  it('computes seconds per unit', () => {
    expect(heartbeatSeconds(2, 'hours')).toBe(7200);
    expect(heartbeatSeconds(3, 'seconds')).toBe(3);
  });

  it('update applies no defaults', () => {
    expect(parse(HeartbeatCheckUpdateSchema, { activated: false })).toEqual({ activated: false });
  });
});

describe('records and responses', () => {
  const stored = {
    id: '7d2b0c5e-3b0a-4c43-9e0f-8f5a3c2a1b00',
    accountId: 'acc',
    created_at: '2026-05-01T12:00:00.000Z',
    updated_at: null,
  };
  const summary = { email: [{ address: 'a@example.com' }], webhook: [], chat: [], sms: [] };

  it('tells the check types apart by checkType', () => {
    const tcpRecord = parse(CheckSchema, { ...parse(TcpCheckCreateSchema, tcp()), ...stored, checkType: 'TCP' });
    expect(tcpRecord.checkType).toBe('TCP');
    expect(tcpRecord).toMatchObject({ accountId: 'acc', request: { port: 5432 } });
    const hb = parse(CheckSchema, {
      ...parse(HeartbeatCheckCreateSchema, heartbeat()),
      heartbeat: { period: 1, periodUnit: 'days', grace: 0, graceUnit: 'hours', pingToken: 'tok' },
      ...stored,
      checkType: 'HEARTBEAT',
    });
    expect(hb.checkType === 'HEARTBEAT' && hb.heartbeat.pingToken).toBe('tok');
    expect(pathsOf(CheckSchema, { ...stored, checkType: 'AGENTIC' })).toEqual(['checkType']);
    expect(pathsOf(HeartbeatCheckSchema, { ...heartbeat(), ...stored, checkType: 'HEARTBEAT' })).toEqual(['heartbeat.pingToken']);
  });

  it('a record keeps its type-specific fields and requires the stored ones', () => {
    expect(pathsOf(TcpCheckSchema, { ...tcp(), checkType: 'TCP' })).toEqual(['id', 'accountId', 'created_at', 'updated_at']);
  });

  it('responses carry alertChannels and no accountId; browser responses carry script', () => {
    const response = parse(CheckResponseSchema, {
      ...parse(BrowserCheckCreateSchema, browser()),
      ...stored,
      checkType: 'BROWSER',
      alertChannels: summary,
    });
    expect(response).not.toHaveProperty('accountId');
    expect(response.alertChannels).toEqual(summary);
    expect(pathsOf(BrowserCheckResponseSchema, { ...browser(), ...stored, checkType: 'BROWSER', script: undefined, alertChannels: summary })).toEqual(['script']);
    expect(pathsOf(CheckResponseSchema, { ...tcp(), ...stored, checkType: 'TCP' })).toEqual(['alertChannels']);
  });

  it('maps each built-in type to its create and update schema', () => {
    expect(Object.keys(CheckCreateSchemas)).toEqual([...BUILTIN_CHECK_TYPES]);
    expect(Object.keys(CheckUpdateSchemas)).toEqual([...BUILTIN_CHECK_TYPES]);
    expect(CheckCreateSchemas.TCP).toBe(TcpCheckCreateSchema);
    expect(CheckUpdateSchemas.BROWSER).toBe(BrowserCheckUpdateSchema);
    expect(isBuiltinCheckType('HEARTBEAT')).toBe(true);
    expect(isBuiltinCheckType('AGENTIC')).toBe(false);
  });

  it('the common schema alone serves check types a plugin adds', () => {
    expect(parse(CheckCommonCreateSchema, { name: 'x', url: 'dropped' })).toEqual({ ...commonDefaults, name: 'x' });
  });
});
