import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Cluster settings (docs/cluster-network.md): one row per cluster holding what the cluster-settings module adds to it
 * (routing table, DNS provider with its sealed credentials, cloud provider binding, the EKS Anywhere commit, the
 * Karpenter Fargate subnets), and the cluster analyses with the lines they wrote. Everything goes with its cluster.
 *
 * The cloud provider binding references its credential without a cascade (NO ACTION, checked at the end of the
 * statement): deleting a credential a cluster is bound to is refused, while an organization's deletion, which removes
 * the cluster and the credential in one statement, goes through.
 *
 * `active_cluster_id` is the cluster's id while an analysis is PENDING or RUNNING and null afterwards: its unique index
 * keeps one running analysis per cluster on both databases, so two concurrent starts cannot both be accepted.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('cluster_settings')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('routing_table', types.json)
    .addColumn('dns_provider', types.json)
    .addColumn('dns_secret_envelope', 'text')
    .addColumn('cloud_provider', 'varchar(16)')
    .addColumn('cloud_credentials_id', 'varchar(36)', (c) => c.references('cloud_credentials.id'))
    .addColumn('cloud_region', 'varchar(64)')
    .addColumn('eks_anywhere_commit_id', 'varchar(64)')
    .addColumn('karpenter_fargate_subnets', types.json)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cluster_settings_cloud_credentials').on('cluster_settings').column('cloud_credentials_id').execute();

  await db.schema
    .createTable('cluster_analyses')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('output_format', 'varchar(8)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('parameters', types.json, (c) => c.notNull())
    .addColumn('triggered_by', 'text', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('active_cluster_id', 'varchar(36)', (c) => c.unique())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cluster_analyses_cluster').on('cluster_analyses').columns(['cluster_id', 'created_at']).execute();

  await db.schema
    .createTable('cluster_analysis_logs')
    .addColumn('analysis_id', 'varchar(36)', (c) => c.notNull().references('cluster_analyses.id').onDelete('cascade'))
    .addColumn('line_order', 'integer', (c) => c.notNull())
    .addColumn('timestamp', types.timestamp, (c) => c.notNull())
    .addColumn('level', 'varchar(8)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('cluster_analysis_logs_pk', ['analysis_id', 'line_order'])
    .execute();
}
