/*
 * The compact layout of scheduled runs: one narrow row per run of a TCP or API check, in a table
 * of its check type, keyed by (check_key, slot). The slot packs the run's due time, its location
 * and its attempt, so that together with the check it gives back the run's id (a version 7 slot
 * id, recomputed rather than stored). Timings are whole hundredths of a millisecond, the runners'
 * own rounding. Nothing is NULL: absent values have sentinels.
 */
import type { Knex } from 'knex';
import type { ColumnKind } from '../bulk-insert.js';
import type { TableContext } from '../table.js';

/** Slots count from 2020-01-01 (UTC): slot = (due - EPOCH) * 4096 + location * 16 + attempt. */
export const EPOCH_MS = Date.UTC(2020, 0, 1);
export const SLOTS_PER_MS = 4096;
export const MAX_LOCATION_KEY = 255;
export const MAX_ATTEMPT = 15;
/** How far a run may start before or after its due time, and last, and still be stated exactly (int2 ms). */
export const MAX_OFFSET_MS = 32_767;

export const FLAG = { failures: 1, errors: 2, degraded: 4, overMax: 8, attempt: 16, doc: 32 } as const;
/** sslDaysRemaining absent. */
export const NO_SSL = -32_768;
/** A phase the run did not have (an API run without TLS). */
export const NO_PHASE = -1;

export interface PhaseColumn {
  column: string;
  phase: string;
  /** The run may lack it (stored as NO_PHASE). */
  optional?: boolean;
}

export interface Layout {
  checkType: 'TCP' | 'API';
  /** Table name without the prefix. */
  name: string;
  /** In the runner's order; `total` is the response time and has no column. */
  phases: readonly PhaseColumn[];
  /** The phases' names. */
  phaseNames: ReadonlySet<string>;
  /** statusCode and sslDaysRemaining have columns (API). */
  http: boolean;
  /** A row's columns, each an integer, as the writer inserts them. */
  columns: Readonly<Record<string, ColumnKind>>;
}

const withNames = (l: Omit<Layout, 'phaseNames' | 'columns'>): Layout => ({
  ...l,
  phaseNames: new Set(l.phases.map((p) => p.phase)),
  columns: Object.fromEntries(
    ['slot', 'check_key', 'rt', ...l.phases.map((p) => p.column), 'start_off', 'stop_off', 'flags', ...(l.http ? ['status_code', 'ssl_days'] : [])]
      .map((column) => [column, 'int' as const]),
  ),
});

export const LAYOUTS: readonly Layout[] = [
  withNames({
    checkType: 'TCP',
    name: 'check_runs_tcp',
    phases: [{ column: 'dns', phase: 'dns' }, { column: 'connection', phase: 'connection' }, { column: 'data', phase: 'data' }],
    http: false,
  }),
  withNames({
    checkType: 'API',
    name: 'check_runs_api',
    phases: [
      { column: 'wait', phase: 'wait' }, { column: 'dns', phase: 'dns' }, { column: 'tcp', phase: 'tcp' },
      { column: 'tls', phase: 'tls', optional: true }, { column: 'first_byte', phase: 'firstByte' }, { column: 'download', phase: 'download' },
    ],
    http: true,
  }),
];

export const layoutOf = (checkType: string): Layout | undefined => LAYOUTS.find((l) => l.checkType === checkType);

export const tables = (ctx: Pick<TableContext, 'prefix'>) => ({
  keys: `${ctx.prefix}check_keys`,
  locations: `${ctx.prefix}run_locations`,
  details: `${ctx.prefix}check_result_details`,
  runs: (layout: Layout) => `${ctx.prefix}${layout.name}`,
});

export function packSlot(dueMs: number, locationKey: number, attempt: number): number {
  return (dueMs - EPOCH_MS) * SLOTS_PER_MS + locationKey * 16 + attempt;
}

/** The first slot at or after due time `ms` (location 0, attempt 0). */
export const slotAt = (ms: number) => (ms - EPOCH_MS) * SLOTS_PER_MS;

export function unpackSlot(slot: number): { dueMs: number; locationKey: number; attempt: number } {
  const inMs = slot % SLOTS_PER_MS;
  return { dueMs: (slot - inMs) / SLOTS_PER_MS + EPOCH_MS, locationKey: Math.floor(inMs / 16), attempt: inMs % 16 };
}

/** Whether a due time can be packed (a slot stays a safe integer). */
export const packable = (dueMs: number) => dueMs >= EPOCH_MS && Number.isSafeInteger(slotAt(dueMs) + SLOTS_PER_MS);

export const isPostgres = (knex: Knex) => ['pg', 'postgres', 'postgresql'].includes(String(knex.client.config.client));

/** SQL of a narrow row's due time and start time in ms (integer division of the slot). */
export const dueSql = (alias: string) => `(${alias}.slot / ${SLOTS_PER_MS} + ${EPOCH_MS})`;
export const startedSql = (alias: string) => `(${alias}.slot / ${SLOTS_PER_MS} + ${EPOCH_MS} + ${alias}.start_off)`;
export const locationKeySql = (alias: string) => `((${alias}.slot % ${SLOTS_PER_MS}) / 16)`;
export const attemptSql = (alias: string) => `(${alias}.slot % 16)`;
