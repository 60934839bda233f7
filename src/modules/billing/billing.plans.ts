/**
 * Plans and prices, shipped as data with the code (docs/billing.md). Changing a price is a code change reviewed
 * like any other; rows that were charged keep the plan code and the unit price they were charged at, so a price
 * change never rewrites a past invoice.
 */

export interface PlanDefinition {
  code: string;
  displayName: string;
  /** Charged on each invoice once the trial is over; 0 for credit-based plans. */
  monthlyPriceCents: number;
  /** Running time each month's usage may use before the organization's credits are drawn on. */
  includedUsageCents: number;
  selfManagedClusters: boolean;
  trialDays: number;
  /**
   * CREDITS: usage is paid from credits and billing turns invalid when none is left (SPEC.md, Community).
   * INVOICE: usage and the plan price are invoiced monthly; invalid once an invoice is unpaid for a week (Startup).
   */
  billingMode: 'CREDITS' | 'INVOICE';
  /** Percent of the list price of running time charged on this plan. */
  usagePricePercent: number;
  auditLogsRetentionDays: number;
}

const plan = (code: string, displayName: string, fields: Omit<PlanDefinition, 'code' | 'displayName'>): PlanDefinition => ({
  code,
  displayName,
  ...fields,
});

const INVOICED = { billingMode: 'INVOICE', selfManagedClusters: true, includedUsageCents: 0, trialDays: 14 } as const;

/**
 * COMMUNITY and STARTUP are Slipway's own plans (SPEC.md's billing status rule); the others are the reference's
 * PlanEnum names, so existing clients can send them. FREE is credit-based like COMMUNITY; every other reference
 * plan is invoiced like STARTUP, at its own price.
 */
export const PLANS: readonly PlanDefinition[] = [
  plan('COMMUNITY', 'Community', {
    monthlyPriceCents: 0,
    includedUsageCents: 500,
    selfManagedClusters: false,
    trialDays: 0,
    billingMode: 'CREDITS',
    usagePricePercent: 100,
    auditLogsRetentionDays: 7,
  }),
  plan('STARTUP', 'Startup', { ...INVOICED, monthlyPriceCents: 4900, usagePricePercent: 100, auditLogsRetentionDays: 30 }),
  plan('FREE', 'Free', {
    monthlyPriceCents: 0,
    includedUsageCents: 500,
    selfManagedClusters: false,
    trialDays: 0,
    billingMode: 'CREDITS',
    usagePricePercent: 100,
    auditLogsRetentionDays: 7,
  }),
  plan('PROFESSIONAL', 'Professional', { ...INVOICED, monthlyPriceCents: 4900, usagePricePercent: 100, auditLogsRetentionDays: 30 }),
  plan('TEAM', 'Team', { ...INVOICED, monthlyPriceCents: 29900, usagePricePercent: 95, auditLogsRetentionDays: 30 }),
  plan('TEAM_YEARLY', 'Team (yearly)', { ...INVOICED, monthlyPriceCents: 24900, usagePricePercent: 95, auditLogsRetentionDays: 30 }),
  plan('BUSINESS', 'Business', { ...INVOICED, monthlyPriceCents: 89900, usagePricePercent: 90, auditLogsRetentionDays: 90 }),
  plan('ENTERPRISE', 'Enterprise', { ...INVOICED, monthlyPriceCents: 199900, usagePricePercent: 85, auditLogsRetentionDays: 365 }),
  plan('ENTERPRISE_YEARLY', 'Enterprise (yearly)', { ...INVOICED, monthlyPriceCents: 169900, usagePricePercent: 85, auditLogsRetentionDays: 365 }),
  plan('USER_2025', 'User', { ...INVOICED, monthlyPriceCents: 1900, usagePricePercent: 100, auditLogsRetentionDays: 30 }),
  plan('TEAM_2025', 'Team', { ...INVOICED, monthlyPriceCents: 29900, usagePricePercent: 95, auditLogsRetentionDays: 30 }),
  plan('BUSINESS_2025', 'Business', { ...INVOICED, monthlyPriceCents: 89900, usagePricePercent: 90, auditLogsRetentionDays: 90 }),
  plan('ENTERPRISE_2025', 'Enterprise', { ...INVOICED, monthlyPriceCents: 199900, usagePricePercent: 85, auditLogsRetentionDays: 365 }),
];

export function findPlan(code: string): PlanDefinition | undefined {
  return PLANS.find((candidate) => candidate.code === code);
}

/** For the organization view's `organization_plan`; an unknown code (an older installation's) gets Community's. */
export function auditLogRetentionDays(code: string): number {
  return (findPlan(code) ?? findPlan('COMMUNITY'))?.auditLogsRetentionDays ?? 7;
}

/** The currency every price and invoice is in. */
export const CURRENCY_CODE = 'USD';

/** Hours in a billing month as cloud providers count them (365 × 24 / 12); a monthly cost range uses it. */
export const HOURS_PER_MONTH = 730;

export interface UnitPrice {
  cloudProvider: string;
  /** The instance type, or for services a size key such as `service.small`. */
  priceKey: string;
  /** List price of one node (or service instance) for one hour, in millicents (1/1000 cent). */
  millicentsPerHour: number;
}

const price = (cloudProvider: string, priceKey: string, centsPerHour: number): UnitPrice => ({
  cloudProvider,
  priceKey,
  millicentsPerHour: Math.round(centsPerHour * 1000),
});

/**
 * List prices per node-hour in cents, by cloud provider and instance type (on-demand prices of the providers'
 * common regions, rounded), plus the sizes services run at. ON_PREMISE (the installation's own host) costs nothing.
 */
export const PRICE_TABLE: readonly UnitPrice[] = [
  price('AWS', 't3.small', 2.08),
  price('AWS', 't3.medium', 4.16),
  price('AWS', 't3.large', 8.32),
  price('AWS', 't3.xlarge', 16.64),
  price('AWS', 't3a.medium', 3.76),
  price('AWS', 't3a.large', 7.52),
  price('AWS', 'm5.large', 9.6),
  price('AWS', 'm5.xlarge', 19.2),
  price('AWS', 'm6i.large', 9.6),
  price('AWS', 'c5.large', 8.5),
  price('AWS', 'c5.xlarge', 17.0),
  price('AWS', 'r5.large', 12.6),
  price('GCP', 'e2-standard-2', 6.7),
  price('GCP', 'e2-standard-4', 13.4),
  price('GCP', 'n2-standard-2', 9.71),
  price('GCP', 'n2-standard-4', 19.42),
  price('AZURE', 'Standard_B2s', 4.16),
  price('AZURE', 'Standard_D2s_v3', 9.6),
  price('AZURE', 'Standard_D4s_v3', 19.2),
  price('SCW', 'DEV1-M', 2.2),
  price('SCW', 'DEV1-L', 4.4),
  price('SCW', 'GP1-XS', 9.1),
  price('SCW', 'PRO2-XS', 6.0),
  price('ON_PREMISE', 'LOCAL', 0),
  price('ANY', 'service.small', 1.0),
  price('ANY', 'service.medium', 2.0),
  price('ANY', 'service.large', 4.0),
];

/** What an unknown instance type or size is charged at: the dearest entry of its kind, so nothing runs for free by mistake. */
const FALLBACK_PRICE: Record<'CLUSTER' | 'SERVICE', UnitPrice> = {
  CLUSTER: price('ANY', 'cluster.unlisted', 19.42),
  SERVICE: price('ANY', 'service.unlisted', 4.0),
};

export function unitPriceFor(resourceType: 'CLUSTER' | 'SERVICE', priceKey: string, cloudProvider?: string): UnitPrice {
  const matches = PRICE_TABLE.filter((entry) => entry.priceKey === priceKey);
  const exact = cloudProvider === undefined ? undefined : matches.find((entry) => entry.cloudProvider === cloudProvider);
  return exact ?? matches[0] ?? FALLBACK_PRICE[resourceType];
}
