import { describe, expect, it } from 'vitest';
import {
  CheckGroupCreateSchema,
  CheckGroupResponseSchema,
  CheckGroupSchema,
  CheckGroupUpdateSchema,
} from '../src/model/check-group.js';
import { parse } from '../src/model/parse.js';
import { CHECK_GROUP_DEFAULTS } from '../src/testing/fixtures.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';


describe('check group create', () => {
  it('fills every default from a minimal body and drops unknown fields', () => {
    expect(parse(CheckGroupCreateSchema, { name: 'prod', frequency: 5 })).toEqual({
      name: 'prod',
      ...CHECK_GROUP_DEFAULTS,
    });
  });

  it('requires a name', () => {
    expect(issuesOf(CheckGroupCreateSchema, {})).toEqual([{ path: 'name', message: 'is required' }]);
  });

  it.each([[0, false], [1, true], [50, true], [1.5, false]])('concurrency %s accepted: %s', (concurrency, ok) => {
    expect(accepts(CheckGroupCreateSchema, { name: 'g', concurrency })).toBe(ok);
  });

  it('accepts a retry strategy object, FALLBACK or null', () => {
    expect(parse(CheckGroupCreateSchema, { name: 'g', retryStrategy: { type: 'FIXED' } }).retryStrategy).toMatchObject({ type: 'FIXED' });
    expect(parse(CheckGroupCreateSchema, { name: 'g', retryStrategy: null }).retryStrategy).toBeNull();
    expect(pathsOf(CheckGroupCreateSchema, { name: 'g', retryStrategy: { type: 'FIXED', maxRetries: 11 } })).toEqual(['retryStrategy.maxRetries']);
    expect(pathsOf(CheckGroupCreateSchema, { name: 'g', retryStrategy: 'SOMETIMES' })).toEqual(['retryStrategy']);
  });

  it('accepts null for its nullable fields', () => {
    const parsed = parse(CheckGroupCreateSchema, {
      name: 'g', runParallel: null, useGlobalAlertSettings: null, environmentVariables: null, privateLocations: null,
    });
    expect(parsed).toMatchObject({ runParallel: null, useGlobalAlertSettings: null, environmentVariables: null, privateLocations: null });
  });

  it('names nested and indexed fields', () => {
    const vars = Array.from({ length: 101 }, (_, i) => ({ key: `K${i}`, value: '' }));
    expect(pathsOf(CheckGroupCreateSchema, {
      name: 'g',
      locations: ['moon-1'],
      apiCheckDefaults: { assertions: [{ source: 'STATUS_CODE', comparison: 'ALMOST' }] },
      environmentVariables: vars,
      alertChannelSubscriptions: [{ alertChannelId: -1 }],
      setupSnippetId: 0,
    })).toEqual([
      'locations.0',
      'apiCheckDefaults.assertions.0.comparison',
      'environmentVariables.100',
      'alertChannelSubscriptions.0.alertChannelId',
      'setupSnippetId',
    ]);
  });

  it('rejects null locations (the spec gives groups a plain array)', () => {
    expect(pathsOf(CheckGroupCreateSchema, { name: 'g', locations: null })).toEqual(['locations']);
  });
});

describe('check group update', () => {
  it('requires name and applies no defaults', () => {
    expect(pathsOf(CheckGroupUpdateSchema, { muted: true })).toEqual(['name']);
    expect(parse(CheckGroupUpdateSchema, { name: 'g', muted: true })).toEqual({ name: 'g', muted: true });
  });

  it('still validates given fields', () => {
    expect(pathsOf(CheckGroupUpdateSchema, { name: 'g', concurrency: 0 })).toEqual(['concurrency']);
  });
});

describe('check group record and response', () => {
  const stored = { id: 7, accountId: 'acc', created_at: '2026-05-01T12:00:00.000Z', updated_at: null };

  it('has a numeric id; the response drops accountId', () => {
    const record = parse(CheckGroupSchema, { ...parse(CheckGroupCreateSchema, { name: 'g' }), ...stored });
    expect(record).toMatchObject({ id: 7, accountId: 'acc' });
    expect(pathsOf(CheckGroupSchema, { name: 'g', ...stored, id: 'seven' })).toEqual(['id']);
    expect(parse(CheckGroupResponseSchema, record)).not.toHaveProperty('accountId');
  });
});
