import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { nodeHttp } from '../lib/node-http.ts';
import type { MetricsRegistry } from '../lib/metrics-registry.ts';
import { HTTP_STATUS, statusOf } from './errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';

/**
 * The HTTP side of the metrics (docs/operations.md, "What to watch: metrics"): every answer counted and timed by
 * method, route template and status code, and the series of the process served in Prometheus's text format — on the
 * API port at `GET /metrics` behind a bearer token of its own (SLIPWAY_METRICS_TOKEN), and/or on a separate plain
 * listener for a private network (SLIPWAY_METRICS_ADDRESS). With neither, nothing is served and nothing is counted.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the separate metrics listener when SLIPWAY_METRICS_ADDRESS asks for one (once; it closes with the app) and
     * answers its port; undefined without an address. The server calls it after the API listens;
     * MetricsAddressUnusableError when the address cannot be listened on.
     */
    startMetricsListener(): Promise<number | undefined>;
  }
}

const METRICS_PATH = '/metrics';
/** The route label of answers to paths no route serves (404, 405): one value, however many URLs are tried. */
const UNMATCHED_ROUTE = 'unmatched';

/** Upper bounds of the request duration histogram, in seconds. */
const REQUEST_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The answers of one (method, route, status code): a count, their total duration and a count per bucket. */
interface AnswerTally {
  labels: { method: string; route: string; status_code: string };
  count: number;
  sumSeconds: number;
  /** Non-cumulative: index i counts durations in (bound i-1, bound i]; the last index counts those above every bound. */
  buckets: Float64Array;
}

/**
 * Tallies kept by the request path itself and turned into series only when scraped: an answer costs a map lookup by
 * status code and a few additions, no allocation (prom-client's own `observe` hashes its label object on every call).
 * The two series share the tallies: `slipway_http_requests_total` and `slipway_http_request_duration_seconds`.
 */
function createAnswerTallies() {
  const all: AnswerTally[] = [];

  /** The recorder of one route: its tallies by status code, created at the first answer of each status. */
  function forRoute(method: string, route: string): (statusCode: number, seconds: number) => void {
    const byStatus = new Map<number, AnswerTally>();
    return (statusCode, seconds) => {
      let tally = byStatus.get(statusCode);
      if (tally === undefined) {
        tally = { labels: { method, route, status_code: String(statusCode) }, count: 0, sumSeconds: 0, buckets: new Float64Array(REQUEST_BUCKETS_SECONDS.length + 1) };
        byStatus.set(statusCode, tally);
        all.push(tally);
      }
      tally.count += 1;
      tally.sumSeconds += seconds;
      let bucket = 0;
      while (bucket < REQUEST_BUCKETS_SECONDS.length && seconds > (REQUEST_BUCKETS_SECONDS[bucket] ?? Infinity)) bucket += 1;
      tally.buckets[bucket] = (tally.buckets[bucket] ?? 0) + 1;
    };
  }

  // Custom metric objects: prom-client's registry formats whatever `get()` answers in the shape of its own metrics.
  const requests = {
    name: 'slipway_http_requests_total',
    help: `HTTP answers by method, route template (${UNMATCHED_ROUTE} for paths no route serves) and status code.`,
    type: 'counter',
    aggregator: 'sum',
    get: () => ({
      name: requests.name,
      help: requests.help,
      type: requests.type,
      aggregator: requests.aggregator,
      values: all.map((tally) => ({ labels: tally.labels, value: tally.count })),
    }),
  };
  const durations = {
    name: 'slipway_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its answer, by method, route template and status code.',
    type: 'histogram',
    aggregator: 'sum',
    get: () => ({
      name: durations.name,
      help: durations.help,
      type: durations.type,
      aggregator: durations.aggregator,
      values: all.flatMap((tally) => {
        let cumulative = 0;
        const buckets = REQUEST_BUCKETS_SECONDS.map((bound, index) => {
          cumulative += tally.buckets[index] ?? 0;
          return { metricName: `${durations.name}_bucket`, labels: { ...tally.labels, le: bound }, value: cumulative };
        });
        return [
          ...buckets,
          { metricName: `${durations.name}_bucket`, labels: { ...tally.labels, le: '+Inf' }, value: tally.count },
          { metricName: `${durations.name}_sum`, labels: tally.labels, value: tally.sumSeconds },
          { metricName: `${durations.name}_count`, labels: tally.labels, value: tally.count },
        ];
      }),
    }),
  };
  return { forRoute, requests, durations };
}

/**
 * Counts and times every answer of `app`. Call it before any route is registered: each route gets its own onResponse
 * hook (its method and template known when it is registered), and one hook on the server counts what no route
 * served. `reply.elapsedTime` is Fastify's own clock, started when the request arrived.
 */
export function installHttpMetrics(app: FastifyTypeBox, registry: MetricsRegistry): void {
  const tallies = createAnswerTallies();
  // The registry takes any object shaped like its metrics; these are counted by the hooks below, not by prom-client.
  registry.registerMetric(tallies.requests as unknown as Parameters<MetricsRegistry['registerMetric']>[0]);
  registry.registerMetric(tallies.durations as unknown as Parameters<MetricsRegistry['registerMetric']>[0]);

  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const record = new Map(methods.map((method) => [method, tallies.forRoute(method, route.url)]));
    const single = methods.length === 1 ? record.get(methods[0] ?? '') : undefined;
    const hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      (single ?? record.get(request.method))?.(reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    const hooks = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [...hooks, hook];
  });

  const unmatched = new Map<string, (statusCode: number, seconds: number) => void>();
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) {
      let record = unmatched.get(request.method);
      if (record === undefined) {
        record = tallies.forRoute(request.method, UNMATCHED_ROUTE);
        unmatched.set(request.method, record);
      }
      record(reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
}

/** SHA-256 of a token: equal-length values for a constant-time comparison whatever length was presented. */
function digestOf(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * `GET /metrics` on the API port, for a scraper holding `token` (`Authorization: Bearer <token>`; 401 with the error
 * body otherwise). Not an API operation: outside the API description, the rate limit and the audit log (no principal),
 * and its scrapes leave no request log lines.
 */
function registerMetricsRoute(app: FastifyTypeBox, registry: MetricsRegistry, token: string): void {
  const expected = digestOf(token);
  app.get(
    METRICS_PATH,
    { schema: { hide: true }, config: { access: { public: true }, rateLimit: false }, logLevel: 'warn' },
    async (request, reply) => {
      const header = request.headers.authorization ?? '';
      const presented = /^Bearer (.+)$/i.exec(header)?.[1]?.trim() ?? '';
      if (!timingSafeEqual(digestOf(presented), expected)) {
        throw new AppError('unauthenticated', presented === '' ? 'GET /metrics needs the metrics token: Authorization: Bearer <SLIPWAY_METRICS_TOKEN>' : 'the metrics token is not valid');
      }
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );
}

/**
 * Where the series of `registry` are served: `GET /metrics` on the API port behind `token`, and a listener of its own
 * at `address` started by `app.startMetricsListener()`. Neither given (no registry then): the API port has no /metrics
 * route (404), and there is no listener.
 */
export function exposeMetrics(
  app: FastifyTypeBox,
  registry: MetricsRegistry | undefined,
  options: { token?: string | undefined; address?: { host: string; port: number } | undefined },
): void {
  if (registry !== undefined && options.token !== undefined) registerMetricsRoute(app, registry, options.token);
  let listener: Promise<{ port: number; close(): Promise<void> }> | undefined;
  app.decorate('startMetricsListener', async () => {
    if (registry === undefined || options.address === undefined) return undefined;
    listener ??= listenForMetrics(registry, options.address, app.log);
    return (await listener).port;
  });
  app.addHook('onClose', async () => {
    if (listener !== undefined) await (await listener.catch(() => undefined))?.close();
  });
}

/** SLIPWAY_METRICS_ADDRESS could not be listened on; main.ts ends the process with this message. */
export class MetricsAddressUnusableError extends Error {
  constructor(address: string, cause: NodeJS.ErrnoException) {
    const reason = cause.code === 'EADDRINUSE' ? 'is in use' : cause.code === 'EADDRNOTAVAIL' ? 'is not an address of this host' : `cannot be listened on (${cause.code ?? cause.message})`;
    super(`the metrics address ${address} ${reason}: choose another with SLIPWAY_METRICS_ADDRESS`);
    this.name = 'MetricsAddressUnusableError';
  }
}

/** `127.0.0.1:9464`, `[::1]:9464`. */
function printable(address: { host: string; port: number }): string {
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

/**
 * The separate listener: plain HTTP serving only `GET /metrics`, without a token (meant for a private network a
 * Prometheus scrapes), 404 for anything else. Resolves once it listens; the answer closes it.
 */
async function listenForMetrics(
  registry: MetricsRegistry,
  address: { host: string; port: number },
  log: FastifyBaseLogger,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = nodeHttp.createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(statusOf('not_found'), { 'content-type': 'text/plain; charset=utf-8' }).end(`only GET ${METRICS_PATH} is served here\n`);
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(HTTP_STATUS.ok, { 'content-type': registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        log.error({ err: error }, 'reading the metrics failed');
        response.writeHead(statusOf('internal'), { 'content-type': 'text/plain; charset=utf-8' }).end('reading the metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new MetricsAddressUnusableError(printable(address), error)));
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : address.port;
  log.info({ address: printable({ host: address.host, port }) }, 'metrics served');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
