import * as v from 'valibot';
import { ValidationError, type ValidationIssue, type ValidationSource } from '../errors.js';

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
  throw new ValidationError(toValidationIssues(result.issues), source);
}
