import * as v from 'valibot';
import { ValidationError, type ValidationIssue } from '../src/errors.js';
import { parse } from '../src/model/parse.js';

/** The issues a schema reports for an input it must refuse. */
export function issuesOf(schema: v.GenericSchema, input: unknown): ValidationIssue[] {
  try {
    parse(schema, input);
  } catch (err) {
    if (err instanceof ValidationError) return err.issues;
    throw err;
  }
  throw new Error(`expected a ValidationError for ${JSON.stringify(input)}`);
}

export const pathsOf = (schema: v.GenericSchema, input: unknown) => issuesOf(schema, input).map((i) => i.path);
export const accepts = (schema: v.GenericSchema, input: unknown) => v.safeParse(schema, input).success;

/** The field paths a call's ValidationError names; [] when it succeeds. */
export function keysOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.keys;
    throw err;
  }
  return [];
}

/** 'OK', or the code of the domain error a call rejects with. */
export async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    return (err as { code: string }).code;
  }
}
