import { sql } from 'kysely';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { escapeHtml } from '../../mail/mailer.ts';
import { cost, planOf, type BillingContext } from './billing.context.ts';
import { PERIOD_PATTERN, periodBounds, periodOf, previousPeriod, sumCents } from './billing.metering.ts';
import { formatCents, renderInvoicePdf } from './billing.pdf.ts';
import { CURRENCY_CODE, findPlan } from './billing.plans.ts';
import * as repo from './billing.repo.ts';
import type { InvoiceStatusName } from './billing.schemas.ts';

/** How long a link answered by getOrganizationInvoicePDF works. */
const INVOICE_LINK_LIFETIME_MS = 60 * 60 * 1000;

function invoiceView(row: repo.InvoiceRow) {
  return { id: row.id, created_at: row.created_at, status: row.status as InvoiceStatusName, ...cost(row.total_cents), period: row.period, paid_at: row.paid_at };
}

interface InvoiceLine {
  description: string;
  amountCents: number;
}

/** Invoices: the monthly run that issues them, reading them back (views, PDF, mail) and recording their payment. */
export function createBillingInvoices(context: BillingContext) {
  const { deps } = context;
  const { db, clock } = deps;
  const { requireOrganization, trialEndsAt, usageCharges, downloadUrl, checkLink } = context;

  /**
   * The invoice of one organization for one finished period, once: the unique (organization, period) key makes a
   * second run (the timer on another replica, the CLI) find the first one's invoice. Credits applied to it leave the
   * ledger in the same transaction, under a lock of the organization row on PostgreSQL so concurrent writers of
   * one organization's ledger take turns.
   */
  async function generateInvoice(organization: repo.BilledOrganization, period: string): Promise<{ invoice: repo.InvoiceRow; created: boolean }> {
    const existing = await repo.findInvoiceForPeriod(db, organization.id, period);
    if (existing !== undefined) return { invoice: existing, created: false };
    const plan = planOf(organization);
    const { from, to } = periodBounds(period);
    const charges = await usageCharges(organization.id, from, to, plan);
    const trialEnd = await trialEndsAt(organization, plan);
    const lines: InvoiceLine[] = [];
    if (plan.billingMode === 'INVOICE') {
      const onTrial = trialEnd.getTime() > to.getTime();
      lines.push({ description: `${plan.displayName} plan, ${period}${onTrial ? ' (trial)' : ''}`, amountCents: onTrial ? 0 : plan.monthlyPriceCents });
    }
    for (const charge of charges) {
      const kind = charge.resourceType === 'CLUSTER' ? 'Cluster' : 'Service';
      lines.push({ description: `${kind} ${charge.resourceId} (${charge.priceKeys.join(', ')}), ${charge.hours} h`, amountCents: charge.cents });
    }
    const usageCents = sumCents(charges);
    const subtotal = lines.reduce((total, line) => total + line.amountCents, 0);
    const allowance = Math.min(plan.includedUsageCents, usageCents);
    const id = newId();
    const now = isoTimestamp(clock);
    try {
      const invoice = await db.transaction().execute(async (trx) => {
        if (deps.dialect === 'postgres') await sql`select id from organizations where id = ${organization.id} for update`.execute(trx);
        const balance = await repo.creditBalance(trx, organization.id);
        const creditApplied = Math.min(Math.max(0, balance), subtotal - allowance);
        const total = subtotal - allowance - creditApplied;
        const row: repo.InvoiceRow = {
          id,
          organization_id: organization.id,
          period,
          plan: plan.code,
          status: total > 0 ? 'NOT_PAID' : 'PAID',
          currency_code: CURRENCY_CODE,
          subtotal_cents: subtotal,
          allowance_cents: allowance,
          credit_applied_cents: creditApplied,
          total_cents: total,
          lines: writeJson(lines),
          created_at: now,
          paid_at: total > 0 ? null : now,
          payment_reference: total > 0 ? null : 'nothing due',
        };
        await repo.insertInvoice(trx, row);
        if (creditApplied > 0) {
          await repo.appendCreditEntry(trx, {
            id: newId(),
            organization_id: organization.id,
            amount_cents: -creditApplied,
            kind: 'INVOICE',
            credit_code_id: null,
            invoice_id: id,
            description: `Applied to the invoice for ${period}`,
            created_at: now,
          });
        }
        return row;
      });
      return { invoice, created: true };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const raced = await repo.findInvoiceForPeriod(db, organization.id, period);
      if (raced === undefined) throw error;
      return { invoice: raced, created: false };
    }
  }

  /** Invoices every organization that existed during a finished period; safe to run any number of times. */
  async function generateInvoices(period: string): Promise<{ period: string; created: number; existing: number }> {
    if (!PERIOD_PATTERN.test(period)) throw badRequest('the period must be a month, YYYY-MM', [{ field: 'period', message: 'not YYYY-MM' }]);
    const { to } = periodBounds(period);
    if (to.getTime() > clock.now().getTime()) throw badRequest(`the period ${period} is not over yet`, [{ field: 'period', message: 'not over' }]);
    let created = 0;
    let existing = 0;
    for (const organization of await repo.listBilledOrganizations(db)) {
      if (Date.parse(organization.created_at) >= to.getTime()) continue;
      const result = await generateInvoice(organization, period);
      if (result.created) created += 1;
      else existing += 1;
    }
    return { period, created, existing };
  }

  /** The scheduled run: the period that ended last, for every organization. */
  async function generateDueInvoices() {
    return generateInvoices(previousPeriod(periodOf(clock.now())));
  }

  async function requireInvoice(organizationId: string, invoiceId: string): Promise<repo.InvoiceRow> {
    await requireOrganization(organizationId);
    const row = await repo.findInvoice(db, organizationId, invoiceId);
    if (row === undefined) throw notFound(`invoice ${invoiceId} not found`);
    return row;
  }

  async function listOrganizationInvoice(organizationId: string) {
    await requireOrganization(organizationId);
    return (await repo.listInvoices(db, organizationId)).map(invoiceView);
  }

  async function getOrganizationInvoice(organizationId: string, invoiceId: string) {
    return invoiceView(await requireInvoice(organizationId, invoiceId));
  }

  async function getOrganizationInvoicePDF(organizationId: string, invoiceId: string) {
    const row = await requireInvoice(organizationId, invoiceId);
    const expiresAt = new Date(clock.now().getTime() + INVOICE_LINK_LIFETIME_MS);
    return { url: downloadUrl(`/billing/invoice/${row.id}/pdf`, 'invoice-pdf', row.id, expiresAt), expires_at: expiresAt.toISOString() };
  }

  async function invoicePdf(row: repo.InvoiceRow): Promise<Buffer> {
    const organization = await requireOrganization(row.organization_id);
    const info = await repo.findBillingInfo(db, row.organization_id);
    const billTo =
      info === undefined
        ? []
        : [
            `${info.first_name} ${info.last_name}`,
            ...(info.company === null ? [] : [info.company]),
            info.address,
            `${info.zip} ${info.city}${info.state === null ? '' : `, ${info.state}`}`,
            info.country_code,
            ...(info.vat_number === null ? [] : [`VAT ${info.vat_number}`]),
          ];
    return renderInvoicePdf({
      invoiceId: row.id,
      organizationName: organization.name,
      period: row.period,
      planName: findPlan(row.plan)?.displayName ?? row.plan,
      issuedAt: row.created_at,
      status: row.status,
      currencyCode: row.currency_code,
      lines: readJson<InvoiceLine[]>(row.lines),
      subtotalCents: row.subtotal_cents,
      allowanceCents: row.allowance_cents,
      creditAppliedCents: row.credit_applied_cents,
      totalCents: row.total_cents,
      billTo,
    });
  }

  async function downloadInvoicePdf(invoiceId: string, expires: string | undefined, signature: string | undefined) {
    checkLink('invoice-pdf', invoiceId, expires, signature);
    const row = await repo.findInvoiceById(db, invoiceId);
    if (row === undefined) throw notFound('no such download');
    return { filename: `invoice-${row.period}-${row.id}.pdf`, content: await invoicePdf(row) };
  }

  /** Mails every invoice of the organization as PDF attachments to the billing e-mail (else the owner's). */
  async function mailAllInvoices(organizationId: string): Promise<void> {
    const organization = await requireOrganization(organizationId);
    const recipient = (await repo.findBillingInfo(db, organizationId))?.email ?? (await deps.organizations.ownerEmail(organizationId));
    if (recipient === undefined) return;
    const invoices = await repo.listInvoices(db, organizationId);
    const attachments = [];
    for (const row of invoices) {
      attachments.push({ filename: `invoice-${row.period}-${row.id}.pdf`, contentType: 'application/pdf', content: await invoicePdf(row) });
    }
    const summary =
      invoices.length === 0
        ? 'There are no invoices yet.'
        : invoices.map((row) => `${row.period}: ${formatCents(row.total_cents)} ${row.currency_code} (${row.status})`).join('\n');
    const text = `The invoices of ${organization.name}, attached as PDF files.\n\n${summary}\n`;
    await deps.mailer.send({
      to: recipient,
      subject: `Invoices of ${organization.name}`,
      text,
      html: `<p>The invoices of ${escapeHtml(organization.name)}, attached as PDF files.</p><pre>${escapeHtml(summary)}</pre>`,
      attachments,
    });
  }

  /** Answers at once (202); the mail is assembled and sent in the background, and a failure is logged. */
  async function organizationDownloadAllInvoices(organizationId: string): Promise<void> {
    await requireOrganization(organizationId);
    mailAllInvoices(organizationId).catch((error: unknown) => deps.log?.error({ err: error, organizationId }, 'mailing the invoices failed'));
  }

  /** Records a payment (the operator's CLI, or a payment provider's notification). */
  async function recordInvoicePayment(invoiceId: string, reference: string | null) {
    const row = await repo.findInvoiceById(db, invoiceId);
    if (row === undefined) throw notFound(`invoice ${invoiceId} not found`);
    if (row.status === 'PAID') throw badRequest(`invoice ${invoiceId} is already paid`);
    if (row.status === 'VOIDED') throw badRequest(`invoice ${invoiceId} is voided`);
    if (!(await repo.markInvoicePaid(db, invoiceId, isoTimestamp(clock), reference))) throw badRequest(`invoice ${invoiceId} is already paid`);
    const paid = await repo.findInvoiceById(db, invoiceId);
    return invoiceView(paid as repo.InvoiceRow);
  }

  return {
    generateInvoices,
    generateDueInvoices,
    listOrganizationInvoice,
    getOrganizationInvoice,
    getOrganizationInvoicePDF,
    downloadInvoicePdf,
    organizationDownloadAllInvoices,
    mailAllInvoices,
    recordInvoicePayment,
  };
}
