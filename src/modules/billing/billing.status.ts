import { isoTimestamp } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { answeredPlan } from '../organizations/organizations.schemas.ts';
import type { OrganizationView } from '../organizations/organizations.service.ts';
import { cost, DAY_MS, planOf, toAmount, type BillingContext } from './billing.context.ts';
import type { BillingCredits } from './billing.credits.ts';
import { periodBounds, periodOf } from './billing.metering.ts';
import { formatCents } from './billing.pdf.ts';
import { CURRENCY_CODE, findPlan, HOURS_PER_MONTH, PLANS, unitPriceFor } from './billing.plans.ts';
import * as repo from './billing.repo.ts';

/** SPEC.md Limits: a Startup organization's billing turns invalid once an invoice is unpaid for one week. */
const UNPAID_GRACE_MS = 7 * 24 * 3_600_000;

/**
 * An organization's plan and standing: what it costs so far, changing its plan, what the plan allows, the billing
 * status rule that gates deployments, and what a cluster costs on the plan.
 */
export function createBillingStatus(context: BillingContext, credits: Pick<BillingCredits, 'creditState'>) {
  const { deps } = context;
  const { db, clock } = deps;
  const { requireOrganization, trialEndsAt, currentPeriodUsage } = context;
  const { creditState } = credits;

  async function getOrganizationCurrentCost(organizationId: string) {
    const organization = await requireOrganization(organizationId);
    const plan = planOf(organization);
    const now = clock.now();
    const trialEnd = await trialEndsAt(organization, plan);
    const { beyondIncludedCents } = await currentPeriodUsage(organization, plan, now);
    const planPriceCents = trialEnd.getTime() <= periodBounds(periodOf(now)).to.getTime() ? plan.monthlyPriceCents : 0;
    return {
      plan: answeredPlan(plan.code),
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

  return { planFeatures, deploymentsAllowed, getOrganizationCurrentCost, changePlan, getOrganizationBillingStatus, getClusterCurrentCost };
}
