import { expect } from 'vitest';
import { percentileCont } from '@vigil/core';
import { checkResultFixture, checkStatusFixture } from '@vigil/core/testing';
import { vigilPages, type VigilPagesOptions } from '../../src/index.js';
import { apiHarness, type ApiHarness } from './harness.js';

export type SeedState = 'PASSING' | 'FAILING' | 'DEGRADED' | 'PAUSED' | 'PENDING';

export interface SeededCheck {
  id: string;
  name: string;
  state: SeedState;
  /** Response times of its results in the last day. */
  times: number[];
}

/** The API harness (SQLite in memory, fake clock at 2026-05-01T12:00Z) with the pages at the host's root. */
export async function pagesHarness(options: VigilPagesOptions = {}, backend: 'sqlite' | 'postgres' = 'sqlite'): Promise<ApiHarness> {
  const h = await apiHarness(backend);
  h.app.use(vigilPages(h.vigil, options));
  return h;
}

/** A percentile as the dashboards show it: interpolated between ranks, rounded to the millisecond. */
export function percentile(values: number[], p: number): number {
  return Math.round(percentileCont([...values].sort((a, b) => a - b), p / 100)!);
}

/**
 * Checks created through the API with results and a status stored as the engine stores them.
 * `states` gives each check's state; check i is named `check-NN` and tagged `web` (and `api` when odd).
 */
export async function seedChecks(h: ApiHarness, states: SeedState[], name = (i: number) => `check-${String(i).padStart(2, '0')}`): Promise<SeededCheck[]> {
  const group = await h.a.post('/api/v2/check-groups', { name: 'Payments group', tags: ['grouped'] });
  expect(group.status, JSON.stringify(group.body)).toBe(201);
  const out: SeededCheck[] = [];
  for (const [i, state] of states.entries()) {
    const res = await h.a.post('/api/v1/checks/tcp', {
      name: name(i),
      request: { hostname: '127.0.0.1', port: 9 },
      tags: i % 2 ? ['web', 'api'] : ['web'],
      activated: state !== 'PAUSED',
      ...(i === 0 ? { groupId: group.body.id } : {}),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id as string;
    const times = state === 'PENDING' ? [] : Array.from({ length: 10 }, (_, k) => 100 + i * 10 + k * 7);
    const now = h.clock.now().getTime();
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, times.map((t, k) => checkResultFixture(id, {
      startedAt: new Date(now - (k + 1) * 600_000).toISOString(),
      responseTime: t,
      hasFailures: state === 'FAILING' && k === 0,
      isDegraded: state === 'DEGRADED' && k === 0,
      errorMessage: state === 'FAILING' && k === 0 ? 'connect ECONNREFUSED 127.0.0.1:9' : null,
    })));
    if (state !== 'PENDING') {
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(id, {
        name: name(i), hasFailures: state === 'FAILING', isDegraded: state === 'DEGRADED',
      }));
    }
    out.push({ id, name: name(i), state, times });
  }
  return out;
}

/** The 20 mixed checks the dashboard tests open. */
export const MIXED: SeedState[] = [
  'FAILING', 'PASSING', 'PASSING', 'DEGRADED', 'PASSING', 'FAILING', 'PASSING', 'PAUSED', 'PASSING', 'PENDING',
  'PASSING', 'DEGRADED', 'PASSING', 'PASSING', 'FAILING', 'PASSING', 'PASSING', 'PASSING', 'PAUSED', 'PASSING',
];
