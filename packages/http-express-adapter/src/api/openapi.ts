import * as v from 'valibot';
import { toJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import { ErrorBodySchema, type CheckTypeDefinition } from '@vigil/core';
import { apiRoutes, type NamedSchema, type RouteDef } from './route-table.js';

type Json = Record<string, unknown>;

// Refinements (`check`, `trim`, case-insensitive patterns) have no JSON Schema form; the document
// states the shapes, and the server's own validation stays the authority on the rest.
const base: ConversionConfig = { target: 'draft-2020-12', errorMode: 'ignore' };

function convert(schema: v.GenericSchema, typeMode: 'input' | 'output'): Json {
  const { $schema: _s, ...rest } = toJsonSchema(schema, { ...base, typeMode }) as Json;
  return rest;
}

/** The object schema inside a query schema that may be wrapped in a pipe of cross-field checks. */
function objectEntries(schema: v.GenericSchema): Record<string, v.GenericSchema> {
  const s = schema as unknown as { type: string; entries?: Record<string, v.GenericSchema>; pipe?: v.GenericSchema[] };
  if (s.entries) return s.entries;
  const inner = s.pipe?.find((p) => (p as { entries?: unknown }).entries);
  return (inner as unknown as { entries: Record<string, v.GenericSchema> } | undefined)?.entries ?? {};
}

function isOptional(schema: v.GenericSchema): boolean {
  const type = (schema as { type: string }).type;
  return type === 'optional' || type === 'exact_optional' || type === 'nullish' || type === 'undefinedable';
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });

const COMMON_ERRORS: Record<number, string> = {
  400: 'Invalid path, query or body; `validation.keys` names the fields',
  401: 'Missing, malformed, unknown or revoked API key',
  403: 'The key belongs to another account than x-service-account',
  404: 'No such resource in this account',
  429: 'Over the rate limit; see Retry-After',
  500: 'Internal error',
  503: 'Storage unavailable; retry later',
};

interface Builder {
  schemas: Record<string, Json>;
  ref(named: NamedSchema, typeMode: 'input' | 'output'): Json;
}

function builder(): Builder {
  const schemas: Record<string, Json> = { Error: convert(ErrorBodySchema, 'output') };
  return {
    schemas,
    ref(named, typeMode) {
      schemas[named.name] ??= convert(named.schema, typeMode);
      return { $ref: `#/components/schemas/${named.name}` };
    },
  };
}

function operation(route: RouteDef, b: Builder): Json {
  const parameters: Json[] = [];
  for (const [name, type] of Object.entries(route.params ?? {})) {
    const schema = type === 'integer' ? { type: 'integer', minimum: 1 } : type === 'uuid' ? { type: 'string', format: 'uuid' } : { type: 'string' };
    parameters.push({ name, in: 'path', required: true, schema });
  }
  if (route.query) {
    for (const [name, entry] of Object.entries(objectEntries(route.query))) {
      parameters.push({ name, in: 'query', required: !isOptional(entry), schema: convert(entry, 'input') });
    }
  }

  const status = String(route.status ?? 200);
  const responses: Json = {};
  const kind = route.response.kind;
  if (kind === 'empty' || !route.response.schema) {
    responses[status] = { description: 'Done' };
  } else {
    const item = b.ref(route.response.schema, 'output');
    const schema = kind === 'page' || kind === 'array'
      ? { type: 'array', items: item }
      : kind === 'cursor'
        ? {
            type: 'object',
            required: ['length', 'entries', 'nextId'],
            properties: { length: { type: 'integer' }, entries: { type: 'array', items: item }, nextId: { type: ['string', 'null'] } },
          }
        : item;
    responses[status] = {
      description: kind === 'page' ? 'One page; the total is in Content-Range' : 'Success',
      content: { 'application/json': { schema } },
      ...(kind === 'page'
        ? { headers: { 'Content-Range': { description: '`<first>-<last>/<total>` (`*/<total>` for an empty page)', schema: { type: 'string' } } } }
        : {}),
    };
  }
  for (const [code, description] of Object.entries(COMMON_ERRORS)) responses[code] = errorResponse(description);
  if (route.body) responses['413'] = errorResponse('Body over the configured limit');
  for (const code of route.extraStatuses ?? []) {
    responses[String(code)] = errorResponse(code === 408 ? 'The session is still running' : code === 409 ? 'Conflict with the stored state' : 'Error');
  }

  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: b.ref(route.body, 'input') } } } }
      : {}),
    responses,
  };
}

export interface OpenApiOptions {
  /** Include the heartbeat ping endpoints. Default true. */
  pings?: boolean;
  /** Include `GET /openapi.json` itself. Default true. */
  openapi?: boolean;
  /** Check types plugins added, documented like the built-in ones (the router passes the registered ones). */
  checkTypes?: readonly CheckTypeDefinition[];
  /**
   * The URL the router is served under (its mount path, e.g. `/api`, or a full URL), stated as the
   * document's one `servers` entry. The router's own `GET /openapi.json` gives the path it is
   * mounted on. Without it the document has no `servers`.
   */
  serverUrl?: string;
}

/** The document with `servers` naming `url` as the one server (after `info`, as written). */
export function withServer(doc: Json, url: string): Json {
  const { openapi, info, servers: _s, ...rest } = doc;
  return { openapi, info, servers: [{ url }], ...rest };
}

/**
 * The OpenAPI 3.1 document of the router: every mounted operation, its parameters, body and
 * responses, generated from the same valibot schemas that validate requests.
 */
export function openApiDocument(options: OpenApiOptions = {}): Json {
  const b = builder();
  const paths: Record<string, Json> = {};
  const add = (path: string, method: string, op: Json) => {
    (paths[openApiPath(path)] ??= {})[method] = op;
  };
  for (const route of apiRoutes(options.checkTypes)) add(route.path, route.method, operation(route, b));

  if (options.pings !== false) {
    for (const method of ['get', 'post']) {
      add('/ping/:token', method, {
        operationId: method === 'get' ? 'pingHeartbeat' : 'pingHeartbeatPost',
        summary: 'Record a ping of the heartbeat check that owns the token',
        tags: ['Checks'],
        security: [],
        parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: {
            description: 'Ping recorded',
            content: { 'application/json': { schema: { type: 'object', properties: { ok: { type: 'boolean' }, at: { type: 'string', format: 'date-time' } } } } },
          },
          404: errorResponse('No heartbeat check has this token'),
          429: errorResponse('Over the rate limit'),
        },
      });
    }
  }
  if (options.openapi !== false) {
    add('/openapi.json', 'get', {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: ['Meta'],
      security: [],
      responses: { 200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
    });
  }

  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Vigil API',
      version: '1.0.0',
      description: 'Checks, groups, alert channels, dashboards, status pages, incidents, results and analytics of one account.',
    },
    security: [{ bearerAuth: [], serviceAccount: [] }],
    tags: [...new Set(Object.values(paths).flatMap((p) => Object.values(p).flatMap((op) => (op as { tags: string[] }).tags)))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`' },
        serviceAccount: { type: 'apiKey', in: 'header', name: 'x-service-account', description: 'The account id the key belongs to' },
      },
      schemas: b.schemas,
    },
  };
  return options.serverUrl === undefined ? doc : withServer(doc, options.serverUrl);
}
