import * as v from 'valibot';
import { NotFoundError, ValidationError } from '../errors.js';
import { parse } from '../model/parse.js';
import { NumericIdSchema, PageQuerySchema, type Page } from '../model/primitives.js';
import type { ListOptions } from '../ports/storage.js';

const StringIdSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(200));

/** A numeric path id (groups, channels, dashboards, windows); a malformed one names `id`. */
export function numericId(raw: unknown, name = 'id'): number {
  const r = v.safeParse(NumericIdSchema, raw);
  if (!r.success) throw new ValidationError([{ path: name, message: 'must be a positive integer' }], 'params');
  return r.output;
}

/** A string path id. */
export function stringId(raw: unknown, name = 'id'): string {
  const r = v.safeParse(StringIdSchema, raw);
  if (!r.success) throw new ValidationError([{ path: name, message: 'must be a non-empty string' }], 'params');
  return r.output;
}

export function notFound(resource: string): NotFoundError {
  return new NotFoundError(`${resource} not found`);
}

/** Throws NotFoundError for a missing row (another account's row reads as missing too). */
export function found<T>(row: T | null | undefined, resource: string): T {
  if (row === null || row === undefined) throw notFound(resource);
  return row;
}

/** The body's fields that were given, over the stored ones (PUT merges). */
export function mergeDefined<T extends object>(stored: T, body: object): T {
  const out: Record<string, unknown> = { ...(stored as Record<string, unknown>) };
  for (const [k, value] of Object.entries(body)) if (value !== undefined) out[k] = value;
  return out as T;
}

/** `limit`/`page` of a page list as repository list options. */
export function pageOptions(rawQuery: unknown): ListOptions & { page: number } {
  const q = parse(PageQuerySchema, rawQuery ?? {}, 'query');
  return { limit: q.limit, offset: (q.page - 1) * q.limit, page: q.page };
}

export async function mapPage<T, R>(page: Page<T>, fn: (row: T) => R | Promise<R>): Promise<Page<R>> {
  return { items: await Promise.all(page.items.map(fn)), total: page.total, offset: page.offset };
}

/** Pages an in-memory list. */
export function slicePage<T>(all: T[], options: ListOptions): Page<T> {
  return { items: all.slice(options.offset, options.offset + options.limit), total: all.length, offset: options.offset };
}

export function stripAccount<T extends { accountId: string }>(row: T): Omit<T, 'accountId'> {
  const { accountId: _accountId, ...rest } = row;
  return rest;
}
