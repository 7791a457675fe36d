import * as v from 'valibot';
import { recordEntries, responseEntries, ScriptPathSchema, typeEntries } from './check-common.js';
import { CodeSchema } from './primitives.js';
import { EnvironmentVariablesSchema, integerBetween, modelObject, updateEntries } from './shared.js';

/**
 * The response-time limits of a multi-step check, on the sum of its steps: 0..60000 ms, degraded
 * past 10 s and failed past 30 s unless the check says otherwise. A flow of several requests takes
 * longer than one API request, whose limits are 10 and 20 s.
 */
const multiStepResponseTimeSchema = (fallback: number) => v.optional(v.nullable(integerBetween(0, 60_000)), fallback);

const multiStepEntries = typeEntries({
  // The body of an async function that gets `request`, `expect`, `step` and `markDegraded`.
  script: v.pipe(CodeSchema, v.check((s) => s.trim().length > 0, 'must not be empty')),
  scriptPath: ScriptPathSchema,
  environmentVariables: v.optional(EnvironmentVariablesSchema, () => []),
  degradedResponseTime: multiStepResponseTimeSchema(10_000),
  maxResponseTime: multiStepResponseTimeSchema(30_000),
});

export const MultiStepCheckCreateSchema = modelObject(multiStepEntries);
export type MultiStepCheckCreate = v.InferOutput<typeof MultiStepCheckCreateSchema>;
export const MultiStepCheckUpdateSchema = modelObject(updateEntries(multiStepEntries));
export type MultiStepCheckUpdate = v.InferOutput<typeof MultiStepCheckUpdateSchema>;
export const MultiStepCheckSchema = v.object(recordEntries(multiStepEntries, 'MULTI_STEP'));
export type MultiStepCheck = v.InferOutput<typeof MultiStepCheckSchema>;
export const MultiStepCheckResponseSchema = v.object(responseEntries(multiStepEntries, 'MULTI_STEP'));
export type MultiStepCheckResponse = v.InferOutput<typeof MultiStepCheckResponseSchema>;
