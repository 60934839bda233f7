import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Webhooks (docs/webhooks.md): the organization's endpoints, the messages published to each (one per webhook and
 * event, the exact body every attempt sends), and the delivery log (one row per attempt). The signing secret is
 * sealed (lib/secret-box.ts), never hashed: every delivery needs it again.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('events', types.json, (c) => c.notNull())
    .addColumn('project_names_filter', types.json, (c) => c.notNull())
    .addColumn('environment_types_filter', types.json, (c) => c.notNull())
    .addColumn('secret_envelope', 'text', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_organization').on('webhooks').columns(['organization_id']).execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('webhook_id', 'varchar(36)', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_messages_webhook').on('webhook_messages').columns(['webhook_id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('webhook_id', 'varchar(36)', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('message_id', 'varchar(36)', (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
    .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'varchar(16)', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook_id').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
}
