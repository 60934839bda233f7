import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Billing (docs/billing.md): plan history, metered running time, credit codes and the append-only credit ledger,
 * invoices, card summaries (never a card number or cvv), billing info and usage reports. Money is integer cents
 * (bigint); prices of running time are integer millicents per unit-hour. Plans and the price table are data shipped
 * with the code (modules/billing/billing.plans.ts), so rows keep the plan code and the price they were charged at.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('billing_plan_changes')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('plan', 'varchar(32)', (c) => c.notNull())
    .addColumn('changed_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_plan_changes_organization_idx').on('billing_plan_changes').columns(['organization_id', 'changed_at']).execute();

  await db.schema
    .createTable('billing_usage_intervals')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('resource_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('resource_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('price_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('units', 'integer', (c) => c.notNull())
    .addColumn('unit_price_millicents', 'bigint', (c) => c.notNull())
    .addColumn('started_at', types.timestamp, (c) => c.notNull())
    .addColumn('stopped_at', types.timestamp)
    .execute();
  // One open interval per resource: two concurrent "running" reports cannot both open one.
  await db.schema
    .createIndex('billing_usage_intervals_open_key')
    .on('billing_usage_intervals')
    .columns(['resource_type', 'resource_id'])
    .unique()
    .where(sql<boolean>`stopped_at is null`)
    .execute();
  await db.schema.createIndex('billing_usage_intervals_organization_idx').on('billing_usage_intervals').columns(['organization_id', 'started_at']).execute();

  await db.schema
    .createTable('billing_credit_codes')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    /** SHA-256 of the code: the code itself is shown once, to the operator who created it. */
    .addColumn('code_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('amount_cents', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    // Not a foreign key: deleting the organization must not make a used code redeemable again.
    .addColumn('redeemed_by_organization_id', 'varchar(36)')
    .addColumn('redeemed_at', types.timestamp)
    .execute();

  await db.schema
    .createTable('billing_credit_entries')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('amount_cents', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('credit_code_id', 'varchar(36)', (c) => c.unique())
    .addColumn('invoice_id', 'varchar(36)', (c) => c.unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_credit_entries_organization_idx').on('billing_credit_entries').column('organization_id').execute();
  // The ledger is append-only in the database too: an entry is never changed (a correction is a new entry). Rows
  // still go with their organization (the cascade deletes them), so only UPDATE is refused.
  if (types.timestamp === 'timestamptz') {
    await sql`create function billing_credit_entries_append_only() returns trigger language plpgsql as $$
      begin raise exception 'billing_credit_entries is append-only'; end $$`.execute(db);
    await sql`create trigger billing_credit_entries_no_update before update on billing_credit_entries
      for each row execute function billing_credit_entries_append_only()`.execute(db);
  } else {
    await sql`create trigger billing_credit_entries_no_update before update on billing_credit_entries
      begin select raise(abort, 'billing_credit_entries is append-only'); end`.execute(db);
  }

  await db.schema
    .createTable('billing_invoices')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    /** The billing period, a UTC calendar month: YYYY-MM. */
    .addColumn('period', 'varchar(7)', (c) => c.notNull())
    .addColumn('plan', 'varchar(32)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('currency_code', 'varchar(3)', (c) => c.notNull())
    .addColumn('subtotal_cents', 'bigint', (c) => c.notNull())
    .addColumn('allowance_cents', 'bigint', (c) => c.notNull())
    .addColumn('credit_applied_cents', 'bigint', (c) => c.notNull())
    .addColumn('total_cents', 'bigint', (c) => c.notNull())
    .addColumn('lines', types.json, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('paid_at', types.timestamp)
    .addColumn('payment_reference', 'text')
    .addUniqueConstraint('billing_invoices_organization_period_key', ['organization_id', 'period'])
    .execute();

  await db.schema
    .createTable('billing_credit_cards')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('brand', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_digits', 'varchar(4)', (c) => c.notNull())
    .addColumn('expiry_month', 'integer', (c) => c.notNull())
    .addColumn('expiry_year', 'integer', (c) => c.notNull())
    /** The payment provider's reference for the card, when a provider is plugged in; never the number. */
    .addColumn('provider_token', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_credit_cards_organization_idx').on('billing_credit_cards').column('organization_id').execute();

  await db.schema
    .createTable('billing_infos')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('zip', 'text', (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('country_code', 'varchar(2)', (c) => c.notNull())
    .addColumn('company', 'text')
    .addColumn('vat_number', 'text')
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('billing_usage_reports')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('from_at', types.timestamp, (c) => c.notNull())
    .addColumn('to_at', types.timestamp, (c) => c.notNull())
    .addColumn('csv', 'text', (c) => c.notNull())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_usage_reports_expires_idx').on('billing_usage_reports').column('expires_at').execute();
}
