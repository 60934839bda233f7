import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { badRequest, forbidden, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { escapeHtml, type Mailer } from '../../mail/mailer.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { OrganizationView } from '../organizations/organizations.service.ts';
import { checkCard, isCardExpired, type CardInput } from './billing.cards.ts';
import type { SignedLinks } from './billing.links.ts';
import type { InvoiceStatusName } from './billing.schemas.ts';
import { chargesFor, intervalMillicents, overlapMs, PERIOD_PATTERN, periodBounds, periodOf, previousPeriod, type ResourceCharge } from './billing.metering.ts';
import { csvOf, formatCents, renderInvoicePdf } from './billing.pdf.ts';
import { CURRENCY_CODE, findPlan, HOURS_PER_MONTH, PLANS, unitPriceFor, type PlanDefinition } from './billing.plans.ts';
import * as repo from './billing.repo.ts';

/** Called by clusters (and later services) on every state change that starts, resizes or stops running time. */
export interface MeteringPort {
  resourceRunning(input: {
    organizationId: string;
    resourceType: 'CLUSTER' | 'SERVICE';
    resourceId: string;
    /** Instance type, or a service size key. */
    priceKey: string;
    /** Nodes. */
    units: number;
    at: string;
  }): Promise<void>;
  resourceStopped(input: { resourceType: 'CLUSTER' | 'SERVICE'; resourceId: string; at: string }): Promise<void>;
}

/** What billing needs of the clusters module: a cluster of the organization, to price its node range. */
export interface ClusterLookup {
  findClusterSummary(organizationId: string, clusterId: string): Promise<ClusterSummary | undefined>;
}

/**
 * The payment-provider port: a real gateway plugs in here. The built-in one keeps no cards and charges nothing;
 * invoices are marked paid by the operator (`slipway admin invoices mark-paid`) or by a provider's webhook calling
 * `recordInvoicePayment`.
 */
export interface PaymentProvider {
  /** Registers a checked card with the provider and answers its reference, or null when no provider keeps cards. */
  registerCard(input: { organizationId: string; digits: string; cvv: string; expiryMonth: number; expiryYear: number }): Promise<string | null>;
}

export const NO_PAYMENT_PROVIDER: PaymentProvider = { registerCard: async () => null };

/** What billing needs of the organizations module. */
export interface OrganizationPort {
  changeOrganizationPlan(trx: Transaction<DB>, organizationId: string, plan: string): Promise<boolean>;
  getOrganization(organizationId: string): Promise<OrganizationView>;
  /** Where billing mail goes when no billing e-mail is set: the owner's address. */
  ownerEmail(organizationId: string): Promise<string | undefined>;
}

export interface BillingLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export interface BillingDeps {
  db: Kysely<DB>;
  dialect: 'sqlite' | 'postgres';
  clock: Clock;
  links: SignedLinks;
  /** Base of the signed download links. */
  publicUrl: string;
  mailer: Mailer;
  organizations: OrganizationPort;
  /** Without it (the operator's commands) getClusterCurrentCost finds no cluster. */
  clusters?: ClusterLookup | undefined;
  payments: PaymentProvider;
  log?: BillingLog | undefined;
}

/** SPEC.md Limits: a Startup organization's billing turns invalid once an invoice is unpaid for one week. */
const UNPAID_GRACE_MS = 7 * 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;
/** How long a link answered by getOrganizationInvoicePDF works. */
const INVOICE_LINK_LIFETIME_MS = 60 * 60 * 1000;
/** Bounds of operator-created credit codes, and of a usage report's life and range. */
export const MAX_CREDIT_CODE_CENTS = 10_000_000;
const MAX_REPORT_LIFETIME_SECONDS = 7 * 24 * 3600;
const MAX_REPORT_RANGE_MS = 366 * DAY_MS;

function toAmount(cents: number): number {
  return cents / 100;
}

function cost(cents: number) {
  return { total_in_cents: cents, total: toAmount(cents), currency_code: CURRENCY_CODE };
}

/** A code as people type it: case and separators do not matter. */
function normalizeCode(code: string): string {
  return code.trim().toUpperCase().replace(/[\s-]/g, '');
}

function invoiceView(row: repo.InvoiceRow) {
  return { id: row.id, created_at: row.created_at, status: row.status as InvoiceStatusName, ...cost(row.total_cents), period: row.period, paid_at: row.paid_at };
}

function cardView(row: repo.CreditCardRow, now: Date) {
  return {
    id: row.id,
    created_at: row.created_at,
    expiry_month: row.expiry_month,
    expiry_year: row.expiry_year,
    last_digit: row.last_digits,
    is_expired: isCardExpired(row.expiry_month, row.expiry_year, now),
    brand: row.brand,
  };
}

const EMPTY_BILLING_INFO = {
  first_name: null,
  last_name: null,
  email: null,
  address: null,
  city: null,
  zip: null,
  state: null,
  country_code: null,
  company: null,
  vat_number: null,
};

function billingInfoView(row: repo.BillingInfoRow | undefined) {
  if (row === undefined) return EMPTY_BILLING_INFO;
  const { organization_id: _organization, updated_at: _updated, ...fields } = row;
  return fields;
}

export interface BillingInfoInput {
  first_name: string;
  last_name: string;
  email: string;
  address: string;
  city: string;
  zip: string;
  state?: string | undefined;
  country_code: string;
  company?: string | undefined;
  vat_number?: string | undefined;
}

export interface UsageReportInput {
  from: string;
  to: string;
  report_expiration_in_seconds: number;
}

interface InvoiceLine {
  description: string;
  amountCents: number;
}

/**
 * Billing (SPEC.md Billing, Billing status rule, Limits; docs/billing.md). Time comes from the clock alone. Money is
 * integer cents; the credit ledger is append-only and an organization's credit is the sum of its entries.
 */
export function createBillingService(deps: BillingDeps) {
  const { db, clock, links } = deps;

  async function requireOrganization(organizationId: string): Promise<repo.BilledOrganization> {
    const organization = await repo.findBilledOrganization(db, organizationId);
    if (organization === undefined) throw notFound(`organization ${organizationId} not found`);
    return organization;
  }

  function planOf(organization: repo.BilledOrganization): PlanDefinition {
    // Every code the organizations module accepts is in PLANS; an unknown one (an older installation's) bills as COMMUNITY.
    return findPlan(organization.plan) ?? (findPlan('COMMUNITY') as PlanDefinition);
  }

  /** One trial per plan: leaving a plan and coming back does not start another. */
  async function trialEndsAt(organization: repo.BilledOrganization, plan: PlanDefinition): Promise<Date> {
    const since = (await repo.firstChangeTo(db, organization.id, plan.code)) ?? organization.created_at;
    return new Date(Date.parse(since) + plan.trialDays * DAY_MS);
  }

  async function usageCharges(organizationId: string, from: Date, to: Date, plan: PlanDefinition): Promise<ResourceCharge[]> {
    const intervals = await repo.listIntervalsOverlapping(db, organizationId, from.toISOString(), to.toISOString());
    return chargesFor(intervals, from, to, plan.usagePricePercent);
  }

  const sumCents = (charges: ResourceCharge[]) => charges.reduce((total, charge) => total + charge.cents, 0);

  /** Running time of the current period so far, and what of it is beyond the plan's included usage. */
  async function currentPeriodUsage(organization: repo.BilledOrganization, plan: PlanDefinition, now: Date) {
    const { from } = periodBounds(periodOf(now));
    const usageCents = sumCents(await usageCharges(organization.id, from, now, plan));
    return { usageCents, beyondIncludedCents: Math.max(0, usageCents - plan.includedUsageCents) };
  }

  async function getOrganizationCurrentCost(organizationId: string) {
    const organization = await requireOrganization(organizationId);
    const plan = planOf(organization);
    const now = clock.now();
    const trialEnd = await trialEndsAt(organization, plan);
    const { beyondIncludedCents } = await currentPeriodUsage(organization, plan, now);
    const planPriceCents = trialEnd.getTime() <= periodBounds(periodOf(now)).to.getTime() ? plan.monthlyPriceCents : 0;
    return {
      plan: plan.code,
      remaining_trial_day: Math.max(0, Math.ceil((trialEnd.getTime() - now.getTime()) / DAY_MS)),
      renewal_at: periodBounds(periodOf(now)).to.toISOString(),
      cost: cost(planPriceCents + beyondIncludedCents),
    };
  }

  async function changePlan(organizationId: string, planCode: string | undefined): Promise<OrganizationView> {
    const organization = await requireOrganization(organizationId);
    const plan = planCode === undefined ? undefined : findPlan(planCode);
    if (plan === undefined) {
      throw badRequest('unknown plan', [{ field: '/plan', message: `must be one of ${PLANS.map((candidate) => candidate.code).join(', ')}` }]);
    }
    if (plan.code !== organization.plan) {
      await db.transaction().execute(async (trx) => {
        if (!(await deps.organizations.changeOrganizationPlan(trx, organizationId, plan.code))) throw notFound(`organization ${organizationId} not found`);
        await repo.insertPlanChange(trx, { id: newId(), organization_id: organizationId, plan: plan.code, changed_at: isoTimestamp(clock) });
      });
    }
    return deps.organizations.getOrganization(organizationId);
  }

  // Credits

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

  /** SPEC.md billing status rule: Startup (invoiced plans) — invalid once an invoice is unpaid for a week; Community (credit plans) — invalid with no credit left. */
  async function billingStatusOf(organization: repo.BilledOrganization): Promise<{ is_valid: boolean; message: string }> {
    const plan = planOf(organization);
    const now = clock.now();
    if (plan.billingMode === 'INVOICE') {
      const unpaid = await repo.oldestUnpaidInvoice(db, organization.id);
      if (unpaid !== undefined && now.getTime() - Date.parse(unpaid.created_at) >= UNPAID_GRACE_MS) {
        return {
          is_valid: false,
          message:
            `invoice ${unpaid.id} for ${unpaid.period} (${formatCents(unpaid.total_cents)} ${unpaid.currency_code}) has been unpaid since ` +
            `${unpaid.created_at.slice(0, 10)}, more than a week; deployments are restricted until it is paid`,
        };
      }
      return { is_valid: true, message: unpaid === undefined ? 'no unpaid invoice' : `invoice ${unpaid.id} is awaiting payment` };
    }
    const credit = await creditState(organization, plan, now);
    if (credit.remainingCents <= 0) {
      return {
        is_valid: false,
        message: `no credit left on the ${plan.displayName} plan (this period's usage: ${formatCents(credit.usageCents)} ${CURRENCY_CODE}); redeem a credit code or change plan`,
      };
    }
    return { is_valid: true, message: `${formatCents(credit.remainingCents)} ${CURRENCY_CODE} of credit left` };
  }

  async function getOrganizationBillingStatus(organizationId: string) {
    return billingStatusOf(await requireOrganization(organizationId));
  }

  async function planFeatures(organizationId: string): Promise<{ plan: string; selfManagedClusters: boolean }> {
    const plan = planOf(await requireOrganization(organizationId));
    return { plan: plan.code, selfManagedClusters: plan.selfManagedClusters };
  }

  async function deploymentsAllowed(organizationId: string): Promise<{ allowed: boolean; reason: string }> {
    const status = await getOrganizationBillingStatus(organizationId);
    return { allowed: status.is_valid, reason: status.message };
  }

  // Cluster cost

  async function getClusterCurrentCost(organizationId: string, clusterId: string) {
    const plan = planOf(await requireOrganization(organizationId));
    const cluster = await deps.clusters?.findClusterSummary(organizationId, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    // The same key clusters meter under: the instance type, else the kind of cluster (LOCAL runs on this host, free).
    const unit = unitPriceFor('CLUSTER', cluster.instanceType ?? cluster.kubernetes, cluster.cloudProvider);
    const monthly = (nodes: number) => Math.round((nodes * unit.millicentsPerHour * HOURS_PER_MONTH * plan.usagePricePercent) / 100 / 1000);
    const min = monthly(cluster.minRunningNodes);
    const max = monthly(Math.max(cluster.maxRunningNodes, cluster.minRunningNodes));
    return { min_cost_in_cents: min, min_cost: toAmount(min), max_cost_in_cents: max, max_cost: toAmount(max), currency_code: CURRENCY_CODE };
  }

  // Metering

  const metering: MeteringPort = {
    async resourceRunning(input) {
      if (!Number.isSafeInteger(input.units) || input.units < 0) throw badRequest(`units must be a non-negative integer, got ${input.units}`);
      const at = new Date(input.at).toISOString();
      const unit = unitPriceFor(input.resourceType, input.priceKey);
      await db.transaction().execute(async (trx) => {
        const open = await repo.findOpenInterval(trx, input.resourceType, input.resourceId);
        if (open !== undefined && open.units === input.units && open.price_key === input.priceKey && open.unit_price_millicents === unit.millicentsPerHour) return;
        if (open !== undefined) await repo.closeInterval(trx, open.id, at < open.started_at ? open.started_at : at);
        if (input.units === 0) return;
        await repo.insertUsageInterval(trx, {
          id: newId(),
          organization_id: input.organizationId,
          resource_type: input.resourceType,
          resource_id: input.resourceId,
          price_key: input.priceKey,
          units: input.units,
          unit_price_millicents: unit.millicentsPerHour,
          started_at: at,
          stopped_at: null,
        });
      });
    },
    async resourceStopped(input) {
      const at = new Date(input.at).toISOString();
      const open = await repo.findOpenInterval(db, input.resourceType, input.resourceId);
      if (open !== undefined) await repo.closeInterval(db, open.id, at < open.started_at ? open.started_at : at);
    },
  };

  // Invoices

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

  function downloadUrl(path: string, purpose: Parameters<SignedLinks['sign']>[0], id: string, expiresAt: Date): string {
    return `${deps.publicUrl.replace(/\/+$/, '')}${path}?${links.sign(purpose, id, expiresAt)}`;
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

  /** A signed link's answer: a link we never signed (or altered) names nothing (404); an expired one is refused (403). */
  function checkLink(purpose: Parameters<SignedLinks['verify']>[0], id: string, expires: string | undefined, signature: string | undefined): void {
    const verdict = links.verify(purpose, id, expires, signature, clock.now());
    if (verdict === 'forged') throw notFound('no such download');
    if (verdict === 'expired') throw forbidden('this download link has expired; ask for a new one');
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

  // Cards

  async function listOrganizationCreditCards(organizationId: string) {
    await requireOrganization(organizationId);
    const now = clock.now();
    return (await repo.listCreditCards(db, organizationId)).map((row) => cardView(row, now));
  }

  async function addCreditCard(organizationId: string, input: CardInput & { token?: string | null | undefined }) {
    await requireOrganization(organizationId);
    const now = clock.now();
    const card = checkCard(input, now);
    const providerToken =
      (await deps.payments.registerCard({ organizationId, digits: card.digits, cvv: input.cvv, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear })) ??
      input.token ??
      null;
    const row: repo.CreditCardRow = {
      id: newId(),
      organization_id: organizationId,
      brand: card.brand,
      last_digits: card.lastDigits,
      expiry_month: card.expiryMonth,
      expiry_year: card.expiryYear,
      provider_token: providerToken,
      created_at: now.toISOString(),
    };
    await repo.insertCreditCard(db, row);
    return cardView(row, now);
  }

  async function deleteCreditCard(organizationId: string, creditCardId: string): Promise<void> {
    await requireOrganization(organizationId);
    if (!(await repo.deleteCreditCard(db, organizationId, creditCardId))) throw notFound(`credit card ${creditCardId} not found`);
  }

  // Billing info, external id, usage reports

  async function getOrganizationBillingInfo(organizationId: string) {
    await requireOrganization(organizationId);
    return billingInfoView(await repo.findBillingInfo(db, organizationId));
  }

  async function editOrganizationBillingInfo(organizationId: string, input: BillingInfoInput) {
    await requireOrganization(organizationId);
    const row: repo.BillingInfoRow = {
      organization_id: organizationId,
      first_name: input.first_name,
      last_name: input.last_name,
      email: input.email,
      address: input.address,
      city: input.city,
      zip: input.zip,
      state: input.state ?? null,
      country_code: input.country_code.toUpperCase(),
      company: input.company ?? null,
      vat_number: input.vat_number ?? null,
      updated_at: isoTimestamp(clock),
    };
    await repo.upsertBillingInfo(db, row);
    return billingInfoView(row);
  }

  /** Stable for the organization's life and derived, so reading it writes nothing; it reveals nothing of the id. */
  async function getOrganizationBillingExternalId(organizationId: string) {
    await requireOrganization(organizationId);
    return { id: `cus_${sha256Hex(`slipway-billing-customer:${organizationId}`).slice(0, 24)}` };
  }

  async function generateBillingUsageReport(organizationId: string, input: UsageReportInput) {
    const organization = await requireOrganization(organizationId);
    const from = new Date(input.from);
    const to = new Date(input.to);
    const problems = [];
    if (from.getTime() >= to.getTime()) problems.push({ field: '/from', message: 'must be before to' });
    else if (to.getTime() - from.getTime() > MAX_REPORT_RANGE_MS) problems.push({ field: '/to', message: 'the range may span at most 366 days' });
    if (input.report_expiration_in_seconds <= 0 || input.report_expiration_in_seconds > MAX_REPORT_LIFETIME_SECONDS) {
      problems.push({ field: '/report_expiration_in_seconds', message: `must be 1 to ${MAX_REPORT_LIFETIME_SECONDS}` });
    }
    if (problems.length > 0) throw badRequest('invalid usage report request', problems);
    const plan = planOf(organization);
    const nowDate = clock.now();
    const end = new Date(Math.min(to.getTime(), nowDate.getTime()));
    const intervals = await repo.listIntervalsOverlapping(db, organizationId, from.toISOString(), end.toISOString());
    const rows = intervals
      .filter((interval) => overlapMs(interval, from, end) > 0)
      .map((interval) => {
        const start = new Date(Math.max(Date.parse(interval.started_at), from.getTime())).toISOString();
        const stop = new Date(Math.min(interval.stopped_at === null ? end.getTime() : Date.parse(interval.stopped_at), end.getTime())).toISOString();
        const cents = Math.round((intervalMillicents(interval, from, end) * plan.usagePricePercent) / 100 / 1000);
        return [interval.resource_type, interval.resource_id, interval.price_key, interval.units, start, stop, (overlapMs(interval, from, end) / 3_600_000).toFixed(2), formatCents(cents)];
      });
    const csv = csvOf(['resource_type', 'resource_id', 'price_key', 'units', 'from', 'to', 'hours', `cost_${CURRENCY_CODE.toLowerCase()}`], rows);
    const expiresAt = new Date(nowDate.getTime() + input.report_expiration_in_seconds * 1000);
    const id = newId();
    await repo.insertUsageReport(db, {
      id,
      organization_id: organizationId,
      from_at: from.toISOString(),
      to_at: to.toISOString(),
      csv,
      expires_at: expiresAt.toISOString(),
      created_at: nowDate.toISOString(),
    });
    return {
      report_url: downloadUrl(`/billing/usageReport/${id}`, 'usage-report', id, expiresAt),
      delete_report_url: downloadUrl(`/billing/usageReport/${id}`, 'usage-report-delete', id, expiresAt),
    };
  }

  async function downloadUsageReport(reportId: string, expires: string | undefined, signature: string | undefined) {
    checkLink('usage-report', reportId, expires, signature);
    const row = await repo.findUsageReport(db, reportId);
    if (row === undefined) throw notFound('no such download');
    return { filename: `usage-${row.from_at.slice(0, 10)}-${row.to_at.slice(0, 10)}.csv`, content: row.csv };
  }

  async function deleteUsageReportByLink(reportId: string, expires: string | undefined, signature: string | undefined): Promise<void> {
    checkLink('usage-report-delete', reportId, expires, signature);
    if (!(await repo.deleteUsageReport(db, reportId))) throw notFound('no such download');
  }

  async function removeExpiredUsageReports(): Promise<number> {
    return repo.deleteExpiredUsageReports(db, isoTimestamp(clock));
  }

  async function creditLedger(organizationId: string) {
    await requireOrganization(organizationId);
    return repo.listCreditEntries(db, organizationId);
  }

  return {
    metering,
    planFeatures,
    deploymentsAllowed,
    getOrganizationCurrentCost,
    changePlan,
    createCreditCode,
    addCreditCode,
    getOrganizationBillingStatus,
    getClusterCurrentCost,
    generateInvoices,
    generateDueInvoices,
    listOrganizationInvoice,
    getOrganizationInvoice,
    getOrganizationInvoicePDF,
    downloadInvoicePdf,
    organizationDownloadAllInvoices,
    mailAllInvoices,
    recordInvoicePayment,
    listOrganizationCreditCards,
    addCreditCard,
    deleteCreditCard,
    getOrganizationBillingInfo,
    editOrganizationBillingInfo,
    getOrganizationBillingExternalId,
    generateBillingUsageReport,
    downloadUsageReport,
    deleteUsageReportByLink,
    removeExpiredUsageReports,
    creditLedger,
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
