import type * as v from 'valibot';
import type { ValidationIssue } from '@vigil/core';
import type { Posted } from './fields.js';
import { objectEntries, shapeOf, unwrap, type Unwrapped } from './schema.js';

/**
 * `create`: an empty optional field is left out, so the schema's default applies. `update`: the
 * services merge the given top-level fields over the stored ones, so an empty field must say what
 * it means: null where the field takes null, else its default, else it is left out.
 */
export type FormMode = 'create' | 'update';

export interface FormBody {
  /** The body the service is given. */
  body: Record<string, unknown>;
  /** What the form itself could not read (JSON that does not parse, a number that is none, a required field left empty). */
  issues: ValidationIssue[];
}

const NO_VALUE = Symbol('no value');

function lastOf(raw: string | string[]): string {
  return Array.isArray(raw) ? (raw[raw.length - 1] ?? '') : raw;
}

/** Browsers send a textarea's line breaks as CRLF. */
function lines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** What an empty input stands for. */
function emptyValue(u: Unwrapped, mode: FormMode, isString: boolean): unknown {
  if (!u.optional && !u.nullable) return isString ? '' : NO_VALUE;
  if (mode === 'create') return undefined;
  if (u.nullable) return null;
  return u.hasDefault ? u.fallback : undefined;
}

function read(
  entries: v.ObjectEntries,
  prefix: string,
  posted: Posted,
  mode: FormMode,
  issues: ValidationIssue[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(entries)) {
    const name = prefix ? `${prefix}.${key}` : key;
    const u = unwrap(schema);
    const shape = shapeOf(u);
    if (shape.kind === 'literal') {
      out[key] = shape.value;
      continue;
    }
    if (shape.kind === 'fieldset') {
      const inner = read(shape.entries, name, posted, mode, issues);
      if (Object.keys(inner).length > 0) out[key] = inner;
      // Every input of the group emptied on an edit form: the group is cleared (null, or its defaults), not left as stored.
      else if (mode === 'update' && Object.keys(posted).some((k) => k.startsWith(`${name}.`))) out[key] = u.nullable ? null : {};
      continue;
    }
    const raw = posted[name];
    // Not in the form: left out, so the service keeps (update) or defaults (create) it.
    if (raw === undefined) continue;
    let value: unknown;
    if (shape.kind === 'checkbox') {
      // The hidden marker posts "false" before the box, which posts "true" when it is checked.
      value = lastOf(raw) === 'true' || lastOf(raw) === 'on';
    } else if (shape.kind === 'select' && shape.multiple) {
      const chosen = new Set([raw].flat().filter((s) => s !== ''));
      value = shape.options.filter((o) => chosen.has(String(o)));
    } else if (shape.kind === 'list') {
      value = lines(lastOf(raw)).split('\n').map((s) => s.trim()).filter((s) => s !== '');
    } else {
      const text = shape.kind === 'text' ? lines(lastOf(raw)) : lastOf(raw).trim();
      if (text === '') {
        value = emptyValue(u, mode, shape.kind === 'text');
        if (value === NO_VALUE) {
          issues.push({ path: name, message: 'is required' });
          continue;
        }
      } else if (shape.kind === 'number') {
        value = Number(text);
        if (!Number.isFinite(value as number)) {
          issues.push({ path: name, message: 'must be a number' });
          continue;
        }
      } else if (shape.kind === 'select') {
        // Options may be numbers (frequencies): the posted text is matched back to the option.
        const option = shape.options.find((o) => String(o) === text);
        value = option === undefined ? text : option;
      } else if (shape.kind === 'json') {
        try {
          value = JSON.parse(text);
        } catch (err) {
          issues.push({ path: name, message: `must be valid JSON (${err instanceof Error ? err.message : String(err)})` });
          continue;
        }
      } else if (shape.kind === 'datetime') {
        // A datetime-local input sends no zone: the form shows and reads UTC.
        value = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
      } else {
        value = text;
      }
    }
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The body a service expects from what a form posted (`req.body` of `express.urlencoded()`: dotted
 * names, a name posted twice as an array). Values are typed by `schema`; the service validates them.
 */
export function formBody(schema: v.GenericSchema, posted: Posted, mode: FormMode = 'create'): FormBody {
  const entries = objectEntries(schema);
  if (!entries) throw new TypeError('formBody: the schema must be an object schema');
  const issues: ValidationIssue[] = [];
  const body = read(entries, '', posted, mode, issues);
  return { body, issues };
}
