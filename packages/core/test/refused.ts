import { expect } from 'vitest';
import { ValidationError } from '../src/errors.js';

/** Expects `p` to be refused with a 400 whose issues name exactly `fields`. */
export async function refused(p: Promise<unknown>, ...fields: string[]): Promise<void> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).statusCode).toBe(400);
  expect((err as ValidationError).issues.map((i) => i.path)).toEqual(fields);
}
