import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The platform configuration of a cluster (one per cluster): the template release it is bound to, in the cluster
 * context it was validated for, with its layer selections, profile values and customer-provided runtime inputs.
 * Values of sensitive fields are not in the JSON columns: they are sealed together in `sensitive_envelope`
 * (lib/secret-box.ts, bound to the row). The row goes with its cluster and with its organization.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('cluster_platform_configurations')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('template_key', 'text', (c) => c.notNull())
    .addColumn('template_version', 'text', (c) => c.notNull())
    .addColumn('cluster_mode', 'varchar(24)', (c) => c.notNull())
    .addColumn('cloud_provider', 'varchar(16)', (c) => c.notNull())
    .addColumn('layer_selections', types.json, (c) => c.notNull())
    .addColumn('managed_config', types.json, (c) => c.notNull())
    .addColumn('customer_provided_inputs', types.json, (c) => c.notNull())
    .addColumn('sensitive_envelope', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cluster_platform_configurations_organization').on('cluster_platform_configurations').column('organization_id').execute();
}
