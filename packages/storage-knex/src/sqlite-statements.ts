/*
 * knex runs every SQLite query with the driver's `run` or `all` of its SQL text, which prepares a
 * statement, runs it and finalizes it: two trips to libuv's thread pool (the prepare, then the run),
 * each ended by a callback that waits its turn on the event loop. On SQLite's one writer connection
 * every write waits for the writes before it, trips and waits included, so a busy process pays
 * them many times over (an alert's transaction of five statements held the writer about 2 ms).
 *
 * `keepStatements` makes a connection of Vigil's own pools keep the statements of the queries run
 * on it, by SQL text: a query whose statement is kept binds and runs it again, one trip. Only what
 * `run` and `all` give the same way as before is kept:
 * - `all` of any statement, a read or a write (it steps to the end, or to an error after which the
 *   statement is reset, so it is not left running and holds no snapshot);
 * - `run` of an INSERT, UPDATE, DELETE or REPLACE without RETURNING (one step runs it to the end; a
 *   statement that returned a row would still be running, so it is not kept);
 * - statements of one to MAX_BINDINGS values and at most MAX_BOUND characters of them (a bulk
 *   insert, or a large document, is prepared for its one use: SQLite holds a statement's values
 *   until its next use; and with no values the driver would run a kept statement with those of its
 *   last use).
 * A statement that fails to prepare is not kept, and its query is left to the driver's own method,
 * which fails it with SQLite's own error, as before. A kept statement whose query failed is reset
 * before the query is answered (one that met another process's lock would otherwise stay running,
 * and no later write on the connection would commit). A connection keeps at most MAX_STATEMENTS,
 * the least recently used finalized first, and finalizes them all before it closes (SQLite refuses
 * to close a connection with statements left).
 */

type Callback = (this: unknown, err: Error | null, rows?: unknown) => void;

interface Statement {
  run(bindings: readonly unknown[], cb: (this: Outcome, err: Error | null) => void): void;
  all(bindings: readonly unknown[], cb: (this: Outcome, err: Error | null, rows: unknown[]) => void): void;
  reset(cb: () => void): void;
  finalize(cb: () => void): void;
}

/** What the driver's callback gets as `this` from a statement: knex reads `lastID` and `changes`. */
interface Outcome {
  lastID?: number;
  changes?: number;
}

/**
 * The driver's Statement: prepared in one trip, its callback told when it is ready or failed (the
 * driver's `prepare` with a callback binds no values once more after it, one more trip).
 */
export type StatementClass = new (connection: object, sql: string, cb: (err: Error | null) => void) => Statement;

interface Connection {
  run(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown;
  close(cb?: (err: Error | null) => void): unknown;
}

/** Statements a connection keeps at most. */
export const MAX_STATEMENTS = 100;
/** Values a kept statement binds at most. */
export const MAX_BINDINGS = 100;
/** Characters of text (and bytes of blobs) a kept statement binds at most, all its values together. */
export const MAX_BOUND = 16_384;

const WRITE = /^\s*(insert|update|delete|replace)\b/i;
const RETURNING = /\breturning\b/i;

/** The statements each connection keeps (for tests: how many). */
const kept = new WeakMap<object, Map<string, Promise<Statement>>>();

/** How many statements `connection` keeps. */
export function keptStatements(connection: object): number {
  return kept.get(connection)?.size ?? 0;
}

/** Makes a connection of the `sqlite3` driver keep its queries' statements (see above). */
export function keepStatements(raw: unknown, Statement: StatementClass): void {
  const connection = raw as Connection;
  const statements = new Map<string, Promise<Statement>>();
  kept.set(connection, statements);
  const run = connection.run.bind(connection);
  const all = connection.all.bind(connection);
  const close = connection.close.bind(connection);

  const statementFor = (sql: string): Promise<Statement> => {
    const ready = statements.get(sql);
    if (ready) {
      // The most recently used goes last, so the first is the one to finalize.
      statements.delete(sql);
      statements.set(sql, ready);
      return ready;
    }
    const made = new Promise<Statement>((resolve, reject) => {
      const statement = new Statement(connection, sql, (err) => (err ? reject(err) : resolve(statement)));
    });
    statements.set(sql, made);
    // Not kept when it does not prepare (the query goes to the driver's own method), and a later one
    // (after a migration made the table, say) prepares it again.
    made.catch(() => {
      if (statements.get(sql) === made) statements.delete(sql);
    });
    if (statements.size > MAX_STATEMENTS) {
      const [oldest, statement] = statements.entries().next().value!;
      statements.delete(oldest);
      // The driver finalizes it once the queries already given to it are done.
      void statement.then((s) => s.finalize(() => {}), () => {});
    }
    return made;
  };

  const keepable = (args: unknown[]): args is [string, unknown[], Callback] =>
    args.length === 3 && typeof args[0] === 'string' && typeof args[2] === 'function' && small(args[1]);

  /**
   * Runs the query on its kept statement. A statement that does not prepare leaves the query to the
   * driver's own method, which fails it with an error of its own, as before. After an error the
   * statement is reset before the query is answered: SQLite leaves a statement that met a lock
   * (SQLITE_BUSY) running, and a running statement would keep every later write on the connection
   * from committing. An exception on the way is the query's error, so knex always gets an answer,
   * and only one.
   */
  const onKept = (method: 'run' | 'all', args: [string, unknown[], Callback]) => {
    const [sql, bindings, cb] = args;
    let answered = false;
    const answer = (self: Outcome, err: Error | null, rows?: unknown[]) => {
      if (answered) return;
      answered = true;
      cb.call(self, err, rows);
    };
    statementFor(sql).then((statement) => {
      statement[method](bindings, function (err: Error | null, rows?: unknown[]) {
        const self = outcome(this);
        if (err) statement.reset(() => answer(self, err));
        else answer(self, null, rows);
      });
    }, () => {
      answered = true;
      (method === 'run' ? run : all)(...args);
    }).catch((err: unknown) => answer({}, err instanceof Error ? err : new Error(String(err))));
    return connection;
  };
  connection.all = (...args: unknown[]) => (keepable(args) ? onKept('all', args) : all(...args));
  connection.run = (...args: unknown[]) => (keepable(args) && WRITE.test(args[0]) && !RETURNING.test(args[0]) ? onKept('run', args) : run(...args));
  connection.close = (cb?: (err: Error | null) => void) => {
    const finalizing = [...statements.values()].map((made) => made.then((s) => new Promise<void>((resolve) => s.finalize(resolve)), () => {}));
    statements.clear();
    void Promise.all(finalizing).then(() => close(cb));
    return connection;
  };
}

/** Values few and small enough to keep a statement with (SQLite holds them until its next use). */
function small(bindings: unknown): bindings is unknown[] {
  // None at all: the driver would reset the statement but leave the values of its last use bound.
  if (!Array.isArray(bindings) || bindings.length === 0 || bindings.length > MAX_BINDINGS) return false;
  let size = 0;
  for (const value of bindings) {
    if (typeof value === 'string' || value instanceof Uint8Array) size += value.length;
    if (size > MAX_BOUND) return false;
  }
  return true;
}

/**
 * The statement's `lastID` and `changes` as they are now: the statement is the driver's `this`,
 * and its next run would change them before knex reads them.
 */
function outcome(statement: Outcome): Outcome {
  return { lastID: statement.lastID, changes: statement.changes };
}
