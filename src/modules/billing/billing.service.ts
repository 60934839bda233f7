import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Mailer } from '../../mail/mailer.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { OrganizationView } from '../organizations/organizations.service.ts';
import { createBillingAccount } from './billing.account.ts';
import { createBillingContext } from './billing.context.ts';
import { createBillingCredits } from './billing.credits.ts';
import { createBillingInvoices } from './billing.invoices.ts';
import type { SignedLinks } from './billing.links.ts';
import { createBillingStatus } from './billing.status.ts';
import { createBillingUsage } from './billing.usage.ts';

// Names of the parts that callers import from here, where the service's contract has always been.
export { MAX_CREDIT_CODE_CENTS } from './billing.credits.ts';
export type { BillingInfoInput } from './billing.account.ts';
export type { UsageReportInput } from './billing.usage.ts';

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

/**
 * Billing (SPEC.md Billing, Billing status rule, Limits; docs/billing.md). Time comes from the clock alone. Money is
 * integer cents; the credit ledger is append-only and an organization's credit is the sum of its entries.
 *
 * The service is assembled from its parts over one shared context (billing.context.ts): plan and status
 * (billing.status.ts), credits (billing.credits.ts), invoices (billing.invoices.ts), the billing account and cards
 * (billing.account.ts), and metered usage with its reports (billing.usage.ts).
 */
export function createBillingService(deps: BillingDeps) {
  const context = createBillingContext(deps);
  const credits = createBillingCredits(context);
  const status = createBillingStatus(context, credits);
  const invoices = createBillingInvoices(context);
  const account = createBillingAccount(context);
  const usage = createBillingUsage(context);

  return {
    metering: usage.metering,
    planFeatures: status.planFeatures,
    deploymentsAllowed: status.deploymentsAllowed,
    getOrganizationCurrentCost: status.getOrganizationCurrentCost,
    changePlan: status.changePlan,
    createCreditCode: credits.createCreditCode,
    addCreditCode: credits.addCreditCode,
    getOrganizationBillingStatus: status.getOrganizationBillingStatus,
    getClusterCurrentCost: status.getClusterCurrentCost,
    generateInvoices: invoices.generateInvoices,
    generateDueInvoices: invoices.generateDueInvoices,
    listOrganizationInvoice: invoices.listOrganizationInvoice,
    getOrganizationInvoice: invoices.getOrganizationInvoice,
    getOrganizationInvoicePDF: invoices.getOrganizationInvoicePDF,
    downloadInvoicePdf: invoices.downloadInvoicePdf,
    organizationDownloadAllInvoices: invoices.organizationDownloadAllInvoices,
    mailAllInvoices: invoices.mailAllInvoices,
    recordInvoicePayment: invoices.recordInvoicePayment,
    listOrganizationCreditCards: account.listOrganizationCreditCards,
    addCreditCard: account.addCreditCard,
    deleteCreditCard: account.deleteCreditCard,
    getOrganizationBillingInfo: account.getOrganizationBillingInfo,
    editOrganizationBillingInfo: account.editOrganizationBillingInfo,
    getOrganizationBillingExternalId: account.getOrganizationBillingExternalId,
    generateBillingUsageReport: usage.generateBillingUsageReport,
    downloadUsageReport: usage.downloadUsageReport,
    deleteUsageReportByLink: usage.deleteUsageReportByLink,
    removeExpiredUsageReports: usage.removeExpiredUsageReports,
    creditLedger: credits.creditLedger,
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
