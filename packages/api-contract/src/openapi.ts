import { z } from 'zod';
import { endpoints, type Endpoint } from './endpoints.js';
import { errorBodySchema } from './errors.js';

const COMPONENTS = '#/components/schemas/';

type JsonSchema = Record<string, unknown>;

/** A parameter schema as JSON Schema 2020-12 (the dialect of OpenAPI 3.1), as a client sends it. */
function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
  return rest;
}

/** A named schema's reference; each JSON body has a name (`.meta({ id })`), so it is a component. */
function ref(schema: z.ZodType): { $ref: string } {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id)
    throw new Error('Every JSON body of the API needs a name: add .meta({ id: "Name" }) to its schema.');
  return { $ref: `${COMPONENTS}${id}` };
}

/** OpenAPI 3.1, 4.8.12 Parameter Object: one per key of a params or query schema. */
function parameters(location: 'path' | 'query', schema: z.ZodObject | undefined) {
  if (!schema) return [];
  const described = inputSchema(schema) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(described.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || (described.required ?? []).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref(errorBodySchema) } },
});

/** OpenAPI 3.1, 4.8.10 Operation Object. */
function operation(endpoint: Endpoint) {
  const ok =
    endpoint.response instanceof z.ZodType
      ? {
          description: 'OK',
          content: { 'application/json': { schema: ref(endpoint.response) } },
        }
      : {
          description: endpoint.response.description,
          content: { [endpoint.response.mediaType]: { schema: { type: 'string' } } },
        };
  const errors: Record<string, ReturnType<typeof errorResponse>> = {};
  for (const [status, description] of Object.entries(endpoint.errors ?? {}))
    errors[status] = errorResponse(description);
  if (endpoint.access !== 'public')
    errors['401'] = errorResponse('No token, or an invalid one (see WWW-Authenticate)');
  if (endpoint.access === 'admin') errors['403'] = errorResponse('The token lacks the admin role');
  return {
    ...(endpoint.tag ? { tags: [endpoint.tag] } : {}),
    summary: endpoint.summary,
    ...(endpoint.access === 'public' ? {} : { security: [{ bearer: [] }] }),
    parameters: [...parameters('path', endpoint.params), ...parameters('query', endpoint.query)],
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: inputSchema(endpoint.body) } },
          },
        }
      : {}),
    responses: { '200': ok, ...errors },
  };
}

/** JSON Schema's `format: date-time` says it; zod's long regex for it would only add noise. */
const override: NonNullable<NonNullable<Parameters<typeof z.toJSONSchema>[1]>['override']> = ({
  jsonSchema,
}) => {
  if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
};

/**
 * The endpoints' bodies and the error body as components, with references between them. A named schema
 * only nested in them (Tile) comes out of zod in a `__shared` entry: it becomes a component of its own.
 */
function components(): Record<string, JsonSchema> {
  const registry = z.registry<{ id?: string | undefined }>();
  for (const schema of [
    errorBodySchema,
    ...(Object.values(endpoints) as Endpoint[]).map((e) => e.response),
  ]) {
    const id = schema instanceof z.ZodType ? z.globalRegistry.get(schema)?.id : undefined;
    if (id && !registry.has(schema as z.ZodType)) registry.add(schema as z.ZodType, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    target: 'draft-2020-12',
    uri: (id) => `${COMPONENTS}${id}`,
    override,
  });
  const { __shared: shared, ...named } = schemas as Record<string, JsonSchema>;
  const all = { ...named, ...((shared?.$defs as Record<string, JsonSchema> | undefined) ?? {}) };
  const flattened = JSON.stringify(all).replaceAll(`${COMPONENTS}__shared#/$defs/`, COMPONENTS);
  return Object.fromEntries(
    Object.entries(JSON.parse(flattened) as Record<string, JsonSchema>).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema;
      return [id, rest];
    }),
  );
}

/**
 * The OpenAPI 3.1 description of /api, generated from the endpoint table: what /api/openapi.json serves.
 * Built once per call; the server builds it once at start.
 */
export function createOpenApiDocument() {
  const paths: Record<string, Record<string, ReturnType<typeof operation>>> = {};
  for (const endpoint of Object.values(endpoints) as Endpoint[])
    (paths[endpoint.path] ??= {})[endpoint.method] = operation(endpoint);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse API',
      version: '0.1.0',
      description:
        'The product API. Every endpoint but this description needs an access token from the configured provider (Authorization: Bearer); /usage needs the admin role. Every error answer is an Error: a stable code and a sentence.',
    },
    servers: [{ url: '/api' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: components(),
    },
  };
}

export type OpenApiDocument = ReturnType<typeof createOpenApiDocument>;
