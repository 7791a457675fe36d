import * as v from 'valibot';
import { DateTimeSchema } from '@vigil/core';

// Reads valibot schema objects the way a form needs them: what wraps a field (optional, nullable,
// its default), what it is underneath, and the bounds its pipe states. Walking valibot's own
// objects keeps the exact dotted paths the services report and needs no JSON Schema round trip
// (which cannot state transforms, custom checks or number picklists).

type AnySchema = v.GenericSchema & { type: string; pipe?: readonly PipeItem[] };
type PipeItem = { kind: string; type: string; requirement?: unknown } & Partial<AnySchema>;

/** A field's schema with its wrappers taken off. */
export interface Unwrapped {
  base: AnySchema;
  /** Absent is allowed (optional, nullish). */
  optional: boolean;
  nullable: boolean;
  /** Whether a wrapper gives a default, and which (functions called). */
  hasDefault: boolean;
  fallback: unknown;
}

const OPTIONAL = new Set(['optional', 'exact_optional', 'undefinedable', 'nullish']);
const NULLABLE = new Set(['nullable', 'nullish']);

export function unwrap(schema: v.GenericSchema): Unwrapped {
  let s = schema as AnySchema;
  const out: Unwrapped = { base: s, optional: false, nullable: false, hasDefault: false, fallback: undefined };
  while (OPTIONAL.has(s.type) || NULLABLE.has(s.type)) {
    if (OPTIONAL.has(s.type)) out.optional = true;
    if (NULLABLE.has(s.type)) out.nullable = true;
    if (!out.hasDefault && (s as { default?: unknown }).default !== undefined) {
      out.hasDefault = true;
      out.fallback = v.getDefault(s as never);
    }
    s = (s as unknown as { wrapped: AnySchema }).wrapped;
  }
  out.base = s;
  return out;
}

/** The validation actions of a schema's pipe, nested pipes (`pipe(NameSchema, maxLength)`) included. */
export function actions(schema: AnySchema): PipeItem[] {
  const out: PipeItem[] = [];
  for (const item of schema.pipe ?? []) {
    if (item.kind === 'schema') {
      if (item !== schema) out.push(...actions(item as AnySchema));
    } else {
      out.push(item);
    }
  }
  return out;
}

/** How a form holds a value of this schema; the same reading drives the fields and the body. */
export type Shape =
  | { kind: 'literal'; value: unknown }
  | { kind: 'checkbox' }
  | { kind: 'select'; options: readonly unknown[]; multiple: boolean }
  | { kind: 'number'; min?: number; max?: number; step?: number }
  | { kind: 'text'; maxlength?: number }
  | { kind: 'datetime' }
  | { kind: 'list' }
  | { kind: 'fieldset'; entries: v.ObjectEntries }
  | { kind: 'json' };

function requirementOf(schema: AnySchema, type: string): unknown {
  return actions(schema).find((a) => a.type === type)?.requirement;
}

export function shapeOf(u: Unwrapped): Shape {
  const s = u.base;
  switch (s.type) {
    case 'literal':
      return { kind: 'literal', value: (s as unknown as { literal: unknown }).literal };
    case 'boolean':
      return { kind: 'checkbox' };
    case 'picklist':
    case 'enum':
      return { kind: 'select', options: (s as unknown as { options: readonly unknown[] }).options, multiple: false };
    case 'number': {
      const min = requirementOf(s, 'min_value') as number | undefined;
      const max = requirementOf(s, 'max_value') as number | undefined;
      const integer = actions(s).some((a) => a.type === 'integer');
      const step = (requirementOf(s, 'multiple_of') as number | undefined) ?? (integer ? 1 : undefined);
      return { kind: 'number', min, max, step };
    }
    case 'string': {
      if (s === (DateTimeSchema as unknown)) return { kind: 'datetime' };
      return { kind: 'text', maxlength: requirementOf(s, 'max_length') as number | undefined };
    }
    case 'object':
      // A nullable object needs a way to say "none": its JSON (empty = null) says it.
      return u.nullable ? { kind: 'json' } : { kind: 'fieldset', entries: (s as unknown as { entries: v.ObjectEntries }).entries };
    case 'array': {
      const item = unwrap((s as unknown as { item: v.GenericSchema }).item);
      if (item.optional || item.nullable) return { kind: 'json' };
      if (item.base.type === 'string') return { kind: 'list' };
      if (item.base.type === 'picklist' && (item.base as unknown as { options: unknown[] }).options.every((o) => typeof o === 'string')) {
        return { kind: 'select', options: (item.base as unknown as { options: readonly unknown[] }).options, multiple: true };
      }
      return { kind: 'json' };
    }
    default:
      return { kind: 'json' };
  }
}

/** The entries of an object schema (possibly piped); undefined for anything else. */
export function objectEntries(schema: v.GenericSchema): v.ObjectEntries | undefined {
  const u = unwrap(schema);
  return u.base.type === 'object' ? (u.base as unknown as { entries: v.ObjectEntries }).entries : undefined;
}

/** A stored instant as a `datetime-local` input holds it: UTC, to the second. */
export function toDateTimeInput(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  const t = Date.parse(value);
  return Number.isNaN(t) ? value : new Date(t).toISOString().slice(0, 19);
}
