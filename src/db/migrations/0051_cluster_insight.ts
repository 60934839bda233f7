import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * What Slipway knows of a cluster beyond its settings (docs/cluster-insight.md):
 *
 * - `cluster_kubeconfigs`: the kubeconfig given for a self-managed cluster (editClusterKubeconfig), sealed with the
 *   installation's secret key and bound to its cluster; one per cluster.
 * - `cluster_insight_events`: the Kubernetes events of Slipway's namespaces as the cluster's agent reports them, one row
 *   per event (the agent's `uid`), updated as the event repeats (count, last occurrence).
 * - `cluster_insight_logs`: the cluster's own log lines: its deploys as the worker ran them, and what its agent reports.
 * - `cluster_operator_targets`: the operator's attachment and the versions it should run (attachClusterOperator,
 *   updateClusterOperator).
 *
 * Events and log lines are bounded per cluster (the service keeps the newest rows, docs/cluster-insight.md,
 * "Retention"); the index on (cluster_id, at) serves both the reads and that pruning. Every row goes with its cluster.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('cluster_kubeconfigs')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('kubeconfig_sealed', 'text', (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cluster_insight_events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('uid', 'varchar(128)', (c) => c.notNull())
    .addColumn('kind', 'varchar(128)', (c) => c.notNull())
    .addColumn('namespace', 'varchar(253)', (c) => c.notNull())
    .addColumn('name', 'varchar(253)', (c) => c.notNull())
    .addColumn('reason', 'varchar(253)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('reporting_component', 'varchar(253)', (c) => c.notNull())
    .addColumn('node_name', 'varchar(253)')
    .addColumn('pod_name', 'varchar(253)')
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('first_occurrence', types.timestamp, (c) => c.notNull())
    .addColumn('last_occurrence', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('cluster_insight_events_uid', ['cluster_id', 'uid'])
    .execute();
  await db.schema.createIndex('cluster_insight_events_last').on('cluster_insight_events').columns(['cluster_id', 'last_occurrence']).execute();

  await db.schema
    .createTable('cluster_insight_logs')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('at', types.timestamp, (c) => c.notNull())
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('step', 'varchar(64)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cluster_insight_logs_at').on('cluster_insight_logs').columns(['cluster_id', 'at']).execute();

  await db.schema
    .createTable('cluster_operator_targets')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('attached_at', types.timestamp, (c) => c.notNull())
    .addColumn('desired_image_version', 'varchar(128)')
    .addColumn('desired_chart_version', 'varchar(128)')
    .addColumn('execution_id', 'varchar(36)')
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
}
