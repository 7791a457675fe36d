// An alert step that queues no alert writes the check's alert state with one compare-and-set
// statement and no transaction; one that queues alerts writes the state and the alerts in one.
import type { NewOutboxMessage } from '@vigil/core';
import { alertStateFixture } from '@vigil/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';

const ACCOUNT = 'acct-alert-transition';
const AT = '2026-05-01T12:00:00.000Z';
const opened: KnexStorage[] = [];
afterAll(async () => Promise.all(opened.map((s) => s.close())));

const message = (id: string): NewOutboxMessage => ({
  id, accountId: ACCOUNT, checkId: 'check-1', alertChannelId: 1, alertType: 'ALERT_FAILURE',
  payload: { checkId: 'check-1', checkName: 'check 1' }, created_at: AT, nextAttemptAt: AT,
}) as NewOutboxMessage;

describe.each(STORES)('alert state transitions on %s', (kind) => {
  it('writes a state alone in one statement, still only over the state expected, and a state with alerts in a transaction', async () => {
    const storage = await freshStore(kind, 'vigil_alert_transition');
    opened.push(storage);
    await storage.migrate();
    const states = storage.alertStates;
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase().replace(/;$/, ''));
    const sent = async (write: () => Promise<boolean>) => {
      statements.length = 0;
      storage.knex.on('query', onQuery);
      try {
        return { wrote: await write(), statements: [...statements] };
      } finally {
        storage.knex.off('query', onQuery);
      }
    };
    const v1 = alertStateFixture({ lastRunId: 'run-1' });
    const v2 = alertStateFixture({ lastRunId: 'run-2' });
    const failing = alertStateFixture({ status: 'FAILING', consecutiveFailures: 1, failingSince: AT, alerted: 'FAILURE', lastAlertAt: AT, lastRunId: 'run-3' });
    expect(await sent(() => states.transition(ACCOUNT, 'check-1', null, v1, []))).toEqual({ wrote: true, statements: ['insert'] });
    expect(await sent(() => states.transition(ACCOUNT, 'check-1', v1, v2, []))).toEqual({ wrote: true, statements: ['update'] });
    // Over a state that is no longer there (another run stepped it first): nothing is written.
    expect(await sent(() => states.transition(ACCOUNT, 'check-1', v1, failing, []))).toEqual({ wrote: false, statements: ['update'] });
    expect(await sent(() => states.transition(ACCOUNT, 'check-1', null, failing, []))).toEqual({ wrote: false, statements: ['insert'] });
    expect(await states.get(ACCOUNT, 'check-1')).toEqual(v2);
    // Two steps over the same state at once: one of them writes.
    const racing = await Promise.all([alertStateFixture({ lastRunId: 'run-a' }), alertStateFixture({ lastRunId: 'run-b' })]
      .map((next) => states.transition(ACCOUNT, 'check-1', v2, next, [])));
    expect(racing.filter(Boolean)).toHaveLength(1);
    const current = (await states.get(ACCOUNT, 'check-1'))!;
    expect(['run-a', 'run-b']).toContain(current.lastRunId);
    // With an alert: the state and the alert in one transaction.
    const withAlert = await sent(() => states.transition(ACCOUNT, 'check-1', current, failing, [message('m1')]));
    expect(withAlert.wrote).toBe(true);
    expect(withAlert.statements[0]).toBe('begin');
    expect(withAlert.statements.at(-1)).toBe('commit');
    expect(await states.get(ACCOUNT, 'check-1')).toEqual(failing);
    expect(await storage.outbox.depth!()).toBe(1);
  });
});
