import * as v from 'valibot';
import { ValidationError, type ValidationIssue, type ValidationSource } from '../errors.js';
import { ARRAY_FOR_OBJECT } from './shared.js';

const WHOLE: Record<ValidationSource, string> = { payload: 'the request body', query: 'the query', params: 'the path parameters' };

/** Turns valibot issues into ValidationIssues, each naming the dotted path of its field. */
export function toValidationIssues(issues: readonly v.BaseIssue<unknown>[]): ValidationIssue[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message }));
}

/**
 * Parses `input` with `schema`, collecting every issue (not only the first). A failure throws a
 * ValidationError that names each offending field path.
 */
export function parse<TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  source: ValidationSource = 'payload',
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  // An array sent as the whole body (`[]` for `{}`) is named as the body, not as an unnamed field.
  const issues = toValidationIssues(result.issues).map((issue) =>
    issue.path === '' && issue.message === ARRAY_FOR_OBJECT ? { path: '', message: `${WHOLE[source]} ${ARRAY_FOR_OBJECT}` } : issue,
  );
  throw new ValidationError(issues, source);
}
