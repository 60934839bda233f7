import type { Kysely } from 'kysely';

/**
 * Which instance printed a log line (the reference's `pod_name`): the agent names the process of a running workload
 * with each line of its output, so a service's log can be read for one instance. Null for the lines of Slipway and of
 * a deployment's build. The index serves `since`: the lines of a deployment printed at or after a time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('service_deployment_logs').addColumn('instance', 'varchar(255)').execute();
  await db.schema.createIndex('service_deployment_logs_deployment_logged_at').on('service_deployment_logs').columns(['deployment_id', 'logged_at']).execute();
}
