import type * as v from 'valibot';
import type { ValidationIssue } from '@vigil/core';
import { objectEntries, shapeOf, toDateTimeInput, unwrap, type Shape } from './schema.js';

export type FieldKind =
  | 'text' | 'number' | 'checkbox' | 'select' | 'textarea' | 'json' | 'list' | 'code' | 'password' | 'datetime' | 'fieldset';

export interface FieldOption {
  value: string;
  label: string;
  selected: boolean;
}

/** One field of a form, as the `fields` partial renders it. */
export interface FieldModel {
  /** The dotted path of the value, as a ValidationIssue's path names it; also the input's name. */
  name: string;
  /** The input's id (`f-` and the name); its help and error texts have `-help` and `-error` added. */
  id: string;
  label: string;
  kind: FieldKind;
  /** What the input shows: a checkbox's checked state, otherwise text (lists one entry a line, JSON pretty-printed). */
  value: string | boolean;
  options?: FieldOption[];
  /** A select of several values (an array of picklist values). */
  multiple?: boolean;
  required: boolean;
  min?: number;
  max?: number;
  step?: number;
  maxlength?: number;
  help?: string;
  error?: string;
  /** The ids of the help and error texts, for aria-describedby. */
  describedBy?: string;
  children?: FieldModel[];
}

/** What a form model is: its fields, and the issues that name none of them (shown above the form). */
export interface FormModel {
  fields: FieldModel[];
  issues: ValidationIssue[];
}

export type Posted = Record<string, string | string[] | undefined>;

export interface FormOptions {
  /** Labels by dotted name (default: the key in words). */
  labels?: Readonly<Record<string, string>>;
  /** Help texts by dotted name, shown before the generated ones. */
  help?: Readonly<Record<string, string>>;
  /** How a string field is shown, by dotted name (default: by its length and name). */
  kinds?: Readonly<Record<string, 'text' | 'textarea' | 'code' | 'password'>>;
  /** Dotted names not shown (their subtree too); `formBody` leaves what is not posted out. */
  omit?: readonly string[];
  /** What was posted: shown instead of `values`, so a failed submission keeps what was typed. */
  posted?: Posted;
}

const SECRET_KEY = /(secret|password|token|apikey|servicekey)$/i;
const CODE_KEY = /(^script$|Script$|^browserCheckDefaults$|^template$|^customCSS$)/;
const WORDS: Record<string, string> = { url: 'URL', ssl: 'SSL', ip: 'IP', id: 'ID', ids: 'IDs', api: 'API', css: 'CSS', ipv4: 'IPv4', ipv6: 'IPv6' };

/** `frequencyOffset` → "Frequency offset", `customCSS` → "Custom CSS". */
export function humanize(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(/[\s_]+/).filter(Boolean);
  return words
    .map((w, i) => WORDS[w.toLowerCase()] ?? (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : /^[A-Z0-9]+$/.test(w) ? w : w.toLowerCase()))
    .join(' ');
}

function lastOf(raw: string | string[] | undefined): string | undefined {
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

function displayValue(shape: Shape, value: unknown): string | boolean {
  switch (shape.kind) {
    case 'checkbox':
      return value === true;
    case 'list':
      return Array.isArray(value) ? value.map(String).join('\n') : '';
    case 'json':
      return value === undefined || value === null ? '' : JSON.stringify(value, null, 2);
    case 'datetime':
      return toDateTimeInput(value);
    default:
      return value === undefined || value === null ? '' : String(value);
  }
}

/** The posted text of a field as its input shows it again. */
function postedValue(shape: Shape, raw: string | string[]): string | boolean {
  if (shape.kind === 'checkbox') return lastOf(raw) === 'true' || lastOf(raw) === 'on';
  return lastOf(raw) ?? '';
}

function stringKind(key: string, maxlength: number | undefined): FieldKind {
  if (SECRET_KEY.test(key)) return 'password';
  if (CODE_KEY.test(key)) return 'code';
  return maxlength !== undefined && maxlength > 2048 ? 'textarea' : 'text';
}

function build(entries: v.ObjectEntries, prefix: string, values: unknown, options: FormOptions): FieldModel[] {
  const fields: FieldModel[] = [];
  const omit = new Set(options.omit ?? []);
  for (const [key, schema] of Object.entries(entries)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (omit.has(name)) continue;
    const u = unwrap(schema);
    const shape = shapeOf(u);
    if (shape.kind === 'literal') continue;
    const own = values !== null && typeof values === 'object' ? (values as Record<string, unknown>)[key] : undefined;
    const value = own === undefined && u.hasDefault ? u.fallback : own;
    const field: FieldModel = {
      name,
      id: `f-${name}`,
      label: options.labels?.[name] ?? humanize(key),
      kind: shape.kind === 'fieldset' ? 'fieldset' : 'text',
      value: '',
      required: !u.optional && !u.nullable,
    };
    const help: string[] = options.help?.[name] ? [options.help[name]] : [];
    if (shape.kind === 'fieldset') {
      field.children = build(shape.entries, name, value, options);
    } else {
      const posted = options.posted?.[name];
      field.value = posted !== undefined ? postedValue(shape, posted) : displayValue(shape, value);
      switch (shape.kind) {
        case 'checkbox':
          field.kind = 'checkbox';
          field.required = false;
          break;
        case 'number':
          Object.assign(field, { kind: 'number' }, definedOnly({ min: shape.min, max: shape.max, step: shape.step }));
          break;
        case 'select': {
          field.kind = 'select';
          const chosen = new Set(
            posted !== undefined ? [posted].flat() : shape.multiple ? (Array.isArray(value) ? value.map(String) : []) : [value === null || value === undefined ? '' : String(value)],
          );
          field.options = shape.options.map((o) => ({ value: String(o), label: String(o), selected: chosen.has(String(o)) }));
          if (shape.multiple) {
            field.multiple = true;
            field.value = '';
            help.push('Choose any number (Ctrl or ⌘ and click).');
          } else if (u.nullable || (u.optional && !u.hasDefault)) {
            field.options.unshift({ value: '', label: '(none)', selected: chosen.has('') });
          }
          break;
        }
        case 'text':
          field.kind = options.kinds?.[name] ?? stringKind(key, shape.maxlength);
          if (shape.maxlength !== undefined) field.maxlength = shape.maxlength;
          break;
        case 'datetime':
          field.kind = 'datetime';
          help.push('In UTC.');
          break;
        case 'list':
          field.kind = 'list';
          help.push('One a line.');
          break;
        case 'json':
          field.kind = 'json';
          help.push(u.nullable ? 'JSON; leave empty for none.' : 'JSON.');
          break;
      }
    }
    if (help.length) field.help = help.join(' ');
    fields.push(field);
  }
  return fields;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as Partial<T>;
}

function flatten(fields: readonly FieldModel[]): FieldModel[] {
  return fields.flatMap((f) => [f, ...flatten(f.children ?? [])]);
}

/**
 * Puts each issue on the field whose name is the longest prefix of its path (`environmentVariables.3.key`
 * lands on `environmentVariables` as "3.key: ..."), then sets every field's aria-describedby.
 * Answers the issues no field names.
 */
export function placeIssues(fields: FieldModel[], issues: readonly ValidationIssue[]): ValidationIssue[] {
  const all = flatten(fields);
  const unplaced: ValidationIssue[] = [];
  for (const issue of issues) {
    let best: FieldModel | undefined;
    for (const f of all) {
      if ((issue.path === f.name || issue.path.startsWith(`${f.name}.`)) && (!best || f.name.length > best.name.length)) best = f;
    }
    if (!best) {
      unplaced.push(issue);
      continue;
    }
    const rest = issue.path.slice(best.name.length + 1);
    const text = rest ? `${rest}: ${issue.message}` : issue.message;
    best.error = best.error ? `${best.error}; ${text}` : text;
  }
  for (const f of all) {
    const ids = [f.help ? `${f.id}-help` : '', f.error ? `${f.id}-error` : ''].filter(Boolean);
    if (ids.length) f.describedBy = ids.join(' ');
    else delete f.describedBy;
  }
  return unplaced;
}

/**
 * The fields of a form for `schema` (an object schema, possibly piped), filled from `values` (a
 * stored resource; its defaults when absent) or from what was posted, with `issues` placed
 * beside the fields they name.
 */
export function formFields(
  schema: v.GenericSchema,
  values?: unknown,
  issues: readonly ValidationIssue[] = [],
  options: FormOptions = {},
): FormModel {
  const entries = objectEntries(schema);
  if (!entries) throw new TypeError('formFields: the schema must be an object schema');
  const fields = build(entries, '', values, options);
  return { fields, issues: placeIssues(fields, issues) };
}
