import type { CheckStatusDocument } from '@vigil/core';
import { isPostgres } from './compact/layout.js';
import { CopyTuples, copyBinary, pgLiteral } from './pg-copy.js';
import { quoteIdent } from './prepared.js';
import type { DocTable, TableContext } from './table.js';

/**
 * Every check of an account in creation order with its stored status document, for the list of
 * every check's status (the API's hottest list). The row id of a status is `${accountId}:${checkId}`.
 *
 * - SQLite: one query over the checks joined to their statuses. A status stored under its check's
 *   current name is the document's text, ready to be written as it is; any other entry is `!` and a
 *   JSON array of the check's id, name, created_at and document. (A stored document starts with
 *   `{`, so the two cannot be confused; SQLite's JSON quoting of the name is compared with the text
 *   JSON.stringify wrote, and a name it quotes otherwise only takes the slower way.) When every
 *   entry is a document, the whole list comes back as one run of UTF-8 bytes, never decoded.
 * - PostgreSQL: the checks and the status documents read side by side on two connections, on
 *   Vigil's own connections each as a binary COPY (a join there costs more than both reads, as it
 *   sorts the documents along with the checks). A status stored under its check's current name is
 *   handed over as the bytes PostgreSQL sent, never decoded; any other entry as the check and its
 *   document. On a host's knex the two are read as rows through knex.
 */
export async function listWithChecks(
  ctx: TableContext,
  statuses: Pick<DocTable<{ id: string }>, 'table' | 'run'>,
  accountId: string,
): Promise<(string | Uint8Array | CheckStatusDocument)[]> {
  if (accountId.includes('\0')) return [];
  const checks = `${ctx.prefix}checks`;
  return statuses.run(async () => {
    if (isPostgres(ctx.reader)) return pgList(ctx, checks, statuses.table, accountId);
    const quoted = 'json_quote(c.name)';
    // Each check's entry, in creation order (the checks are read along their account index, whose
    // order is creation order; the ORDER BY says so), joined by line feeds into one text handed over
    // as bytes: no entry holds a raw line feed (a document with one takes the slower way, where it
    // is escaped), so each line feed is a boundary.
    const rows = (await ctx.reader.raw(
      `SELECT CAST(group_concat(j, char(10)) AS BLOB) AS list FROM (
         SELECT CASE WHEN c.name IS NOT NULL AND substr(s.data, 1, 9 + length(${quoted})) = '{"name":' || ${quoted} || ',' AND instr(s.data, char(10)) = 0
           THEN s.data ELSE '!' || json_array(c.id, c.name, c.created_at, s.data) END AS j
         FROM ?? c LEFT JOIN ?? s ON s.id = c.account_id || ':' || c.id AND s.account_id = c.account_id
         WHERE c.account_id = ? ORDER BY c.seq)`,
      [checks, statuses.table, accountId],
    )) as { list: Buffer | null }[];
    const list = rows[0]?.list;
    if (!list || list.length === 0) return [];
    // Every document stored under its check's current name: the bytes are the list's statuses, once
    // the boundaries are commas.
    if (list[0] !== BANG && list.indexOf(MARKED) === -1) {
      for (let i = list.indexOf(LF); i !== -1; i = list.indexOf(LF, i + 1)) list[i] = COMMA;
      return [list];
    }
    return list.toString('utf8').split('\n').map((j) => {
      if (j.charCodeAt(0) !== BANG) return j;
      const [id, name, createdAt, json] = JSON.parse(j.slice(1)) as [string, string | null, string | null, string | null];
      return { checkId: String(id), name: String(name), created_at: String(createdAt), json };
    });
  });
}

async function pgList(ctx: TableContext, checks: string, statuses: string, accountId: string): Promise<(Uint8Array | CheckStatusDocument)[]> {
  if (!ctx.copies) return pgRowList(ctx, checks, statuses, accountId);
  const account = pgLiteral(accountId);
  const [checkBytes, documentBytes] = await Promise.all([
    // Each name as PostgreSQL quotes it in JSON, to be compared with the document's bytes.
    copyBinary(ctx.reader, `select id::text, to_json(name)::text, created_at::text from ${quoteIdent(checks)} where account_id = ${account} order by seq`),
    // In no order: the checks give it, and sorting the documents would spill to disk. The server
    // cuts each status's check id from its row id.
    copyBinary(ctx.reader, `select substr(id, char_length(account_id) + 2)::text, data::text from ${quoteIdent(statuses)} where account_id = ${account}`),
  ]);
  if (!checkBytes || !documentBytes) return pgRowList(ctx, checks, statuses, accountId);
  // Each check's document, by check id: where it starts in the bytes, and its length.
  const documents = new CopyTuples(documentBytes);
  const byCheck = new Map<string, number>();
  const spans: number[] = [];
  while (documents.next()) {
    const checkId = documents.field().text();
    documents.field();
    if (checkId === null || documents.length < 0) continue;
    byCheck.set(checkId, spans.length);
    spans.push(documents.start, documents.length);
  }
  const entries: (Uint8Array | CheckStatusDocument)[] = [];
  const rows = new CopyTuples(checkBytes);
  while (rows.next()) {
    const id = String(rows.field().text());
    const { start: nameAt, length: nameLength } = rows.field();
    const at = byCheck.get(id);
    const start = at === undefined ? 0 : spans[at]!;
    const length = at === undefined ? -1 : spans[at + 1]!;
    // A document that starts with its check's current name (it comes first in a stored status) is
    // sent as it is. Two JSON texts of a string that are the same bytes are the same string, so a
    // name PostgreSQL quotes otherwise than JSON.stringify did only takes the slower way.
    if (nameLength > 0 && length > NAME_KEY.length + nameLength
      && sameBytes(documentBytes, start, NAME_KEY, 0, NAME_KEY.length)
      && sameBytes(documentBytes, start + NAME_KEY.length, checkBytes, nameAt, nameLength)
      && documentBytes[start + NAME_KEY.length + nameLength] === COMMA) {
      rows.field();
      entries.push(documentBytes.subarray(start, start + length));
      continue;
    }
    const name = nameLength < 0 ? 'null' : String(JSON.parse(rows.text()!));
    const createdAt = String(rows.field().text());
    entries.push({ checkId: id, name, created_at: createdAt, json: length < 0 ? null : documentBytes.toString('utf8', start, start + length) });
  }
  return entries;
}

/** The list read as rows through knex (a host's knex, or a client in pipeline mode): the service compares the names. */
async function pgRowList(ctx: TableContext, checks: string, statuses: string, accountId: string): Promise<CheckStatusDocument[]> {
  // Rows as arrays, and each status's check id cut from its row id by the server.
  const [checkRows, documents] = (await Promise.all([
    ctx.reader.raw('select id, name, created_at from ?? where account_id = ? order by seq', [checks, accountId]).options({ rowMode: 'array' }),
    ctx.reader.raw('select substr(id, char_length(account_id) + 2), data from ?? where account_id = ?', [statuses, accountId]).options({ rowMode: 'array' }),
  ])).map((r) => (r as { rows: unknown[] }).rows) as [[string, string | null, string | null][], [string, string][]];
  const byCheck = new Map<string, string>();
  for (const [checkId, data] of documents) byCheck.set(checkId, data);
  return checkRows.map(([id, name, createdAt]) => ({ checkId: id, name: String(name), created_at: String(createdAt), json: byCheck.get(id) ?? null }));
}

function sameBytes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

const NAME_KEY = Buffer.from('{"name":');
const LF = 10;
const COMMA = 44;
const BANG = 33;
const MARKED = Buffer.from('\n!');
