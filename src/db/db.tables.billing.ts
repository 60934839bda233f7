/**
 * Row types of the tables of one area (db.schema.ts has the DB interface and the conventions). Billing
 * (docs/billing.md): plans, metered running time, credit, invoices, cards.
 */

/** Billing (docs/billing.md). Money is integer cents; running-time prices are millicents per unit-hour. */
export interface BillingPlanChangesTable {
  id: string;
  organization_id: string;
  plan: string;
  changed_at: string;
}

/** A resource's running time at one unit count and price; `stopped_at` null while it runs. */
export interface BillingUsageIntervalsTable {
  id: string;
  organization_id: string;
  resource_type: string;
  resource_id: string;
  price_key: string;
  units: number;
  unit_price_millicents: number;
  started_at: string;
  stopped_at: string | null;
}

export interface BillingCreditCodesTable {
  id: string;
  code_hash: string;
  amount_cents: number;
  expires_at: string;
  created_at: string;
  redeemed_by_organization_id: string | null;
  redeemed_at: string | null;
}

/** The credit ledger: rows are only ever inserted; an organization's credit is the sum of its amounts. */
export interface BillingCreditEntriesTable {
  id: string;
  organization_id: string;
  amount_cents: number;
  kind: string;
  credit_code_id: string | null;
  invoice_id: string | null;
  description: string;
  created_at: string;
}

export interface BillingInvoicesTable {
  id: string;
  organization_id: string;
  period: string;
  plan: string;
  status: string;
  currency_code: string;
  subtotal_cents: number;
  allowance_cents: number;
  credit_applied_cents: number;
  total_cents: number;
  lines: unknown;
  created_at: string;
  paid_at: string | null;
  payment_reference: string | null;
}

/** What is kept of a card: never its number or cvv. */
export interface BillingCreditCardsTable {
  id: string;
  organization_id: string;
  brand: string;
  last_digits: string;
  expiry_month: number;
  expiry_year: number;
  provider_token: string | null;
  created_at: string;
}

export interface BillingInfosTable {
  organization_id: string;
  first_name: string;
  last_name: string;
  email: string;
  address: string;
  city: string;
  zip: string;
  state: string | null;
  country_code: string;
  company: string | null;
  vat_number: string | null;
  updated_at: string;
}

export interface BillingUsageReportsTable {
  id: string;
  organization_id: string;
  from_at: string;
  to_at: string;
  csv: string;
  expires_at: string;
  created_at: string;
}
