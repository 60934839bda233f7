import { randomUUID } from 'node:crypto';
import Fastify, { errorCodes, LogController, type FastifyRequest, type FastifyServerOptions, type RouteOptions } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { TOKEN_PREFIXES } from '../auth/tokens.ts';
import type { LogFormat, LogLevel } from '../config.ts';
import { AppError } from '../lib/errors.ts';
import { handleError, sendAppError } from './errors.ts';
import { prettyLogStream } from './pretty-logs.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { createSchemaCompilers } from './validation.ts';

/**
 * The Fastify instance every route lives on, with the plumbing no route should repeat: request ids (taken from a
 * well-formed incoming `X-Request-Id`, else a fresh uuid, and echoed on every answer), strict validation, the
 * one error body for every error status, 404 for unknown paths and 405 (with `Allow`) for a known path asked
 * with a method it does not serve.
 */
export interface HttpServerOptions {
  logLevel: LogLevel;
  /** `json` or `pretty` (http/pretty-logs.ts); unset: pretty when the logs go to a terminal, JSON otherwise. */
  logFormat?: LogFormat | undefined;
  /** A pino destination for the logs (tests pass a stream to read them); stdout otherwise. */
  logStream?: NodeJS.WritableStream;
  bodyLimit?: number;
}

/** A (method, path) pair the server answers, as registered (`/organization/:organizationId`). */
export interface RegisteredRoute {
  method: HTTPMethod;
  url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Every route registered anywhere on the server, including ones the API description hides and the HEAD
     * routes Fastify adds for GETs: what the route-security test walks, so a new module is covered without a
     * hand-kept list.
     */
    registeredRoutes(): readonly RegisteredRoute[];
    /** Compiles every route schema now instead of at its first request (see http/validation.ts). */
    compileSchemasNow(): void;
  }
}

/**
 * An operation whose body holds only optional fields (a deploy's git_commit_id, …) takes a request without any body
 * as the empty object: the reference defines no body for most of them, and clients send none. Only such routes get
 * the hook; elsewhere an absent body stays absent, and a route that needs one answers 400.
 */
function acceptAbsentOptionalBody(route: RouteOptions): void {
  const body = (route.schema as { body?: { type?: unknown; required?: unknown[] } } | undefined)?.body;
  if (body?.type !== 'object' || (body.required?.length ?? 0) > 0) return;
  const hooks = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
  route.preValidation = [
    ...hooks,
    async (request: FastifyRequest) => {
      request.body ??= {};
    },
  ];
}

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const BODY_LIMIT = 1024 * 1024;

/**
 * Where pino writes: JSON to the given stream or to stdout (pino's own fast path), or, for a person, the pretty lines
 * (pretty-logs.ts) — asked for with SLIPWAY_LOG_FORMAT=pretty, or by default when the logs go to a terminal.
 */
function logDestination(options: HttpServerOptions): { write(line: string): void } | undefined {
  const destination = options.logStream ?? process.stdout;
  const terminal = 'isTTY' in destination && destination.isTTY === true;
  const format = options.logFormat ?? (terminal ? 'pretty' : 'json');
  return format === 'pretty' ? prettyLogStream(destination) : options.logStream;
}

function loggerOptions(options: HttpServerOptions): FastifyServerOptions['logger'] {
  const stream = logDestination(options);
  return {
    level: options.logLevel,
    ...(stream === undefined ? {} : { stream }),
    // Credentials never reach a log line, whatever a future serializer adds.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.password'], censor: '[redacted]' },
    serializers: {
      // Fastify's own request fields, with the credentials a query string may carry kept out (redactedRequestUrl).
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactedRequestUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        };
      },
    },
  };
}

/**
 * Query parameters whose values are credentials by their name alone (compared case-insensitively): what clients and
 * proxies commonly put a secret in, and `signature`, since a logged signature of a signed link is a working link.
 */
const CREDENTIAL_PARAMETERS = new Set(['token', 'access_token', 'password', 'secret', 'api_key', 'key', 'signature']);
const TOKEN_PREFIX_VALUES = Object.values(TOKEN_PREFIXES);
const REDACTED = '[redacted]';

function decodedQueryPart(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/** Whether a decoded query name or value holds one of Slipway's own tokens, recognised by its kind prefix. */
function holdsSlipwayToken(value: string): boolean {
  const lower = value.toLowerCase();
  return TOKEN_PREFIX_VALUES.some((prefix) => lower.includes(prefix));
}

/**
 * The request URL as it is logged. A credential sent in a query string — by a client that knows no better, or by
 * mistake — must not outlive the request in a log line, so the value of a parameter named like a credential, and any
 * value holding one of our tokens (`slw_`, `slwp_`, `slwe_`, `slwo_`, whatever the parameter is called; a bare
 * `?slw_…` too), is replaced with `[redacted]`. Names and values are compared decoded, so percent-encoding does not
 * hide them; the path and every other parameter stay as sent, so the line still says what was asked.
 */
export function redactedRequestUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const parameters = url
    .slice(queryStart + 1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      const rawName = equals === -1 ? parameter : parameter.slice(0, equals);
      const name = decodedQueryPart(rawName);
      // A token sent as a name (`?slw_…`) goes whole: nothing of the parameter is left to tell.
      if (holdsSlipwayToken(name)) return REDACTED;
      if (equals === -1) return parameter;
      const secret = CREDENTIAL_PARAMETERS.has(name.toLowerCase()) || holdsSlipwayToken(decodedQueryPart(parameter.slice(equals + 1)));
      return secret ? `${rawName}=${REDACTED}` : parameter;
    });
  return `${url.slice(0, queryStart)}?${parameters.join('&')}`;
}

export function createHttpServer(options: HttpServerOptions): FastifyTypeBox {
  const compilers = createSchemaCompilers();
  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: compilers.serializerFactory } },
    logger: loggerOptions(options),
    bodyLimit: options.bodyLimit ?? BODY_LIMIT,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      // A random uuid: the id names one request and orders nothing, so the row ids' uuid v7 (a clock read and more
      // work, several µs) buys nothing here, while Node's randomUUID draws from a cached entropy pool.
      return typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Errors raised before routing (a badly percent-encoded URL, an over-long path parameter) get the same error
    // body and request id as every other error instead of Fastify's own shape.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      handleError(error, request, reply);
    },
    // Paths are matched exactly as SPEC.md writes them; `/organization/` is not `/organization`.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only request media type; a body in anything else (text/plain included, which Fastify parses by
  // default) is a 415. An empty body is no body whatever its content type: generated clients send
  // `application/json`, or `application/x-www-form-urlencoded` with nothing, to operations that take no body
  // (deploy, accept an invitation, …), and those calls go through; a route that needs a body then answers 400.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    // Fastify's default parser answers through `done`; its declared return type is a promise nobody needs to await.
    void parseJson(request, text, done);
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    if (body.length === 0) done(null, undefined);
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
  });
  app.addHook('onRoute', acceptAbsentOptionalBody);

  app.setValidatorCompiler(compilers.validatorCompiler);
  app.decorate('compileSchemasNow', () => compilers.compileSchemasNow());
  app.setErrorHandler(handleError);

  // Callback style: an async hook costs every request a promise and a microtask turn for one header.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  // Every registered (method, path) pair, to tell "no such path" (404) from "not with this method" (405). The router
  // that matches a path against them is built at the first unmatched request, not with every route at start.
  const registered: RegisteredRoute[] = [];
  const seen = new Set<string>();
  let known: { router: ReturnType<typeof FindMyWay>; methods: HTTPMethod[] } | undefined;
  app.addHook('onRoute', (route) => {
    known = undefined;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
    for (const method of methods) {
      const key = `${method} ${route.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      registered.push({ method, url: route.url });
    }
  });
  app.decorate('registeredRoutes', () => [...registered]);

  const knownRoutes = (): NonNullable<typeof known> => {
    if (known === undefined) {
      const router = FindMyWay();
      for (const route of registered) router.on(route.method, route.url, () => undefined);
      known = { router, methods: [...new Set(registered.map((route) => route.method))] };
    }
    return known;
  };

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? request.url;
    const { router, methods } = knownRoutes();
    const allowed = methods.filter((method) => router.find(method, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendAppError(reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`));
    }
    return sendAppError(reply, new AppError('not_found', `no operation at ${request.method} ${path}`));
  });

  return app as unknown as FastifyTypeBox;
}
