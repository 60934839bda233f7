import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorBody } from './errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { markRoutesPublic } from './security.ts';

/**
 * The API description is generated from the route schemas, never kept by hand: `/openapi.json` and the docs
 * page at `/docs`. The version is the interface version of SPEC.md.
 */
export const API_VERSION = '1.0.4';

/** What the routes of a cluster's operator and agent declare: their own credential, in `Authorization`. */
export const OPERATOR_SECURITY = [{ OperatorAuth: [] }];

/** Must run before any route is registered: the generator collects routes as they are added. */
export async function registerOpenApiGenerator(app: FastifyTypeBox): Promise<void> {
  await app.register(swagger, {
    // Named schemas ($id) become named components, so generated clients get the reference's type names.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Slipway API',
        version: API_VERSION,
        description: 'Self-hostable deployment platform control plane.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or slw_ API token' },
          ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <API token>' },
          OperatorAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'slwo_ operator credential', description: "A cluster operator's or agent's credential (`/operator/v1/*` only)" },
        },
      },
      security: [{ bearerAuth: [] }, { ApiKeyAuth: [] }],
    },
    transformObject: (document) =>
      'openapiObject' in document ? shareResponseSchema(document.openapiObject as OpenApiShape, 'ErrorBody', ErrorBody) : document.swaggerObject,
  });
}

interface OpenApiShape {
  paths?: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

/** JSON with object keys in one order, so two schemas written in different key orders compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner,
  );
}

/**
 * The generator inlines a route's top-level response schemas even when they are named: the error body would be
 * written out in every error response of every operation (1,782 copies, half of the document, and of every client
 * generated from it). Each response whose schema is exactly `schema` becomes a reference to one component instead.
 */
function shareResponseSchema(document: OpenApiShape, name: string, schema: object): OpenApiShape {
  const { $id: _id, ...named } = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  const wanted = canonicalJson(named);
  const reference = { $ref: `#/components/schemas/${name}` };
  let shared = false;
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) {
          if (media.schema !== undefined && canonicalJson(media.schema) === wanted) {
            media.schema = reference;
            shared = true;
          }
        }
      }
    }
  }
  if (shared) document.components = { ...document.components, schemas: { ...document.components?.schemas, [name]: named } };
  return document;
}

export async function registerOpenApiDocuments(app: FastifyTypeBox): Promise<void> {
  await app.register(async (docs) => {
    markRoutesPublic(docs);
    docs.get('/openapi.json', { schema: { hide: true } }, async () => docs.swagger());
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });
}
