import type { Knex } from 'knex';
import { onConnection } from './prepared.js';

/**
 * A PostgreSQL read as `COPY (select) TO STDOUT (FORMAT binary)`: the rows come back as bytes, a
 * text value as its UTF-8 bytes, and nothing is decoded into strings unless the caller asks. The
 * driver's row reads decode every value as text; for a list of thousands of stored documents that
 * are sent on as they are, this skips the decoding and the encoding back (the status list: about
 * a quarter less time). The read takes its connection from knex's pool and is cancelled with its
 * request as other reads are. COPY takes no bind parameters: values go into `select` as literals
 * (`pgLiteral`). Null where the connection cannot take a COPY (a client in pipeline mode).
 */
export function copyBinary(knex: Knex, select: string): Promise<Buffer | null> {
  return onConnection(knex, true, (connection) => {
    // A client in pipeline mode takes no query of this kind: null, and the caller reads rows.
    if ((connection as { pipeline?: unknown }).pipeline) return Promise.resolve(null);
    const read = new CopyOut(`COPY (${select}) TO STDOUT (FORMAT binary)`);
    (connection as { query(submittable: CopyOut): void }).query(read);
    return read.bytes;
  });
}

/** A string as a PostgreSQL literal, as the driver's `escapeLiteral` writes it. */
export function pgLiteral(value: string): string {
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

/**
 * The driver's "submittable" for COPY TO STDOUT: it sends the statement and gathers the CopyData
 * messages into one buffer (each message is a view into the driver's read buffer, so it is copied
 * at once). A server error rejects at once; the driver waits for the server's ReadyForQuery before
 * it sends the connection's next query. A message no COPY TO answers with (rows, a request for
 * data) rejects too, rather than leaving the driver to call a handler that is not there.
 */
class CopyOut {
  private buffer = Buffer.allocUnsafe(1 << 16);
  private size = 0;
  private error: unknown;
  private resolve!: (bytes: Buffer) => void;
  private reject!: (err: unknown) => void;
  readonly bytes = new Promise<Buffer>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(private readonly text: string) {}

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    const { chunk } = message;
    if (this.size + chunk.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.size + chunk.length));
      this.buffer.copy(grown, 0, 0, this.size);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.size);
    this.size += chunk.length;
  }

  /** Set by the driver where it watches the query (its `query_timeout`): told when the read ends. */
  callback?: (err: unknown) => void;

  handleError(err: unknown): void {
    if (this.error !== undefined) return;
    this.error = err;
    this.reject(err);
    this.callback?.(err);
  }

  handleReadyForQuery(): void {
    if (this.error !== undefined) return;
    this.resolve(this.buffer.subarray(0, this.size));
    this.callback?.(null);
  }

  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handleRowDescription(): void {
    this.unexpected('rows');
  }
  handleDataRow(): void {
    this.unexpected('rows');
  }
  handlePortalSuspended(): void {
    this.unexpected('a suspended portal');
  }
  handleCopyInResponse(): void {
    this.unexpected('a request for COPY data');
  }

  private unexpected(what: string): void {
    this.handleError(new Error(`A COPY TO STDOUT was answered with ${what}`));
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * The tuples of a binary COPY, read in place: `next()` moves to the next tuple, then `field()` to
 * each of its fields in turn, which sets `start` and `length` (-1 for NULL).
 */
export class CopyTuples {
  start = 0;
  length = 0;
  private at: number;

  constructor(readonly bytes: Buffer) {
    if (bytes.length < 19 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('Not the output of a binary COPY');
    // The signature, a flags word and the length of the header's extension area, then that area.
    this.at = 19 + bytes.readUInt32BE(15);
  }

  /** Moves to the next tuple: false at the end of the data. */
  next(): boolean {
    if (this.at + 2 > this.bytes.length) return false;
    const fields = this.bytes.readInt16BE(this.at);
    this.at += 2;
    return fields !== -1;
  }

  /** Moves to the next field of the tuple. */
  field(): this {
    this.length = this.bytes.readInt32BE(this.at);
    this.start = this.at + 4;
    this.at = this.start + Math.max(this.length, 0);
    return this;
  }

  /** The field as text (null for NULL). */
  text(): string | null {
    return this.length < 0 ? null : this.bytes.toString('utf8', this.start, this.start + this.length);
  }
}
