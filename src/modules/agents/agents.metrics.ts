import type { Kysely } from 'kysely';
import { Gauge, Histogram } from 'prom-client';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { LONG_WORK_BUCKETS_SECONDS, type MetricsRegistry } from '../../lib/metrics-registry.ts';

/**
 * The agents' series: how long ago each cluster's agent last heartbeated (read from `agent_presence` at scrape time,
 * one row per cluster whose agent ever reported), and how long agent tasks take from their dispatch to the report
 * that settles them, by subject, action and outcome (counted by the replica that received the settling report).
 */
export interface AgentTaskMetrics {
  /** `subject`: ENVIRONMENT or SERVICE; `action`: deploy, stop, …; `outcome`: SUCCEEDED, FAILED or CANCELED. */
  taskSettled(subject: string, action: string, outcome: string, seconds: number): void;
}

export function registerAgentMetrics(registry: MetricsRegistry, db: Kysely<DB>, clock: Clock): AgentTaskMetrics {
  const durations = new Histogram({
    name: 'slipway_agent_task_duration_seconds',
    help: "How long an agent task took from its dispatch into the cluster's mailbox to the report that settled it, by subject, action and outcome.",
    labelNames: ['subject', 'action', 'outcome'],
    buckets: LONG_WORK_BUCKETS_SECONDS,
    registers: [registry],
  });
  new Gauge({
    name: 'slipway_agent_heartbeat_age_seconds',
    help: "Seconds since each cluster's agent last heartbeated, by cluster id (agents beat every 15 s unless configured otherwise).",
    labelNames: ['cluster_id'],
    registers: [registry],
    async collect() {
      const rows = await db.selectFrom('agent_presence').select(['cluster_id', 'last_seen_at']).execute();
      const now = clock.now().getTime();
      // Clusters deleted since the last scrape (their presence goes with them) stop being reported.
      this.reset();
      for (const row of rows) this.set({ cluster_id: row.cluster_id }, Math.max(0, (now - Date.parse(row.last_seen_at)) / 1000));
    },
  });
  return {
    taskSettled(subject, action, outcome, seconds) {
      durations.observe({ subject, action, outcome }, seconds);
    },
  };
}
