import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Alerting (docs/alerts.md). Receivers and rules belong to an organization and go with it; names are unique per
 * organization (by name key). A rule goes with the cluster it watches; its receivers are a join table, so deleting a
 * receiver takes it off every rule (a rule left with none is UNROUTED). Firings go with their rule; the index serves
 * a rule's newest firings and its open one.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('alert_receivers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('send_resolved', 'integer', (c) => c.notNull())
    .addColumn('owner', 'text')
    .addColumn('severity', 'text')
    .addColumn('webhook_format', 'varchar(16)')
    .addColumn('webhook_url_envelope', 'text')
    .addColumn('webhook_url_hint', 'text')
    .addColumn('signing_secret_envelope', 'text')
    .addColumn('email_to', 'text')
    .addColumn('email_from', 'text')
    .addColumn('smarthost', 'text')
    .addColumn('auth_username', 'text')
    .addColumn('auth_password_envelope', 'text')
    .addColumn('require_tls', 'integer')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('alert_receivers_name', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('alert_rules')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('condition', types.json, (c) => c.notNull())
    .addColumn('for_duration', 'varchar(64)', (c) => c.notNull())
    .addColumn('for_duration_ms', 'integer', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('presentation', types.json, (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('target_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('state', 'varchar(32)', (c) => c.notNull())
    .addColumn('condition_since', types.timestamp)
    .addColumn('evaluation_seq', 'integer', (c) => c.notNull())
    .addColumn('last_evaluated_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('alert_rules_name', ['organization_id', 'name_key'])
    .execute();
  await db.schema.createIndex('alert_rules_cluster').on('alert_rules').column('cluster_id').execute();

  await db.schema
    .createTable('alert_rule_receivers')
    .addColumn('rule_id', 'varchar(36)', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
    .addColumn('receiver_id', 'varchar(36)', (c) => c.notNull().references('alert_receivers.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('alert_rule_receivers_pk', ['rule_id', 'receiver_id'])
    .execute();
  await db.schema.createIndex('alert_rule_receivers_receiver').on('alert_rule_receivers').column('receiver_id').execute();

  await db.schema
    .createTable('alert_firings')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('rule_id', 'varchar(36)', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
    .addColumn('started_at', types.timestamp, (c) => c.notNull())
    .addColumn('fired_at', types.timestamp, (c) => c.notNull())
    .addColumn('resolved_at', types.timestamp)
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addColumn('notified_at', types.timestamp)
    .addColumn('notification_error', 'text')
    .execute();
  await db.schema.createIndex('alert_firings_rule').on('alert_firings').columns(['rule_id', 'fired_at']).execute();
}
