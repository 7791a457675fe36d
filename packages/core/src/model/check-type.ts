import * as v from 'valibot';
import {
  AlertChannelsSummarySchema,
  BUILTIN_CHECK_TYPES,
  checkCommonEntries,
  checkRecordEntries,
  checkResponseEntries,
} from './check.js';
import { modelObject, updateEntries, type UpdateEntries } from './shared.js';

type CommonEntries = typeof checkCommonEntries;

/** The body fields of a plugin's check type: the common ones, its own replacing any of the same name. */
export type CheckTypeEntries<TEntries extends v.ObjectEntries> = Omit<CommonEntries, keyof TEntries> & TEntries;

/** A create body of a plugin's check type once parsed (defaults filled in). */
export type CheckTypeBody<TEntries extends v.ObjectEntries> = v.InferOutput<v.ObjectSchema<CheckTypeEntries<TEntries>, undefined>>;

/** A stored check of a plugin's type, as `job.check` holds it when its runner runs. */
export type PluginCheck<TType extends string, TEntries extends v.ObjectEntries> = CheckTypeBody<TEntries> & {
  id: string;
  accountId: string;
  checkType: TType;
  created_at: string;
  updated_at: string | null;
};

/**
 * A check type that a plugin adds (`SMTP`, `ICMP`, ...): its own fields beside the common check
 * fields, and the schemas core and the HTTP adapter build from them. Made by `defineCheckType`;
 * registered with `createVigil({ checkTypes })` or on the `CHECK_TYPE_DEFINITIONS` token.
 */
export interface CheckTypeDefinition<TType extends string = string, TEntries extends v.ObjectEntries = v.ObjectEntries> {
  readonly checkType: TType;
  /** The path segment of its routes: `POST /v1/checks/{slug}`, `GET|PUT|DELETE /v1/checks/{slug}/{id}`. */
  readonly slug: string;
  /** How operation summaries name it ("Create an SMTP check"). */
  readonly label: string;
  /** The type's own fields, as the plugin gave them. */
  readonly entries: TEntries;
  /** Create (POST) body: every field validated, defaults filled in, unknown fields dropped. */
  readonly createSchema: v.GenericSchema<unknown, CheckTypeBody<TEntries>>;
  /** Update (PUT) body: every field optional and without its default, so absent fields keep their stored value. */
  readonly updateSchema: v.GenericSchema;
  /** A stored check of the type. */
  readonly checkSchema: v.GenericSchema<unknown, PluginCheck<TType, TEntries>>;
  /** A check of the type as the API answers it. */
  readonly responseSchema: v.GenericSchema;
}

/** The stored check type of a definition: `CheckOf<typeof smtpCheckType>`. */
export type CheckOf<TDefinition> = TDefinition extends CheckTypeDefinition<infer TType, infer TEntries> ? PluginCheck<TType, TEntries> : never;

export interface CheckTypeOptions<TType extends string, TEntries extends v.ObjectEntries> {
  /** The `checkType` value: upper-case letters, digits and `_` (`SMTP`, `MULTI_STEP`); not a built-in type. */
  checkType: TType;
  /** Valibot entries of the type's own fields. A field named like a common one (`frequency`) replaces it. */
  entries: TEntries;
  /** The path segment of its routes. Default: the type in lower case, `_` as `-`. */
  slug?: string;
  /** Its name in operation summaries. Default: the type. */
  label?: string;
}

/** Path segments the built-in routes under /v1/checks already use. */
export const RESERVED_CHECK_SLUGS = ['tcp', 'api', 'browser', 'heartbeat', 'heartbeats', 'dns', 'url', 'icmp', 'multistep', 'playwright'] as const;
const RECORD_ONLY_FIELDS = ['id', 'accountId', 'checkType', 'created_at', 'updated_at', 'alertChannels'];

/**
 * Defines a check type a plugin adds. Core validates its bodies with the common check fields plus
 * `entries`, stores and answers it like a built-in type, and the HTTP adapter serves its routes
 * and documents them; the runner registered for the same `checkType` runs it (and its `validate`
 * adds the rules a schema cannot state). Throws a TypeError for a name or slug that is malformed
 * or taken, or entries that redefine a field the service sets.
 */
export function defineCheckType<const TType extends string, const TEntries extends v.ObjectEntries>(
  options: CheckTypeOptions<TType, TEntries>,
): CheckTypeDefinition<TType, TEntries> {
  const { checkType, entries } = options;
  if (!/^[A-Z][A-Z0-9_]*$/.test(checkType)) {
    throw new TypeError(`defineCheckType: checkType must be upper-case letters, digits and _ (such as SMTP), got "${checkType}"`);
  }
  if ((BUILTIN_CHECK_TYPES as readonly string[]).includes(checkType)) {
    throw new TypeError(`defineCheckType: ${checkType} is a built-in check type`);
  }
  const slug = options.slug ?? checkType.toLowerCase().replace(/_/g, '-');
  if (!/^[a-z][a-z0-9-]*$/.test(slug)) {
    throw new TypeError(`defineCheckType: slug must be lower-case letters, digits and - (such as smtp), got "${slug}"`);
  }
  if ((RESERVED_CHECK_SLUGS as readonly string[]).includes(slug)) {
    throw new TypeError(`defineCheckType: the slug "${slug}" is taken by a built-in route`);
  }
  const clash = Object.keys(entries).filter((k) => RECORD_ONLY_FIELDS.includes(k));
  if (clash.length > 0) throw new TypeError(`defineCheckType: the service sets ${clash.join(', ')}; leave them out of entries`);

  const body = { ...checkCommonEntries, ...entries } as unknown as CheckTypeEntries<TEntries>;
  return {
    checkType,
    slug,
    label: options.label ?? checkType,
    entries,
    createSchema: modelObject(body) as unknown as v.GenericSchema<unknown, CheckTypeBody<TEntries>>,
    updateSchema: modelObject(updateEntries(body) as UpdateEntries<v.ObjectEntries>),
    checkSchema: v.object({ ...body, ...checkRecordEntries, checkType: v.literal(checkType) }) as unknown as v.GenericSchema<
      unknown,
      PluginCheck<TType, TEntries>
    >,
    responseSchema: v.object({ ...body, ...checkResponseEntries, checkType: v.literal(checkType), alertChannels: AlertChannelsSummarySchema }),
  };
}
