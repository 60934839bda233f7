import type { Database } from './db/db.client.ts';
import { registerJobMetrics } from './jobs/job-metrics.ts';
import type { Clock } from './lib/clock.ts';
import { collectProcessMetrics, createMetricsRegistry } from './lib/metrics-registry.ts';
import { registerAgentMetrics } from './modules/agents/agents.metrics.ts';
import { registerDeploymentMetrics } from './modules/deployments/deployments.metrics.ts';

/**
 * The series of a process that exposes its metrics (SLIPWAY_METRICS_TOKEN or SLIPWAY_METRICS_ADDRESS;
 * docs/operations.md, "What to watch: metrics"): one registry, the runtime's series, and the recorders app.ts hands
 * the job worker, the agents module and the deployments module. app.ts imports this file only then: prom-client is
 * not loaded, and nothing is recorded, by a process whose metrics nobody can read (start-up time: docs/decisions.md,
 * "Runtime").
 */
export function createAppMetrics(database: Pick<Database, 'db'>, clock: Clock) {
  const registry = createMetricsRegistry();
  collectProcessMetrics(registry);
  return {
    registry,
    jobs: registerJobMetrics(registry, database.db, clock),
    agents: registerAgentMetrics(registry, database.db, clock),
    deployments: registerDeploymentMetrics(registry),
  };
}

export type AppMetrics = ReturnType<typeof createAppMetrics>;
