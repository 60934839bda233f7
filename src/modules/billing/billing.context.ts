import { forbidden, notFound } from '../../lib/errors.ts';
import type { SignedLinks } from './billing.links.ts';
import { chargesFor, periodBounds, periodOf, sumCents, type ResourceCharge } from './billing.metering.ts';
import { CURRENCY_CODE, findPlan, type PlanDefinition } from './billing.plans.ts';
import * as repo from './billing.repo.ts';
import type { BillingDeps } from './billing.service.ts';

export const DAY_MS = 24 * 3_600_000;

export function toAmount(cents: number): number {
  return cents / 100;
}

export function cost(cents: number) {
  return { total_in_cents: cents, total: toAmount(cents), currency_code: CURRENCY_CODE };
}

export function planOf(organization: repo.BilledOrganization): PlanDefinition {
  // Every code the organizations module accepts is in PLANS; an unknown one (an older installation's) bills as COMMUNITY.
  return findPlan(organization.plan) ?? (findPlan('COMMUNITY') as PlanDefinition);
}

/**
 * What the parts of the billing service (assembled in billing.service.ts) share: the billed organization, its trial
 * and its running time so far, and the signed download links of invoices and usage reports.
 */
export function createBillingContext(deps: BillingDeps) {
  const { db, clock, links } = deps;

  async function requireOrganization(organizationId: string): Promise<repo.BilledOrganization> {
    const organization = await repo.findBilledOrganization(db, organizationId);
    if (organization === undefined) throw notFound(`organization ${organizationId} not found`);
    return organization;
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

  /** Running time of the current period so far, and what of it is beyond the plan's included usage. */
  async function currentPeriodUsage(organization: repo.BilledOrganization, plan: PlanDefinition, now: Date) {
    const { from } = periodBounds(periodOf(now));
    const usageCents = sumCents(await usageCharges(organization.id, from, now, plan));
    return { usageCents, beyondIncludedCents: Math.max(0, usageCents - plan.includedUsageCents) };
  }

  function downloadUrl(path: string, purpose: Parameters<SignedLinks['sign']>[0], id: string, expiresAt: Date): string {
    return `${deps.publicUrl.replace(/\/+$/, '')}${path}?${links.sign(purpose, id, expiresAt)}`;
  }

  /** A signed link's answer: a link we never signed (or altered) names nothing (404); an expired one is refused (403). */
  function checkLink(purpose: Parameters<SignedLinks['verify']>[0], id: string, expires: string | undefined, signature: string | undefined): void {
    const verdict = links.verify(purpose, id, expires, signature, clock.now());
    if (verdict === 'forged') throw notFound('no such download');
    if (verdict === 'expired') throw forbidden('this download link has expired; ask for a new one');
  }

  return { deps, requireOrganization, trialEndsAt, usageCharges, currentPeriodUsage, downloadUrl, checkLink };
}

export type BillingContext = ReturnType<typeof createBillingContext>;
