import type { FastifyRequest } from 'fastify';
import { openSpan, tracingActive, type OpenSpan } from '../lib/tracing.ts';
import type { FastifyTypeBox } from './fastify.types.ts';

/**
 * A span per HTTP request (docs/operations.md, "Traces"), installed only while tracing is on: off, no hook exists
 * and a request pays nothing. The span opens in onRequest, continuing the caller's trace when the request carries a
 * `traceparent`, and ends with the answer. It is named by the route's template (`POST /environment/:environmentId/deploy`),
 * never the path: ids stay out of span names, and a path or query can hold what must not be exported (a signed
 * download's token). Its attributes are the semantic conventions' method, route and status, nothing of the body or
 * the headers.
 *
 * The span is made active for the handler, so the rows it writes (a job, through jobs/job-queue.ts) carry its trace:
 * entered at onRequest and again at preValidation, because the body is read from stream events that run outside the
 * context onRequest entered; from preValidation on, every hook and the handler continue in it.
 */
export function installRequestTracing(app: FastifyTypeBox): void {
  if (!tracingActive()) return;
  const spans = new WeakMap<FastifyRequest, OpenSpan>();

  function finish(request: FastifyRequest, statusCode: number | undefined): void {
    const span = spans.get(request);
    if (span === undefined) return;
    spans.delete(request);
    if (statusCode === undefined) {
      span.fail('aborted');
    } else {
      span.setAttributes({ 'http.response.status_code': statusCode });
      // Server spans count 5xx as errors, not 4xx (the caller's mistake); error.type is then the status.
      if (statusCode >= 500) span.fail(String(statusCode));
    }
    span.end();
  }

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const span = openSpan(route === undefined ? request.method : `${request.method} ${route}`, {
      role: 'server',
      headers: request.headers,
      attributes: { 'http.request.method': request.method, ...(route === undefined ? {} : { 'http.route': route }) },
    });
    spans.set(request, span);
    span.run(done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const span = spans.get(request);
    if (span === undefined) done();
    else span.run(done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, undefined);
    done();
  });
}
