import { createBilling, createServices } from '../app.services.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/db.client.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { badRequest } from '../lib/errors.ts';
import { loadOrCreateKeyFile } from '../lib/secret-box.ts';
import { createOutboxMailer } from '../mail/outbox-mailer.ts';
import type { BillingService } from '../modules/billing/billing.service.ts';
import { withOperatorDatabase, type OperatorDatabaseConfig } from './admin-database.ts';

/**
 * The operator's billing commands (`slipway admin credit-code create`, `slipway admin invoices generate|mark-paid`).
 * Like `admin bootstrap` they work on the database directly: they are the installation operator's, not a tenant's.
 */

/** Billing over an open database, for the operator's commands (and tests driving them). Mail it sends stays in the outbox. */
export function operatorBilling(database: Database, clock: Clock, secretKey: Buffer, publicUrl: string): BillingService {
  return createBilling(database, createServices(database, clock), { clock, secretKey, publicUrl, mailer: createOutboxMailer({ db: database.db, clock }) });
}

/** "25", "25.5" or "25.50" (currency units) → 2550 cents; anything else is refused, never rounded. */
export function parseAmountToCents(amount: string): number {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(amount.trim());
  if (match === null) throw badRequest(`invalid amount "${amount}": write it in currency units with at most two decimals, e.g. 25.00`);
  return Number(match[1]) * 100 + Number((match[2] ?? '0').padEnd(2, '0'));
}

/** A date (YYYY-MM-DD, the end of that day UTC) or a full ISO-8601 date-time. */
export function parseExpiry(expires: string): string {
  const text = expires.trim();
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T23:59:59.999Z`) : new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(value.getTime())) throw badRequest(`invalid expiry "${expires}": write a date such as 2027-01-31`);
  return value.toISOString();
}

function withOperatorBilling<T>(config: OperatorDatabaseConfig & Pick<Config, 'secretKey' | 'publicUrl'>, run: (billing: BillingService) => Promise<T>): Promise<T> {
  return withOperatorDatabase(config, (database) => {
    const key = config.secretKey.kind === 'value' ? config.secretKey.key : loadOrCreateKeyFile(config.secretKey.file);
    return run(operatorBilling(database, systemClock, key, config.publicUrl));
  });
}

type OperatorConfig = Parameters<typeof withOperatorBilling>[0];

export function createCreditCode(config: OperatorConfig, input: { amount: string; expires: string }) {
  const amountCents = parseAmountToCents(input.amount);
  const expiresAt = parseExpiry(input.expires);
  return withOperatorBilling(config, (billing) => billing.createCreditCode({ amountCents, expiresAt }));
}

export function generateInvoices(config: OperatorConfig, period: string) {
  return withOperatorBilling(config, (billing) => billing.generateInvoices(period));
}

export function markInvoicePaid(config: OperatorConfig, invoiceId: string, reference: string | undefined) {
  return withOperatorBilling(config, (billing) => billing.recordInvoicePayment(invoiceId, reference ?? null));
}
