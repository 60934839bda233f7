import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The series a process exposes at /metrics (docs/operations.md, "What to watch: metrics"), in Prometheus's text format.
 * One registry per built app, never prom-client's global one: tests build several apps in one process, and each must
 * count only its own. Every layer defines its own series on it (http/metrics.ts, jobs/job-metrics.ts, the agents and
 * deployments modules' `*.metrics.ts`); modules receive a narrow recorder made from it, from app.ts. Only
 * app.metrics.ts, loaded when the metrics are exposed, imports this file's values: prom-client stays unloaded otherwise.
 *
 * Naming follows Prometheus's conventions: the `slipway_` prefix, the unit as a suffix (`_seconds`), counters ending
 * in `_total`, and labels of bounded cardinality — route templates and kinds, never raw URLs or a tenant's ids (the
 * one exception is the cluster id of an agent's heartbeat age: one series per cluster).
 */
export type MetricsRegistry = Registry;

export function createMetricsRegistry(): MetricsRegistry {
  return new Registry();
}

/**
 * prom-client's process and runtime series (CPU seconds, resident memory, heap, event-loop lag, GC, open file
 * descriptors) under their standard names (`process_…`, `nodejs_…`), which the common Node.js dashboards expect. They
 * start an event-loop delay monitor and a GC observer that live as long as the process.
 */
export function collectProcessMetrics(registry: MetricsRegistry): void {
  collectDefaultMetrics({ register: registry });
}

/** How long a job run or an agent task takes, in seconds: from a fraction of a second to half an hour. */
export const LONG_WORK_BUCKETS_SECONDS = [0.05, 0.1, 0.5, 1, 2.5, 5, 15, 30, 60, 120, 300, 600, 1800];
