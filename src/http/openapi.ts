import type { SwaggerOptions } from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { ErrorBody } from './errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { API_TAGS } from './openapi.tags.ts';
import { markRoutesPublic } from './security.ts';

/**
 * The API description is generated from the route schemas, never kept by hand: `/openapi.json` and the docs
 * page at `/docs`. The version is the interface version of SPEC.md.
 */
export const API_VERSION = '1.0.4';

/** What the routes of a cluster's operator and agent declare: their own credential, in `Authorization`. */
export const OPERATOR_SECURITY = [{ OperatorAuth: [] }];

/** What the generator reads of a route (the fields @fastify/swagger's dynamic mode reads). */
type DocumentedRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'> & { links?: unknown };

/**
 * The routes the API description is generated from, recorded as they are registered. The generator itself
 * (@fastify/swagger, and the documentation page's @fastify/swagger-ui, with YAML and static-file serving behind them)
 * is loaded on the first request for a document, not at start: about 40 ms of every start for pages most processes
 * never serve (docs/decisions.md, "Runtime").
 */
export interface OpenApiRoutes {
  readonly routes: DocumentedRoute[];
}

/** Must run before any route is registered: it records routes as they are added. HEAD and hidden routes are not described. */
export function recordOpenApiRoutes(app: FastifyTypeBox): OpenApiRoutes {
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD' && (route.schema as { hide?: boolean } | undefined)?.hide !== true) routes.push(route);
  });
  return { routes };
}

const GENERATOR_OPTIONS: SwaggerOptions = {
  // Named schemas ($id) become named components, so generated clients get the reference's type names.
  refResolver: {
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
  openapi: {
    openapi: '3.0.3',
    info: {
      title: 'Slipway API',
      version: API_VERSION,
      description: [
        'Slipway deploys applications, containers, databases, jobs, Helm charts and Terraform services onto your clusters.',
        'The operations below are grouped in the order you meet them: an organization and its people, projects and',
        'environments, the services in them and their deployments, then the infrastructure they run on, billing and the',
        'audit log.',
        '',
        '**Authentication.** Send `Authorization: Bearer <token>` with a token from your identity provider or an API',
        "token (`slw_…`), or `Authorization: Token <API token>`; clusters' agents use their own credential on",
        '`/operator/v1/*`.',
        '',
        '**Errors.** Every error answers `{ status, error, message, request_id, details? }`; `details` names the fields of',
        "a 400. Ids of another organization's resources answer 404, as ids that do not exist do.",
      ].join('\n'),
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or slw_ API token' },
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <API token>' },
        OperatorAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'slwo_ operator credential', description: "A cluster operator's or agent's credential (`/operator/v1/*` only)" },
      },
    },
    security: [{ bearerAuth: [] }, { ApiKeyAuth: [] }],
    // The documentation page groups operations under these, in this order (src/http/openapi.tags.ts).
    tags: API_TAGS.map((tag) => ({ ...tag })),
  },
  transformObject: (document) =>
    'openapiObject' in document
      ? describeSuccesses(keepUsedTags(shareResponseSchema(document.openapiObject as OpenApiShape, 'ErrorBody', ErrorBody)))
      : document.swaggerObject,
};

/**
 * A Fastify instance of its own that holds the recorded routes (their schemas, no handlers, no validation compiled)
 * with the generator and the documentation page: the document and the page are what the generator makes of these
 * routes, exactly as if it had watched the application itself register them.
 */
async function buildDocumentsServer(recorded: OpenApiRoutes): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  const documents = Fastify({ logger: false });
  documents.setValidatorCompiler(() => () => true);
  documents.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await documents.register(swagger, GENERATOR_OPTIONS);
  const describedOnly = () => undefined;
  for (const route of recorded.routes) {
    documents.route({ method: route.method, url: route.url, schema: route.schema, config: route.config, exposeHeadRoute: false, handler: describedOnly, ...(route.links === undefined ? {} : { links: route.links }) } as RouteOptions);
  }
  await documents.register(swaggerUi, { routePrefix: DOCS_PREFIX });
  await documents.ready();
  return documents;
}

const DOCS_PREFIX = '/docs';
/** Headers of the documents server's answer that belong to its own connection, not to the answer passed on. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

interface OpenApiShape {
  paths?: Record<
    string,
    Record<string, { tags?: string[]; responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
  tags?: { name: string }[];
}

/** What the generator writes for a response whose schema has no description of its own. */
const GENERATED_DESCRIPTION = 'Default Response';
/** What a success status means, for the responses whose routes say nothing more (errors say it in errors.ts). */
const SUCCESS_MEANING: Record<string, string> = {
  '200': 'Success.',
  '201': 'Created: the new resource.',
  '202': 'Accepted: the work is queued and carried out in the background.',
  '204': 'Done; no body.',
};

function describeSuccesses(document: OpenApiShape): OpenApiShape {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const meaning = SUCCESS_MEANING[status];
        if (meaning !== undefined && response.description === GENERATED_DESCRIPTION) response.description = meaning;
      }
    }
  }
  return document;
}

/**
 * The tag list names groups ahead of their routes (src/http/openapi.tags.ts); the documentation page would show a
 * named group with no operation as an empty section, so the document lists only the tags some operation carries.
 */
function keepUsedTags(document: OpenApiShape): OpenApiShape {
  const used = new Set(Object.values(document.paths ?? {}).flatMap((operations) => Object.values(operations).flatMap((operation) => operation.tags ?? [])));
  if (document.tags !== undefined) document.tags = document.tags.filter((tag) => used.has(tag.name));
  return document;
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

/** `/openapi.json` and the documentation pages under `/docs`, public; the documents server is built on first use. */
export async function registerOpenApiDocuments(app: FastifyTypeBox, recorded: OpenApiRoutes): Promise<void> {
  let documentsServer: Promise<FastifyInstance> | undefined;
  const documents = () => (documentsServer ??= buildDocumentsServer(recorded));
  app.addHook('onClose', async () => {
    if (documentsServer !== undefined) await (await documentsServer).close();
  });
  await app.register(async (docs) => {
    markRoutesPublic(docs);
    docs.get('/openapi.json', { schema: { hide: true } }, async () => (await documents()).swagger());
    // Always a GET: for a HEAD, Fastify's own HEAD route runs this handler and drops the body it sends.
    const passOn = async (request: FastifyRequest, reply: FastifyReply) => {
      const answer = await (await documents()).inject({ method: 'GET', url: request.url, headers: request.headers });
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !CONNECTION_HEADERS.has(name)) reply.header(name, value);
      }
      reply.code(answer.statusCode);
      return answer.rawPayload.length === 0 ? reply.send() : reply.send(answer.rawPayload);
    };
    docs.get(DOCS_PREFIX, { schema: { hide: true } }, passOn);
    docs.get(`${DOCS_PREFIX}/*`, { schema: { hide: true } }, passOn);
  });
}
