import { describe, expect, it } from 'vitest';
import {
  CheckResultResponseSchema,
  CheckResultSchema,
  CheckResultsQuerySchema,
  RUN_SOURCES,
} from '../src/model/check-result.js';
import {
  CHECK_SESSION_STATUSES,
  CheckSessionCancelSchema,
  CheckSessionResponseSchema,
  CheckSessionSchema,
  CheckSessionTriggerSchema,
  CompletionQuerySchema,
  FINAL_SESSION_STATUSES,
  isFinalSessionStatus,
} from '../src/model/check-session.js';
import { CheckStatusResponseSchema, CheckStatusSchema } from '../src/model/check-status.js';
import { parse } from '../src/model/parse.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';


const UUID_A = '2f1d6a52-8f0e-4b7a-9c1d-3e5f7a9b1c2d';
const UUID_B = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

const result = {
  id: UUID_A,
  accountId: 'acc',
  checkId: 'check-1',
  checkType: 'TCP',
  name: 'db',
  runLocation: 'eu-west-1',
  startedAt: '2026-05-01T12:00:00.000Z',
  stoppedAt: '2026-05-01T12:00:00.120Z',
  created_at: '2026-05-01T12:00:00.130Z',
  responseTime: 120,
  hasFailures: false,
  hasErrors: false,
  isDegraded: false,
  overMaxResponseTime: false,
  attempts: 1,
  resultType: 'FINAL',
  runSource: 'SCHEDULER',
  checkSessionId: null,
  sequenceId: null,
  errorMessage: null,
  phases: { dns: 2, connection: 10, data: 100, total: 120 },
  statusCode: null,
  sslDaysRemaining: null,
  details: { logs: ['connected'] },
};

describe('check result', () => {
  it('round-trips a record; the response drops accountId', () => {
    expect(parse(CheckResultSchema, result)).toEqual(result);
    const { accountId: _omit, ...response } = result;
    expect(parse(CheckResultResponseSchema, result)).toEqual(response);
  });

  it.each([
    ['attempts', 0], ['attempts', 1.5], ['resultType', 'PARTIAL'], ['runSource', 'CRON'], ['responseTime', -1],
    ['id', 'not-a-uuid'], ['phases', { dns: 'fast' }],
  ])('rejects %s = %j', (field, value) => {
    expect(pathsOf(CheckResultSchema, { ...result, [field]: value })[0]).toMatch(new RegExp(`^${field}`));
  });

  it('accepts every run source', () => {
    for (const runSource of RUN_SOURCES) expect(accepts(CheckResultSchema, { ...result, runSource })).toBe(true);
    expect(accepts(CheckResultSchema, { ...result, resultType: 'ATTEMPT', attempts: 2 })).toBe(true);
  });
});

describe('CheckResultsQuerySchema', () => {
  it('defaults limit and page', () => {
    expect(parse(CheckResultsQuerySchema, {})).toEqual({ limit: 10, page: 1 });
  });

  it.each([['0', false], ['1', true], ['100', true], ['101', false]])('limit %s accepted: %s', (limit, ok) => {
    expect(accepts(CheckResultsQuerySchema, { limit })).toBe(ok);
  });

  it('normalises from and to and filters by result type', () => {
    expect(parse(CheckResultsQuerySchema, { from: '2026-05-01', to: '2026-05-02T02:00:00+02:00', resultType: 'ATTEMPT' })).toEqual({
      limit: 10, page: 1, from: '2026-05-01T00:00:00.000Z', to: '2026-05-02T00:00:00.000Z', resultType: 'ATTEMPT',
    });
  });

  it('rejects a bad date, a wrong type and a window that ends before it starts', () => {
    expect(pathsOf(CheckResultsQuerySchema, { from: 'yesterday', resultType: 'ALL' })).toEqual(['from', 'resultType']);
    expect(issuesOf(CheckResultsQuerySchema, { from: '2026-05-02', to: '2026-05-01' })).toEqual([
      { path: 'to', message: 'must not be before from' },
    ]);
  });
});

describe('check status', () => {
  const status = {
    name: 'db', checkId: 'check-1', hasFailures: true, hasErrors: false, isDegraded: false, longestRun: 300, shortestRun: 12,
    lastRunLocation: 'eu-west-1', lastCheckRunId: UUID_A, sslDaysRemaining: null, created_at: '2026-05-01', updated_at: null,
  };

  it('the record carries accountId; the response does not', () => {
    expect(parse(CheckStatusSchema, { ...status, accountId: 'acc' })).toEqual({ ...status, accountId: 'acc' });
    expect(parse(CheckStatusResponseSchema, { ...status, accountId: 'acc' })).toEqual(status);
    expect(pathsOf(CheckStatusSchema, status)).toEqual(['accountId']);
  });
});

describe('check session bodies', () => {
  it('accepts an empty trigger body and a full one', () => {
    expect(parse(CheckSessionTriggerSchema, {})).toEqual({});
    expect(parse(CheckSessionTriggerSchema, {
      target: { checkId: [UUID_A], matchTags: [['prod', '!flaky'], ['smoke']] }, projectId: 'web', environment: 'staging',
    })).toEqual({ target: { checkId: [UUID_A], matchTags: [['prod', '!flaky'], ['smoke']] }, projectId: 'web', environment: 'staging' });
  });

  it('names what is wrong in the target', () => {
    expect(pathsOf(CheckSessionTriggerSchema, { target: { checkId: [] } })).toEqual(['target.checkId']);
    expect(pathsOf(CheckSessionTriggerSchema, { target: { checkId: [UUID_A, 'abc'] } })).toEqual(['target.checkId.1']);
    expect(pathsOf(CheckSessionTriggerSchema, { target: { matchTags: [['a'], []] } })).toEqual(['target.matchTags.1']);
    expect(pathsOf(CheckSessionTriggerSchema, { target: { matchTags: [['']] } })).toEqual(['target.matchTags.0.0']);
    expect(pathsOf(CheckSessionTriggerSchema, { target: 'all', projectId: '' })).toEqual(['target', 'projectId']);
  });

  it('a cancel body omits sequenceId or lists at least one UUID', () => {
    expect(parse(CheckSessionCancelSchema, {})).toEqual({});
    expect(parse(CheckSessionCancelSchema, { sequenceId: [UUID_B] })).toEqual({ sequenceId: [UUID_B] });
    expect(issuesOf(CheckSessionCancelSchema, { sequenceId: [] })).toEqual([
      { path: 'sequenceId', message: 'must hold at least one sequence id' },
    ]);
    expect(pathsOf(CheckSessionCancelSchema, { sequenceId: ['x'] })).toEqual(['sequenceId.0']);
  });

  it.each([['0', false], ['1', true], ['30', true], ['31', false], [undefined, true]])('maxWaitSeconds %s accepted: %s', (maxWaitSeconds, ok) => {
    expect(accepts(CompletionQuerySchema, { maxWaitSeconds })).toBe(ok);
  });

  it('waits 30 seconds by default', () => {
    expect(parse(CompletionQuerySchema, {})).toEqual({ maxWaitSeconds: 30 });
  });
});

describe('check session records', () => {
  const session = {
    checkSessionId: UUID_A,
    accountId: 'acc',
    checkId: 'check-1',
    checkType: 'TCP',
    name: 'db',
    status: 'PROGRESS',
    startedAt: '2026-05-01T12:00:00.000Z',
    stoppedAt: null,
    timeElapsed: null,
    runLocations: ['eu-west-1'],
    runSource: 'TRIGGER_API',
    projectId: null,
    environment: null,
    sequences: [{ sequenceId: UUID_B, runLocation: 'eu-west-1', status: 'STARTED' }],
  };

  it('round-trips a record and rejects an unknown status', () => {
    expect(parse(CheckSessionSchema, session)).toEqual(session);
    expect(pathsOf(CheckSessionSchema, { ...session, status: 'DONE' })).toEqual(['status']);
    expect(pathsOf(CheckSessionSchema, { ...session, sequences: [{ sequenceId: 'x', runLocation: 'l', status: 'PASSED' }] })).toEqual([
      'sequences.0.sequenceId',
    ]);
  });

  it('the response drops accountId and carries results', () => {
    const { accountId: _a, ...resultResponse } = result;
    const response = parse(CheckSessionResponseSchema, { ...session, results: [resultResponse] });
    expect(response).not.toHaveProperty('accountId');
    expect(response.results).toEqual([resultResponse]);
    expect(pathsOf(CheckSessionResponseSchema, session)).toEqual(['results']);
  });

  it('knows which statuses are final', () => {
    expect(CHECK_SESSION_STATUSES).toHaveLength(7);
    expect(FINAL_SESSION_STATUSES).toEqual(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);
    expect(isFinalSessionStatus('CANCELLED')).toBe(true);
    expect(isFinalSessionStatus('STARTED')).toBe(false);
    expect(isFinalSessionStatus('PROGRESS')).toBe(false);
  });
});
