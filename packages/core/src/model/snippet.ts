import * as v from 'valibot';
import { CodeSchema, TimestampSchema, nameSchema } from './primitives.js';
import { modelObject, updateEntries } from './shared.js';

/**
 * A snippet: a piece of Node.js code stored once and named by id, which check groups run in the
 * setup or teardown phase of their API checks (`setupSnippetId`, `tearDownSnippetId`). The spec
 * names the ids only; the fields are those of the product it follows (`/v1/snippets`).
 */
const snippetEntries = {
  name: nameSchema(200),
  // Code: up to 100,000 characters.
  script: v.pipe(CodeSchema, v.check((s) => s.trim().length > 0, 'must not be empty')),
};

export const SnippetCreateSchema = modelObject(snippetEntries);
export type SnippetCreate = v.InferOutput<typeof SnippetCreateSchema>;
export const SnippetUpdateSchema = modelObject(updateEntries(snippetEntries));
export type SnippetUpdate = v.InferOutput<typeof SnippetUpdateSchema>;

const stampEntries = { created_at: TimestampSchema, updated_at: v.nullable(TimestampSchema) };

export const SnippetSchema = v.object({ ...snippetEntries, id: v.number(), accountId: v.string(), ...stampEntries });
export type Snippet = v.InferOutput<typeof SnippetSchema>;
export const SnippetResponseSchema = v.object({ ...snippetEntries, id: v.number(), ...stampEntries });
export type SnippetResponse = v.InferOutput<typeof SnippetResponseSchema>;
