import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VigilStorage } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { knexStorage } from '@vigil/storage-knex';
import { planArbitrary, type Plan } from './support/engine-model-plan.js';
import { checkModel, emptyStats, type ModelStats } from './support/engine-model-oracle.js';
import { runModel } from './support/engine-model-world.js';
import { freshDatabase, PG_URL, type FreshDatabase } from './support/postgres.js';

/*
 * The model-based test of the engine: fast-check makes random sets of checks (frequencies 0 with
 * its offsets, 1 and 2 minutes; one to three locations; runParallel on and off; no retries,
 * doubleCheck or a retry strategy with or without sameRegion; groups with a concurrency and
 * groupOrder), random session triggers and cancels, runner outcomes that pass, fail, throw and
 * hang, and crashes: a process dies at a random store call (that call reaching the store or not)
 * without stop(), and a new one starts on the same store. One or two processes at once, all on one
 * fake clock. The oracle (support/engine-model-oracle.ts) says what must hold after each case.
 *
 * Cases: MEMORY_RUNS on the memory store (fast, the bulk), and PG_RUNS on PostgreSQL, slower per
 * case (each makes its tables afresh under a prefix of its own), in CI only where VIGIL_PG_URL is
 * set. Replay a failure with the seed and path it prints:
 *   VIGIL_MODEL_SEED=<seed> VIGIL_MODEL_PATH=<path> npx vitest run test/reliability/engine-model.test.ts
 * (VIGIL_MODEL_RUNS overrides the number of cases; VIGIL_MODEL_LOG=1 prints the failing case's log.)
 */
const MEMORY_RUNS = Number(process.env.VIGIL_MODEL_RUNS ?? 200);
const PG_RUNS = Number(process.env.VIGIL_MODEL_PG_RUNS ?? 20);
/**
 * fast-check stops (and reports the seed, and the counterexample shrunk so far) before vitest's
 * own timeout would hide them; a run that had not finished its cases by then fails as well.
 */
const TIME_LIMIT = { interruptAfterTimeLimit: 200_000, markInterruptAsFailure: true };

function replay(): Partial<fc.Parameters<[Plan]>> {
  const seed = process.env.VIGIL_MODEL_SEED;
  if (!seed) return {};
  return { seed: Number(seed), ...(process.env.VIGIL_MODEL_PATH ? { path: process.env.VIGIL_MODEL_PATH } : {}), endOnFailure: true };
}

/** One case: the plan played on a fresh store, then every promise checked. */
async function holds(plan: Plan, stats: ModelStats, store: () => Promise<{ storage: VigilStorage; close(): Promise<void> }>): Promise<void> {
  const { storage, close } = await store();
  try {
    const world = await runModel(plan, storage);
    const broken = await checkModel(world, stats);
    if (broken.length > 0) {
      if (process.env.VIGIL_MODEL_LOG) console.log(world.log.join('\n'));
      throw new Error(`the engine broke ${broken.length} promise(s):\n- ${broken.join('\n- ')}`);
    }
  } finally {
    await close();
  }
}

/** Shows what the cases exercised, and fails a run whose cases were too tame to prove anything. */
function covered(store: string, stats: ModelStats, runs: number): void {
  console.log(`engine model (${store}): ${JSON.stringify(stats)}`);
  if (process.env.VIGIL_MODEL_SEED || runs < 100) return;
  expect(stats.withCrash).toBeGreaterThan(stats.cases / 5);
  expect(stats.takenOver).toBeGreaterThan(0);
  expect(stats.retriesElsewhere).toBeGreaterThan(0);
  expect(stats.cancelled).toBeGreaterThan(0);
  expect(stats.hung).toBeGreaterThan(0);
  expect(stats.reminders).toBeGreaterThan(0);
  expect(stats.waitedForGroup).toBeGreaterThan(0);
  expect(stats.rounds).toBeGreaterThan(0);
}

describe('engine model: the memory store', () => {
  it(`keeps every promise in ${MEMORY_RUNS} random cases of checks, sessions, runner outcomes and crashes`, async () => {
    const stats = emptyStats();
    await fc.assert(
      fc.asyncProperty(planArbitrary, (plan) => holds(plan, stats, async () => ({ storage: memoryStorage(), close: async () => {} }))),
      { numRuns: MEMORY_RUNS, ...TIME_LIMIT, ...replay() },
    );
    covered('memory', stats, MEMORY_RUNS);
  }, 260_000);
});

describe.runIf(PG_URL)('engine model: PostgreSQL', () => {
  let db: FreshDatabase;
  let n = 0;
  beforeAll(async () => {
    db = await freshDatabase('model');
  });
  afterAll(() => db?.drop());

  it(`keeps every promise in ${PG_RUNS} random cases`, async () => {
    const stats = emptyStats();
    await fc.assert(
      fc.asyncProperty(planArbitrary, (plan) => holds(plan, stats, async () => {
        // Tables of its own for each case, under one database.
        const storage = knexStorage({ client: 'pg', connection: db.url, tablePrefix: `m${++n}_`, pool: { min: 0, max: 4 } });
        return { storage, close: () => storage.close() };
      })),
      { numRuns: PG_RUNS, endOnFailure: true, ...TIME_LIMIT, ...replay() },
    );
    covered('PostgreSQL', stats, PG_RUNS);
  }, 260_000);
});
