import { sql, type Selectable } from 'kysely';
import type {
  BillingCreditCardsTable,
  BillingCreditCodesTable,
  BillingCreditEntriesTable,
  BillingInfosTable,
  BillingInvoicesTable,
  BillingUsageIntervalsTable,
  BillingUsageReportsTable,
  Queryable,
} from '../../db/db.schema.ts';

export type UsageIntervalRow = Selectable<BillingUsageIntervalsTable>;
export type CreditCodeRow = Selectable<BillingCreditCodesTable>;
export type CreditEntryRow = Selectable<BillingCreditEntriesTable>;
export type InvoiceRow = Selectable<BillingInvoicesTable>;
export type CreditCardRow = Selectable<BillingCreditCardsTable>;
export type BillingInfoRow = Selectable<BillingInfosTable>;
export type UsageReportRow = Selectable<BillingUsageReportsTable>;

/** The organization fields billing reads (the organizations module owns and writes them). */
export interface BilledOrganization {
  id: string;
  name: string;
  plan: string;
  created_at: string;
}

export function findBilledOrganization(db: Queryable, organizationId: string): Promise<BilledOrganization | undefined> {
  return db.selectFrom('organizations').select(['id', 'name', 'plan', 'created_at']).where('id', '=', organizationId).executeTakeFirst();
}

/** Every organization not deleted (a deleted one's row lingers only until its workloads are torn down). */
export function listBilledOrganizations(db: Queryable): Promise<BilledOrganization[]> {
  return db.selectFrom('organizations').select(['id', 'name', 'plan', 'created_at']).where('deleted_at', 'is', null).orderBy('id').execute();
}

// Plan history

export async function insertPlanChange(db: Queryable, row: { id: string; organization_id: string; plan: string; changed_at: string }): Promise<void> {
  await db.insertInto('billing_plan_changes').values(row).execute();
}

/** When the organization first moved onto `plan`; undefined when it never changed onto it (it was created on it). */
export async function firstChangeTo(db: Queryable, organizationId: string, plan: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('billing_plan_changes')
    .select('changed_at')
    .where('organization_id', '=', organizationId)
    .where('plan', '=', plan)
    .orderBy('changed_at', 'asc')
    .executeTakeFirst();
  return row?.changed_at;
}

// Metered running time

export async function insertUsageInterval(db: Queryable, row: UsageIntervalRow): Promise<void> {
  await db.insertInto('billing_usage_intervals').values(row).execute();
}

export function findOpenInterval(db: Queryable, resourceType: string, resourceId: string): Promise<UsageIntervalRow | undefined> {
  return db
    .selectFrom('billing_usage_intervals')
    .selectAll()
    .where('resource_type', '=', resourceType)
    .where('resource_id', '=', resourceId)
    .where('stopped_at', 'is', null)
    .executeTakeFirst();
}

export async function closeInterval(db: Queryable, id: string, stoppedAt: string): Promise<boolean> {
  const result = await db
    .updateTable('billing_usage_intervals')
    .set({ stopped_at: stoppedAt })
    .where('id', '=', id)
    .where('stopped_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Intervals of the organization that ran at some time inside [from, to). */
export function listIntervalsOverlapping(db: Queryable, organizationId: string, from: string, to: string): Promise<UsageIntervalRow[]> {
  return db
    .selectFrom('billing_usage_intervals')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('started_at', '<', to)
    .where((eb) => eb.or([eb('stopped_at', 'is', null), eb('stopped_at', '>', from)]))
    .orderBy('started_at')
    .orderBy('id')
    .execute();
}

// Credit codes and the ledger

export async function insertCreditCode(db: Queryable, row: CreditCodeRow): Promise<void> {
  await db.insertInto('billing_credit_codes').values(row).execute();
}

export function findCreditCodeByHash(db: Queryable, codeHash: string): Promise<CreditCodeRow | undefined> {
  return db.selectFrom('billing_credit_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Marks an unused code as redeemed; false when another redemption got there first. */
export async function claimCreditCode(db: Queryable, id: string, organizationId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('billing_credit_codes')
    .set({ redeemed_by_organization_id: organizationId, redeemed_at: at })
    .where('id', '=', id)
    .where('redeemed_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The ledger is append-only: this insert is the one write it ever gets. */
export async function appendCreditEntry(db: Queryable, row: CreditEntryRow): Promise<void> {
  await db.insertInto('billing_credit_entries').values(row).execute();
}

export async function creditBalance(db: Queryable, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('billing_credit_entries')
    .select(sql<string | number>`coalesce(sum(amount_cents), 0)`.as('balance'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return Number(row?.balance ?? 0);
}

export function listCreditEntries(db: Queryable, organizationId: string): Promise<CreditEntryRow[]> {
  return db.selectFrom('billing_credit_entries').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

// Invoices

/** Statuses of an invoice still awaiting payment (the reference's InvoiceStatusEnum). */
const UNPAID_STATUSES = ['NOT_PAID', 'PAYMENT_DUE', 'POSTED', 'PENDING'];

export async function insertInvoice(db: Queryable, row: InvoiceRow): Promise<void> {
  await db.insertInto('billing_invoices').values(row).execute();
}

export function findInvoice(db: Queryable, organizationId: string, invoiceId: string): Promise<InvoiceRow | undefined> {
  return db.selectFrom('billing_invoices').selectAll().where('organization_id', '=', organizationId).where('id', '=', invoiceId).executeTakeFirst();
}

export function findInvoiceById(db: Queryable, invoiceId: string): Promise<InvoiceRow | undefined> {
  return db.selectFrom('billing_invoices').selectAll().where('id', '=', invoiceId).executeTakeFirst();
}

export function findInvoiceForPeriod(db: Queryable, organizationId: string, period: string): Promise<InvoiceRow | undefined> {
  return db.selectFrom('billing_invoices').selectAll().where('organization_id', '=', organizationId).where('period', '=', period).executeTakeFirst();
}

export function listInvoices(db: Queryable, organizationId: string): Promise<InvoiceRow[]> {
  return db.selectFrom('billing_invoices').selectAll().where('organization_id', '=', organizationId).orderBy('period', 'desc').execute();
}

/** The earliest issue time of an invoice still awaiting payment, if any. */
export async function oldestUnpaidInvoice(db: Queryable, organizationId: string): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('billing_invoices')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('status', 'in', UNPAID_STATUSES)
    .orderBy('created_at')
    .executeTakeFirst();
}

/** What the organization's invoices still awaiting payment add up to. */
export async function unpaidInvoicesTotal(db: Queryable, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('billing_invoices')
    .select(sql<string | number>`coalesce(sum(total_cents), 0)`.as('total'))
    .where('organization_id', '=', organizationId)
    .where('status', 'in', UNPAID_STATUSES)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

export async function markInvoicePaid(db: Queryable, invoiceId: string, paidAt: string, reference: string | null): Promise<boolean> {
  const result = await db
    .updateTable('billing_invoices')
    .set({ status: 'PAID', paid_at: paidAt, payment_reference: reference })
    .where('id', '=', invoiceId)
    .where('status', '!=', 'PAID')
    .where('status', '!=', 'VOIDED')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// Cards

export async function insertCreditCard(db: Queryable, row: CreditCardRow): Promise<void> {
  await db.insertInto('billing_credit_cards').values(row).execute();
}

export function listCreditCards(db: Queryable, organizationId: string): Promise<CreditCardRow[]> {
  return db.selectFrom('billing_credit_cards').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

export async function deleteCreditCard(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('billing_credit_cards').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// Billing info

export function findBillingInfo(db: Queryable, organizationId: string): Promise<BillingInfoRow | undefined> {
  return db.selectFrom('billing_infos').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
}

export async function upsertBillingInfo(db: Queryable, row: BillingInfoRow): Promise<void> {
  const { organization_id: _key, ...fields } = row;
  await db
    .insertInto('billing_infos')
    .values(row)
    .onConflict((conflict) => conflict.column('organization_id').doUpdateSet(fields))
    .execute();
}

// Usage reports

export async function insertUsageReport(db: Queryable, row: UsageReportRow): Promise<void> {
  await db.insertInto('billing_usage_reports').values(row).execute();
}

export function findUsageReport(db: Queryable, id: string): Promise<UsageReportRow | undefined> {
  return db.selectFrom('billing_usage_reports').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deleteUsageReport(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('billing_usage_reports').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteExpiredUsageReports(db: Queryable, now: string): Promise<number> {
  const result = await db.deleteFrom('billing_usage_reports').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
