import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Deployment rules (docs/deployment-rules.md). A project's rules are tried in priority order when an environment is
 * created; their names are unique per project (by name key), and a rule goes with its project or with the cluster it
 * places environments on. Each environment has at most one environment rule (created with the environment, or with
 * defaults when first read), which goes with it. The index on `auto_stop` serves the schedule's sweep,
 * which only reads rules that stop and start their environment.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('project_deployment_rules')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('auto_stop', 'integer', (c) => c.notNull())
    .addColumn('timezone', 'varchar(64)', (c) => c.notNull())
    .addColumn('start_time', 'varchar(5)', (c) => c.notNull())
    .addColumn('stop_time', 'varchar(5)', (c) => c.notNull())
    .addColumn('weekdays', 'varchar(80)', (c) => c.notNull())
    .addColumn('wildcard', 'text', (c) => c.notNull())
    .addColumn('priority_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('project_deployment_rules_name', ['project_id', 'name_key'])
    .execute();
  await db.schema.createIndex('project_deployment_rules_cluster').on('project_deployment_rules').column('cluster_id').execute();

  await db.schema
    .createTable('environment_deployment_rules')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('environment_id', 'varchar(36)', (c) => c.notNull().unique().references('environments.id').onDelete('cascade'))
    .addColumn('auto_stop', 'integer', (c) => c.notNull())
    .addColumn('on_demand_preview', 'integer', (c) => c.notNull())
    .addColumn('auto_preview', 'integer', (c) => c.notNull())
    .addColumn('timezone', 'varchar(64)', (c) => c.notNull())
    .addColumn('start_time', 'varchar(5)', (c) => c.notNull())
    .addColumn('stop_time', 'varchar(5)', (c) => c.notNull())
    .addColumn('weekdays', 'varchar(80)', (c) => c.notNull())
    .addColumn('schedule_applied_until', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('environment_deployment_rules_auto_stop').on('environment_deployment_rules').column('auto_stop').execute();
}
