import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
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
  });
}

export async function registerOpenApiDocuments(app: FastifyTypeBox): Promise<void> {
  await app.register(async (docs) => {
    markRoutesPublic(docs);
    docs.get('/openapi.json', { schema: { hide: true } }, async () => docs.swagger());
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });
}
