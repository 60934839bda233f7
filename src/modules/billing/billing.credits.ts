import { randomBytes } from 'node:crypto';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { badRequest } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { BillingContext } from './billing.context.ts';
import { formatCents } from './billing.pdf.ts';
import { CURRENCY_CODE, type PlanDefinition } from './billing.plans.ts';
import * as repo from './billing.repo.ts';

/** Bounds of operator-created credit codes. */
export const MAX_CREDIT_CODE_CENTS = 10_000_000;

/** A code as people type it: case and separators do not matter. */
function normalizeCode(code: string): string {
  return code.trim().toUpperCase().replace(/[\s-]/g, '');
}

/**
 * Credits: the operator's credit codes, their redemption, and the organization's credit left. The credit ledger is
 * append-only and an organization's credit is the sum of its entries.
 */
export function createBillingCredits(context: BillingContext) {
  const { db, clock } = context.deps;
  const { requireOrganization, currentPeriodUsage } = context;

  /** An operator's credit code; the code is in the answer only. */
  async function createCreditCode(input: { amountCents: number; expiresAt: string }) {
    if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0 || input.amountCents > MAX_CREDIT_CODE_CENTS) {
      throw badRequest(`the amount must be between 0.01 and ${formatCents(MAX_CREDIT_CODE_CENTS)} ${CURRENCY_CODE}`, [
        { field: 'amount', message: 'out of range' },
      ]);
    }
    const expiresAt = new Date(input.expiresAt);
    if (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= clock.now().getTime()) {
      throw badRequest('the expiry must be a date and time in the future', [{ field: 'expires', message: 'in the past or not a date' }]);
    }
    // 120 random bits in six groups of five hex digits: easy to read out, and case does not matter.
    const code = `SLW-${(randomBytes(15).toString('hex').toUpperCase().match(/.{5}/g) ?? []).join('-')}`;
    const row: repo.CreditCodeRow = {
      id: newId(),
      code_hash: sha256Hex(normalizeCode(code)),
      amount_cents: input.amountCents,
      expires_at: expiresAt.toISOString(),
      created_at: isoTimestamp(clock),
      redeemed_by_organization_id: null,
      redeemed_at: null,
    };
    await repo.insertCreditCode(db, row);
    return { id: row.id, code, amount_in_cents: row.amount_cents, currency_code: CURRENCY_CODE, expires_at: row.expires_at };
  }

  /**
   * Redeems a code once: the guarded claim and the ledger entry are one transaction, so of concurrent redemptions
   * exactly one claims the code and credits its organization; the others find it used.
   */
  async function addCreditCode(organizationId: string, code: string | undefined): Promise<void> {
    await requireOrganization(organizationId);
    const invalid = (message: string) => badRequest(message, [{ field: '/code', message }]);
    if (code === undefined || normalizeCode(code) === '') throw invalid('a credit code is required');
    const row = await repo.findCreditCodeByHash(db, sha256Hex(normalizeCode(code)));
    if (row === undefined) throw invalid('unknown credit code');
    const now = isoTimestamp(clock);
    if (row.redeemed_at !== null) throw invalid('this credit code has already been used');
    if (row.expires_at <= now) throw invalid('this credit code has expired');
    try {
      await db.transaction().execute(async (trx) => {
        if (!(await repo.claimCreditCode(trx, row.id, organizationId, now))) throw invalid('this credit code has already been used');
        await repo.appendCreditEntry(trx, {
          id: newId(),
          organization_id: organizationId,
          amount_cents: row.amount_cents,
          kind: 'CREDIT_CODE',
          credit_code_id: row.id,
          invoice_id: null,
          description: `Credit code redeemed (${formatCents(row.amount_cents)} ${CURRENCY_CODE})`,
          created_at: now,
        });
      });
    } catch (error) {
      // PostgreSQL: the losing transaction may instead trip over the ledger's unique credit_code_id.
      if (isUniqueViolation(error)) throw invalid('this credit code has already been used');
      throw error;
    }
  }

  /** Credit left: the ledger, less invoices that credits did not cover and are unpaid, less this period's usage beyond what is included. */
  async function creditState(organization: repo.BilledOrganization, plan: PlanDefinition, now: Date) {
    const balanceCents = (await repo.creditBalance(db, organization.id)) - (await repo.unpaidInvoicesTotal(db, organization.id));
    const { usageCents, beyondIncludedCents } = await currentPeriodUsage(organization, plan, now);
    return { balanceCents, usageCents, remainingCents: balanceCents - beyondIncludedCents + Math.max(0, plan.includedUsageCents - usageCents) };
  }

  async function creditLedger(organizationId: string) {
    await requireOrganization(organizationId);
    return repo.listCreditEntries(db, organizationId);
  }

  return { createCreditCode, addCreditCode, creditState, creditLedger };
}

export type BillingCredits = ReturnType<typeof createBillingCredits>;
