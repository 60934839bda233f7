import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Git webhooks (docs/git-webhooks.md). A service has at most one webhook: the secret the provider signs its
 * deliveries with (sealed) and the hook's id at the provider once sync registered it. Each delivery acted on is
 * recorded under its provider's delivery id, unique per service, so a replayed delivery is recognised and acts once.
 * A preview environment remembers the blueprint environment and the pull request it was cloned for: one per
 * (blueprint, repository, pull request), which is what a synchronize or a close finds it by. All go with their
 * service or environment.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('git_webhooks')
    .addColumn('service_id', 'varchar(36)', (c) => c.primaryKey().references('services.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('provider', 'varchar(16)', (c) => c.notNull())
    .addColumn('secret_envelope', 'text', (c) => c.notNull())
    .addColumn('provider_hook_id', 'varchar(200)')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('git_webhook_deliveries')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('delivery_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('event', 'varchar(64)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(32)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('received_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('git_webhook_deliveries_delivery', ['service_id', 'delivery_id'])
    .execute();

  await db.schema
    .createTable('preview_environments')
    .addColumn('environment_id', 'varchar(36)', (c) => c.primaryKey().references('environments.id').onDelete('cascade'))
    .addColumn('blueprint_environment_id', 'varchar(36)', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('repository', 'varchar(400)', (c) => c.notNull())
    .addColumn('pull_request', 'integer', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('preview_environments_pull_request', ['blueprint_environment_id', 'repository', 'pull_request'])
    .execute();
}
