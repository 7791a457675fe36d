import type { Knex } from 'knex';
import { dbCall } from './errors.js';
import type { PreparedReads, PreparedWrites } from './prepared.js';

type Row = Record<string, unknown>;
type Extra<T> = Record<string, (row: T) => string | number | boolean | null>;

export interface DocTableSpec<T> {
  /** Logical name (without the prefix). */
  name: string;
  /** Numeric ids come from the database; string ids come with the row. */
  numericId: boolean;
  /** Columns kept beside the JSON document, for lookups and indexes. */
  columns?: Extra<T>;
  /** Rows not scoped to an account (accounts). */
  global?: boolean;
}

export interface TableContext {
  knex: Knex;
  /**
   * Where reads outside a transaction go: SQLite's read connections beside its one writer, or
   * `knex` itself (PostgreSQL, an in-memory SQLite database, or a knex the host passed).
   */
  reader: Knex;
  /** The reader's statements prepared per connection, for fixed reads; null: they go through knex. */
  reads?: PreparedReads | null;
  /**
   * The writer's statements prepared per connection, for the fixed writes of every run (one
   * statement each, outside a transaction): Vigil's own PostgreSQL connections; null: through knex
   * (SQLite's own connections keep their statements anyway).
   */
  writes?: PreparedWrites | null;
  /**
   * Vigil's own PostgreSQL connections: long lists may be read as a binary COPY, past knex's query
   * runner (a host's knex runs every query through knex).
   */
  copies?: boolean;
  prefix: string;
  database: string;
}

/**
 * What `q` (an update or a delete, one statement) wrote: the count of rows. Outside a transaction
 * it runs as a statement prepared once per connection where the store has them; inside one, and
 * without them, through knex.
 */
export async function fixedWrite(ctx: TableContext, q: Knex.QueryBuilder): Promise<number> {
  // A transaction's statement stays on its connection.
  if (!ctx.writes || (q as { client?: { transacting?: boolean } }).client?.transacting) return Number(await q);
  const { sql, bindings } = q.toSQL();
  return ctx.writes.count(sql, bindings);
}

// PostgreSQL refuses a NUL character in text and an integer past int4 outright (an error, not
// "no rows"); no stored key holds either, so a lookup by such a value finds nothing without asking.

/** Whether a lookup text can match a stored row at all: it holds no NUL character. */
function storable(value: unknown): boolean {
  return typeof value !== 'string' || !value.includes('\0');
}

/** Whether a lookup id can match a stored numeric id at all: numeric ids are int4 (`increments`). */
const idInRange = (id: unknown) => typeof id !== 'number' || (Number.isSafeInteger(id) && Math.abs(id) <= 2_147_483_647);

/**
 * A table of JSON documents with the columns queries filter by. Every account-scoped read and
 * write carries `account_id` in its WHERE clause, but the read by id (`get`), which checks the
 * account of the one row its id finds.
 */
export class DocTable<T extends { id: string | number }> {
  readonly table: string;

  constructor(
    private readonly ctx: TableContext,
    readonly spec: DocTableSpec<T>,
  ) {
    this.table = `${ctx.prefix}${spec.name}`;
  }

  get knex(): Knex {
    return this.ctx.knex;
  }

  get reader(): Knex {
    return this.ctx.reader;
  }

  run<R>(fn: () => Promise<R>): Promise<R> {
    return dbCall(this.ctx.database)(fn);
  }

  private toRow(accountId: string | null, record: T): Row {
    const { id, accountId: _a, ...doc } = record as T & { accountId?: string };
    const row: Row = { data: JSON.stringify(doc) };
    if (!this.spec.global) row.account_id = accountId;
    if (!this.spec.numericId) row.id = id;
    for (const [col, get] of Object.entries(this.spec.columns ?? {})) row[col] = get(record);
    return row;
  }

  fromRow(row: Row): T {
    const doc = JSON.parse(String(row.data)) as Row;
    // Set on the parsed object (not a spread copy of it): the same keys in the same order, one object less.
    doc.id = this.spec.numericId ? Number(row.id) : String(row.id);
    if (!this.spec.global) doc.accountId = String(row.account_id);
    return doc as unknown as T;
  }

  /** The account's rows, on the writer (for updates and deletes). */
  query(accountId: string | null): Knex.QueryBuilder {
    return this.scoped(this.knex, accountId);
  }

  /** The account's rows, to read (on a read connection where there are some). */
  readQuery(accountId: string | null): Knex.QueryBuilder {
    return this.scoped(this.reader, accountId);
  }

  private scoped(db: Knex | Knex.Transaction, accountId: string | null): Knex.QueryBuilder {
    const q = db(this.table);
    return this.spec.global || accountId === null ? q : q.where('account_id', accountId);
  }

  private order(q: Knex.QueryBuilder): Knex.QueryBuilder {
    return q.orderBy(this.spec.numericId ? 'id' : 'seq', 'asc');
  }

  async insert(accountId: string | null, record: object, trx?: Knex.Transaction): Promise<T> {
    return this.run(async () => {
      const row = this.toRow(accountId, record as T);
      const [inserted] = await (trx ?? this.knex)(this.table).insert(row).returning(this.spec.numericId ? ['id'] : ['seq']);
      const id = this.spec.numericId ? Number((inserted as Row).id ?? inserted) : (record as T).id;
      const full = { ...(record as object), id, ...(this.spec.global ? {} : { accountId }) } as unknown as T;
      if (this.spec.numericId && Object.keys(this.spec.columns ?? {}).length > 0) {
        await (trx ?? this.knex)(this.table).where('id', id).update(this.toRow(accountId, full));
      }
      return full;
    });
  }

  async get(accountId: string | null, id: string | number): Promise<T | null> {
    if (!storable(id) || (accountId !== null && !storable(accountId)) || (this.spec.numericId && !idInRange(id))) return null;
    // The hottest read of the API, as one fixed statement, prepared once per connection where the
    // store owns its connections. It looks the id up alone (an id is unique across accounts) and
    // answers the row only if it is the account's. With the account in the statement too,
    // PostgreSQL could keep a plan made while the table was empty that walks the account's index
    // and filters every row of the account by id: one read then costs as much as the account is big.
    const scoped = !this.spec.global && accountId !== null;
    return this.run(async () => {
      const row = (await this.fixedRows(this.getSql, [id]))[0];
      return row && (!scoped || row.account_id === accountId) ? this.fromRow(row) : null;
    });
  }

  /**
   * The few rows of an account that meet `condition` (SQL over the table's columns, with `?` for
   * each of `bindings`), in creation order: one fixed statement, prepared once per connection like
   * the read by id. The rows are put in order here, so that the database finds them along the
   * index that `condition` names rather than along the one that gives the order (SQLite, with no
   * statistics, takes the one that saves a sort).
   */
  async whereFixed(accountId: string, condition: string, bindings: readonly unknown[]): Promise<T[]> {
    if (!storable(accountId)) return [];
    const order = this.spec.numericId ? 'id' : 'seq';
    const sql = `select ${this.columnsRead}${order === 'seq' ? ', seq' : ''} from ${this.quoted} where account_id = ? and (${condition})`;
    return this.run(async () => {
      const rows = await this.fixedRows(sql, [accountId, ...bindings]);
      rows.sort((a, b) => Number(a[order]) - Number(b[order]));
      return rows.map((r) => this.fromRow(r));
    });
  }

  /** The rows of a fixed statement: prepared on the store's own connections, else through knex. */
  private async fixedRows(sql: string, bindings: readonly unknown[]): Promise<Row[]> {
    const reads = this.ctx.reads;
    if (reads) return reads.rows(sql, bindings);
    const result = await this.reader.raw(sql, [...bindings] as never[]);
    return (Array.isArray(result) ? result : (result as { rows: Row[] }).rows) as Row[];
  }

  // The columns fromRow reads, named: a column a later migration adds does not change what a
  // statement prepared before it answers (PostgreSQL refuses a prepared plan whose result changed).
  private get getSql(): string {
    return `select ${this.columnsRead} from ${this.quoted} where id = ? limit 1`;
  }

  private get listScopedSql(): string {
    return `select ${this.columnsRead} from ${this.quoted} where account_id = ? order by ${this.spec.numericId ? 'id' : 'seq'} asc`;
  }

  private get columnsRead(): string {
    return this.spec.global ? 'id, data' : 'id, account_id, data';
  }

  private get quoted(): string {
    return `"${this.table.replaceAll('"', '""')}"`;
  }

  /** A page of the account's rows (those whose columns hold `filter`'s values), in creation order, with their count. */
  async page(accountId: string, options?: { limit: number; offset: number }, filter: Record<string, string | number> = {}): Promise<{ items: T[]; total: number; offset: number }> {
    return this.run(async () => {
      const limit = options?.limit ?? Number.MAX_SAFE_INTEGER;
      const offset = options?.offset ?? 0;
      if (!storable(accountId) || !Object.values(filter).every(storable)) return { items: [], total: 0, offset };
      const [{ count }] = (await this.readQuery(accountId).where(filter).count({ count: '*' })) as [{ count: number | string }];
      const rows = await this.order(this.readQuery(accountId).where(filter)).limit(Math.min(limit, 2 ** 31 - 1)).offset(offset);
      return { items: rows.map((r: Row) => this.fromRow(r)), total: Number(count), offset };
    });
  }

  /** Rows of an account matching column values, in creation order. */
  async where(accountId: string | null, filter: Row = {}, trx?: Knex.Transaction): Promise<T[]> {
    const values = Object.values(filter).flat();
    if ((accountId !== null && !storable(accountId)) || !values.every(storable)) return [];
    if (this.spec.numericId && filter.id !== undefined && ![filter.id].flat().every(idInRange)) return [];
    const reads = this.ctx.reads;
    if (reads && !trx && accountId !== null && !this.spec.global && Object.keys(filter).length === 0) {
      // The whole of an account's rows (maintenance windows, read for every run): a fixed
      // statement, prepared once per connection like the by-id read.
      return this.run(async () => (await reads.rows(this.listScopedSql, [accountId])).map((r) => this.fromRow(r)));
    }
    return this.run(async () => {
      const base = trx ? this.scoped(trx, accountId) : this.readQuery(accountId);
      const q = this.order(base);
      for (const [col, value] of Object.entries(filter)) {
        if (value === null) q.whereNull(col);
        else if (Array.isArray(value)) q.whereIn(col, value);
        else q.where(col, value as string | number);
      }
      return (await q).map((r: Row) => this.fromRow(r));
    });
  }

  async put(accountId: string | null, id: string | number, record: object, trx?: Knex.Transaction): Promise<T | null> {
    return this.run(async () => {
      const full = { ...(record as object), id, ...(this.spec.global ? {} : { accountId }) } as unknown as T;
      const row = this.toRow(accountId, full);
      delete row.id;
      const base = (trx ?? this.knex)(this.table).where('id', id);
      if (!this.spec.global && accountId !== null) base.where('account_id', accountId);
      const n = await base.update(row);
      return n > 0 ? full : null;
    });
  }

  /**
   * Stores a row of a string id in one statement, adding it or replacing the one there is, so that
   * writers racing to add the first row never conflict. Null when the id is another account's.
   */
  async upsert(accountId: string | null, record: object & { id: string }, trx?: Knex.Transaction): Promise<T | null> {
    return this.run(async () => {
      const full = { ...record, ...(this.spec.global ? {} : { accountId }) } as unknown as T;
      const row = this.toRow(accountId, full);
      const q = (trx ?? this.knex)(this.table).insert(row).onConflict('id').merge(Object.keys(row).filter((c) => c !== 'id'));
      if (!this.spec.global && accountId !== null) q.where(`${this.table}.account_id`, accountId);
      const written = (await q.returning(['seq'])) as unknown[];
      return written.length > 0 ? full : null;
    });
  }

  /**
   * Compare-and-set on a row of a string id: writes `next` only while the stored document is still
   * `expected` (null: there is no row yet), compared as the text this table writes; answers whether
   * it wrote. One statement, so writers on one row take turns and exactly one of them sees a match.
   */
  async replace(accountId: string | null, expected: object | null, next: object & { id: string }, trx?: Knex.Transaction): Promise<boolean> {
    return this.run(async () => {
      const row = this.toRow(accountId, next as unknown as T);
      const db = trx ?? this.knex;
      if (expected === null) {
        const added = (await db(this.table).insert(row).onConflict('id').ignore().returning(['seq'])) as unknown[];
        return added.length > 0;
      }
      const was = this.toRow(accountId, { ...expected, id: next.id } as unknown as T).data as string;
      delete row.id;
      const q = db(this.table).where('id', next.id).where('data', was);
      if (!this.spec.global && accountId !== null) q.where('account_id', accountId);
      // A run's status and alert state: prepared where it is the store's own statement.
      return (await fixedWrite(this.ctx, q.update(row))) > 0;
    });
  }

  async remove(accountId: string | null, filter: Row, trx?: Knex.Transaction): Promise<number> {
    return this.run(async () => {
      const q = (trx ?? this.knex)(this.table);
      if (!this.spec.global && accountId !== null) q.where('account_id', accountId);
      for (const [col, value] of Object.entries(filter)) {
        if (value === null) q.whereNull(col);
        else q.where(col, value as string | number);
      }
      return q.delete();
    });
  }
}
