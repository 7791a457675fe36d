// What a route of the public API is, whatever serves it: its method, path, schemas and handler,
// and the helpers the route files build their routes with (CRUD of one resource, the assign query).
import * as v from 'valibot';
import { PageQuerySchema, QueryBooleanSchema, parse, type Page, type Vigil } from '@vigil/core';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A valibot schema, named by core's `parse` rather than by valibot: core's declarations carry the
 * valibot types they use, so a host type-checks them once instead of valibot's whole declarations.
 */
export type Schema = Parameters<typeof parse>[0];

/** A schema with the name it carries in the OpenAPI document's components. */
export interface NamedSchema {
  name: string;
  schema: Schema;
}

export const named = (name: string, schema: Schema): NamedSchema => ({ name, schema });

/** What a handler receives: the authenticated account and the request's raw parts. */
export interface RouteInput {
  vigil: Vigil;
  accountId: string;
  params: Record<string, string>;
  query: unknown;
  body: unknown;
  /** Aborted when the client goes away (long polls stop early). */
  signal: AbortSignal;
}

/** A reply other than 200 with a JSON body. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
  ) {}
}

/**
 * A 200 answer whose JSON body is already written (a long list the service wrote once, rather than
 * objects the router would stringify again). It must be exactly what JSON.stringify of the body gives.
 */
export class JsonText {
  /** JSON text as a string or as its UTF-8 bytes. */
  constructor(readonly text: string | Buffer) {}
}

export type ResponseKind = 'object' | 'array' | 'page' | 'cursor' | 'empty';

export interface RouteDef {
  method: HttpMethod;
  /** Express path syntax (`/v1/checks/:id`); the OpenAPI path is derived from it. */
  path: string;
  operationId: string;
  summary: string;
  /** A longer description in the OpenAPI document (CommonMark). */
  description?: string;
  tag: string;
  /** Path parameters and their OpenAPI type. */
  params?: Record<string, 'string' | 'integer' | 'uuid'>;
  /** The query's schema: an object (in a pipe or not), each entry documented as a parameter. */
  query?: Schema;
  body?: NamedSchema;
  /** Success status (200 unless given). */
  status?: number;
  response: { kind: ResponseKind; schema?: NamedSchema };
  /** The handler waits for something (the completion poll): it gets a signal that aborts when the client hangs up. */
  longPoll?: boolean;
  /** Other documented statuses beside the common errors (e.g. 408 of the completion poll). */
  extraStatuses?: number[];
  handle(input: RouteInput): Promise<unknown>;
}

export const AssignQuerySchema = v.object({ autoAssignAlerts: v.optional(QueryBooleanSchema, true) });
export const assign = (query: unknown) => parse(AssignQuerySchema, query ?? {}, 'query');

/** Plain CRUD of a resource with a numeric id. */
export function crud(options: {
  base: string;
  tag: string;
  noun: string;
  plural: string;
  create: NamedSchema;
  update?: NamedSchema;
  response: NamedSchema;
  service: (vigil: Vigil) => {
    list(accountId: string, query: unknown): Promise<Page<unknown>>;
    get(accountId: string, id: unknown): Promise<unknown>;
    create(accountId: string, body: unknown): Promise<unknown>;
    update?(accountId: string, id: unknown, body: unknown): Promise<unknown>;
    delete(accountId: string, id: unknown): Promise<void>;
  };
  idType?: 'integer' | 'string';
  /** The path parameter's name, as the spec spells it. */
  idParam?: string;
}): RouteDef[] {
  const { base, tag, noun, plural, service } = options;
  const idType = options.idType ?? 'integer';
  const id = options.idParam ?? 'id';
  const Noun = noun.replace(/(^|\s)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
  const Plural = plural.replace(/(^|\s)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
  const routes: RouteDef[] = [
    {
      method: 'get', path: base, operationId: `list${Plural}`, summary: `List ${plural}`, tag,
      query: PageQuerySchema, response: { kind: 'page', schema: options.response },
      handle: ({ vigil, accountId, query }) => service(vigil).list(accountId, query),
    },
    {
      method: 'get', path: `${base}/:${id}`, operationId: `get${Noun}`, summary: `Get ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, params }) => service(vigil).get(accountId, params[id]),
    },
    {
      method: 'post', path: base, operationId: `create${Noun}`, summary: `Create ${article(noun)} ${noun}`, tag,
      body: options.create, status: 201, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, body }) => service(vigil).create(accountId, body),
    },
    {
      method: 'delete', path: `${base}/:${id}`, operationId: `delete${Noun}`, summary: `Delete ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, status: 204, response: { kind: 'empty' },
      handle: ({ vigil, accountId, params }) => service(vigil).delete(accountId, params[id]),
    },
  ];
  if (options.update) {
    routes.push({
      method: 'put', path: `${base}/:${id}`, operationId: `update${Noun}`, summary: `Update ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, body: options.update, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, params, body }) => service(vigil).update!(accountId, params[id], body),
    });
  }
  return routes;
}

export function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a';
}
