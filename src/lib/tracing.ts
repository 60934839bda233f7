import type * as OpenTelemetryApi from '@opentelemetry/api';

/**
 * Slipway's side of OpenTelemetry tracing (docs/operations.md, "Traces"): what the HTTP plumbing, the job worker and
 * the agent runtime call to open their spans, and what the job queue and the agents module call to carry a trace
 * across the rows they write — a W3C `traceparent` stored with a job, then with the agent task its run dispatches —
 * so that one trace covers a request, the jobs it asked for and the agents' work on them.
 *
 * Tracing is off unless an OTLP endpoint is configured (config.ts). Off, nothing of OpenTelemetry is loaded, not even
 * its API (tens of milliseconds of a start), and every call here costs one comparison: `startTracing` loads the SDK
 * (tracing.sdk.ts) and binds the API below. The trace itself travels in the API's context (AsyncLocalStorage, set up
 * by the SDK), never in a variable of ours: what is bound here is only the API, once per process.
 */

type Api = typeof OpenTelemetryApi;

let bound: { api: Api; tracer: OpenTelemetryApi.Tracer } | undefined;

/** Where the traces go and what the process is called in them (config.ts `tracing`). */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  tracesUrl: string;
  /** The `service.name` of every span. */
  serviceName: string;
  /** The `service.version`. */
  serviceVersion: string;
}

export interface RunningTracing {
  /** Exports the spans still buffered and stops; spans opened afterwards go nowhere. */
  shutdown(): Promise<void>;
}

/** Span attributes: never a secret, a body or a variable's value (docs/operations.md, "Traces"). */
export type SpanAttributes = Record<string, string | number | boolean>;

export type SpanRole = 'server' | 'consumer' | 'internal';

export interface SpanOptions {
  /** The W3C traceparent this span continues (stored with a job or a task); a trace of its own when absent or unreadable. */
  parent?: string | null | undefined;
  /** Incoming HTTP headers to continue the trace of (traceparent, tracestate, by the SDK's propagators); used when `parent` is absent. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  role?: SpanRole;
  attributes?: SpanAttributes;
}

/** A span opened by `openSpan`, to be ended by its opener. */
export interface OpenSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed, with the kind of error (`error.type`) and no message: messages may quote what they failed on. */
  fail(errorType: string): void;
  /** Runs `work` (and everything it starts) with this span active: rows written meanwhile carry its trace. */
  run<T>(work: () => T): T;
  end(): void;
}

const NO_SPAN: OpenSpan = {
  setAttributes: () => undefined,
  fail: () => undefined,
  run: (work) => work(),
  end: () => undefined,
};

/** Starts the SDK and binds the API; call once, before the app is built. */
export async function startTracing(settings: TracingSettings): Promise<RunningTracing> {
  const { startTracingSdk } = await import('./tracing.sdk.ts');
  const started = startTracingSdk(settings);
  bound = { api: started.api, tracer: started.api.trace.getTracer('slipway', settings.serviceVersion) };
  return {
    async shutdown() {
      bound = undefined;
      await started.shutdown();
    },
  };
}

/** Whether spans are recorded in this process: the HTTP plumbing installs its hooks only then. */
export function tracingActive(): boolean {
  return bound !== undefined;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a stored traceparent names, undefined when it is not a valid version-00 one. */
function spanContextOf(api: Api, traceparent: string): OpenTelemetryApi.SpanContext | undefined {
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const context = { traceId: match[1] ?? '', spanId: match[2] ?? '', traceFlags: Number.parseInt(match[3] ?? '0', 16) & 1, isRemote: true };
  return api.isSpanContextValid(context) ? context : undefined;
}

/** A W3C traceparent of the span active now, for the row being written to carry on; undefined when none is. */
export function activeTraceparent(): string | undefined {
  if (bound === undefined) return undefined;
  const span = bound.api.trace.getActiveSpan()?.spanContext();
  if (span === undefined || !bound.api.isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`;
}

function parentContext(api: Api, options: SpanOptions): OpenTelemetryApi.Context {
  // Always from the root: a job run woken by a request, or a task leased in a request's context, belongs to its own
  // stored trace (or to none), never to the request that happened to start the loop.
  if (options.parent !== undefined && options.parent !== null) {
    const remote = spanContextOf(api, options.parent);
    return remote === undefined ? api.ROOT_CONTEXT : api.trace.setSpanContext(api.ROOT_CONTEXT, remote);
  }
  if (options.headers !== undefined) return api.propagation.extract(api.ROOT_CONTEXT, options.headers);
  return api.ROOT_CONTEXT;
}

function kindOf(api: Api, role: SpanRole | undefined): OpenTelemetryApi.SpanKind {
  if (role === 'server') return api.SpanKind.SERVER;
  if (role === 'consumer') return api.SpanKind.CONSUMER;
  return api.SpanKind.INTERNAL;
}

/** Opens a span the caller ends (an HTTP request's onRequest/onResponse pair); a no-op while tracing is off. */
export function openSpan(name: string, options: SpanOptions = {}): OpenSpan {
  if (bound === undefined) return NO_SPAN;
  const { api, tracer } = bound;
  const span = tracer.startSpan(name, { kind: kindOf(api, options.role), ...(options.attributes === undefined ? {} : { attributes: options.attributes }) }, parentContext(api, options));
  const active = api.trace.setSpan(api.ROOT_CONTEXT, span);
  return {
    setAttributes: (attributes) => void span.setAttributes(attributes),
    fail(errorType) {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    },
    run: (work) => api.context.with(active, work),
    end: () => span.end(),
  };
}

/** The kind of an error, for `error.type`: its class (`AppError`, `TaskCanceled`), never its message. */
export function errorTypeOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  return error.name !== 'Error' ? error.name : error.constructor.name;
}

/** Runs `work` in a span of its own, ended when it settles (failed when it throws); `work` itself while tracing is off. */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: OpenSpan) => Promise<T>): Promise<T> {
  if (bound === undefined) return work(NO_SPAN);
  const span = openSpan(name, options);
  try {
    return await span.run(() => work(span));
  } catch (error) {
    span.fail(errorTypeOf(error));
    throw error;
  } finally {
    span.end();
  }
}

/** Marks the active span failed (a job run that failed without throwing out of its span). */
export function failActiveSpan(error: unknown): void {
  if (bound === undefined) return;
  const span = bound.api.trace.getActiveSpan();
  span?.setAttribute('error.type', errorTypeOf(error));
  span?.setStatus({ code: bound.api.SpanStatusCode.ERROR });
}

/** Runs `work` (and everything it starts) outside any trace, whatever the calling context carries. */
export function outsideTrace<T>(work: () => T): T {
  if (bound === undefined) return work();
  return bound.api.context.with(bound.api.ROOT_CONTEXT, work);
}
