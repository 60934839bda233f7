import type { Queryable } from '../../db/db.schema.ts';
import { badRequest } from '../../lib/errors.ts';
import type { AlertRuleConditionBody, ConditionFunction, ConditionOperator } from './alerts.schemas.ts';

/**
 * What a rule can watch. Slipway runs no Prometheus: a condition is `kind: BUILT` and its `promql` names one of the
 * measures below, read from what Slipway itself records (docs/alerts.md):
 *
 *   deployment_failed   1 while the target's last deployment failed (BUILD_ERROR, DEPLOYMENT_ERROR; a cluster's
 *                       INVALID_CREDENTIALS too), else 0
 *   workload_failed     1 while the agent reports the service's workload FAILED (it stopped restarting), else 0
 *   workload_restarts   how many times the agent restarted the workload after a crash since its last deployment
 *
 * An ENVIRONMENT target measures each of its services and combines them with `function` (MAX unless given; COUNT
 * counts the services whose measure is above 0); for deployment_failed the environment's own last deployment counts
 * as one more. The condition holds when the measure compares with `threshold` by `operator`; without an operator
 * (or NONE) when it is above 0. CPU and memory are refused: no agent reports usage, so such a rule could never fire.
 */

export const MEASURES = ['deployment_failed', 'workload_failed', 'workload_restarts'] as const;
export type Measure = (typeof MEASURES)[number];

/** Where a rule looks: the target types as stored (the cluster without the reference's leading space). */
export type StoredTargetType = 'CLUSTER' | 'ENVIRONMENT' | 'APPLICATION' | 'CONTAINER' | 'JOB' | 'CRONJOB' | 'HELM' | 'TERRAFORM';
export const SERVICE_KIND_OF_TARGET: Record<Exclude<StoredTargetType, 'CLUSTER' | 'ENVIRONMENT'>, string> = {
  APPLICATION: 'APPLICATION',
  CONTAINER: 'CONTAINER',
  JOB: 'JOB',
  // A cron job is a JOB service with a schedule.
  CRONJOB: 'JOB',
  HELM: 'HELM',
  TERRAFORM: 'TERRAFORM',
};

const FAILED_DEPLOYMENT_STATES = ['BUILD_ERROR', 'DEPLOYMENT_ERROR'];
const FAILED_CLUSTER_STATES = ['BUILD_ERROR', 'DEPLOYMENT_ERROR', 'INVALID_CREDENTIALS'];
const USAGE_WORDS = /cpu|memory|mem_|ram\b|usage/i;
const MAX_FOR_DURATION_MS = 7 * 24 * 3600 * 1000;

export interface CheckedCondition {
  measure: Measure;
  operator: ConditionOperator;
  threshold: number;
  aggregate: ConditionFunction;
}

/** The length of an ISO 8601 duration of days, hours, minutes and seconds (PT5M, P1DT2H, PT0S); 400 otherwise. */
export function forDurationMs(text: string): number {
  const match = /^P(?:(\d{1,3})D)?(?:T(?:(\d{1,4})H)?(?:(\d{1,6})M)?(?:(\d{1,7}(?:\.\d{1,3})?)S)?)?$/.exec(text);
  const invalid = () => badRequest('invalid for_duration', [{ field: '/for_duration', message: 'must be an ISO 8601 duration of days, hours, minutes and seconds (e.g. PT5M), at most 7 days' }]);
  if (match === null || text === 'P' || text.endsWith('T')) throw invalid();
  const [, days, hours, minutes, seconds] = match;
  const ms = (Number(days ?? 0) * 86_400 + Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0)) * 1000;
  if (ms > MAX_FOR_DURATION_MS) throw invalid();
  return Math.round(ms);
}

/** The condition as the evaluator reads it, or 400 naming the field that cannot be watched. */
export function checkCondition(condition: AlertRuleConditionBody, targetType: StoredTargetType): CheckedCondition {
  const promql = condition.promql.trim();
  if (condition.kind === 'CUSTOM') {
    throw badRequest('custom PromQL conditions are not supported', [
      { field: '/condition/kind', message: `Slipway runs no Prometheus; use kind BUILT with promql one of ${MEASURES.join(', ')}` },
    ]);
  }
  if (!(MEASURES as readonly string[]).includes(promql)) {
    const message = USAGE_WORDS.test(promql)
      ? 'CPU and memory usage are not measured: Slipway’s agents report deployments and workload health, not resource usage'
      : `must be one of ${MEASURES.join(', ')}`;
    throw badRequest(`invalid condition: ${message}`, [{ field: '/condition/promql', message }]);
  }
  const measure = promql as Measure;
  if (targetType === 'CLUSTER' && measure !== 'deployment_failed') {
    throw badRequest('invalid condition for a cluster', [{ field: '/condition/promql', message: 'a cluster target can only watch deployment_failed' }]);
  }
  const operator = condition.operator ?? 'NONE';
  if (operator !== 'NONE' && condition.threshold === undefined) {
    throw badRequest('invalid condition: a threshold is needed with an operator', [{ field: '/condition/threshold', message: `required with operator ${operator}` }]);
  }
  return { measure, operator, threshold: condition.threshold ?? 0, aggregate: condition.function ?? 'NONE' };
}

export function conditionHolds(condition: CheckedCondition, value: number): boolean {
  switch (condition.operator) {
    case 'NONE':
      return value > 0;
    case 'ABOVE':
      return value > condition.threshold;
    case 'BELOW':
      return value < condition.threshold;
    case 'ABOVE_OR_EQUAL':
      return value >= condition.threshold;
    case 'BELOW_OR_EQUAL':
      return value <= condition.threshold;
    case 'EQUAL':
      return value === condition.threshold;
  }
}

function combine(values: number[], aggregate: ConditionFunction): number {
  if (values.length === 0) return 0;
  switch (aggregate) {
    case 'NONE':
    case 'MAX':
      return Math.max(...values);
    case 'MIN':
      return Math.min(...values);
    case 'SUM':
      return values.reduce((sum, value) => sum + value, 0);
    case 'AVG':
      return values.reduce((sum, value) => sum + value, 0) / values.length;
    case 'COUNT':
      return values.filter((value) => value > 0).length;
  }
}

interface RuntimeRow {
  status: string | null;
  workload_health: string | null;
  workload_restarts: number | null;
}

function measureService(row: RuntimeRow, measure: Measure): number {
  switch (measure) {
    case 'deployment_failed':
      return row.status !== null && FAILED_DEPLOYMENT_STATES.includes(row.status) ? 1 : 0;
    case 'workload_failed':
      return row.workload_health === 'FAILED' ? 1 : 0;
    case 'workload_restarts':
      return Number(row.workload_restarts ?? 0);
  }
}

/** The measure of a rule's target now; undefined when the target is gone (the rule then resolves). */
export async function measureTarget(
  db: Queryable,
  rule: { organization_id: string; cluster_id: string; target_type: string; target_id: string },
  condition: CheckedCondition,
): Promise<number | undefined> {
  const type = rule.target_type as StoredTargetType;
  if (type === 'CLUSTER') {
    const cluster = await db.selectFrom('clusters').select('status').where('id', '=', rule.target_id).where('organization_id', '=', rule.organization_id).executeTakeFirst();
    return cluster === undefined ? undefined : FAILED_CLUSTER_STATES.includes(cluster.status) ? 1 : 0;
  }
  if (type === 'ENVIRONMENT') {
    const environment = await db
      .selectFrom('environments')
      .select('status')
      .where('id', '=', rule.target_id)
      .where('organization_id', '=', rule.organization_id)
      .executeTakeFirst();
    if (environment === undefined) return undefined;
    const rows = await db
      .selectFrom('services')
      .leftJoin('service_runtime', 'service_runtime.service_id', 'services.id')
      .select(['service_runtime.status', 'service_runtime.workload_health', 'service_runtime.workload_restarts'])
      .where('services.environment_id', '=', rule.target_id)
      .execute();
    const values = rows.map((row) => measureService(row, condition.measure));
    if (condition.measure === 'deployment_failed') values.push(FAILED_DEPLOYMENT_STATES.includes(environment.status) ? 1 : 0);
    return combine(values, condition.aggregate);
  }
  const row = await db
    .selectFrom('services')
    .leftJoin('service_runtime', 'service_runtime.service_id', 'services.id')
    .select(['service_runtime.status', 'service_runtime.workload_health', 'service_runtime.workload_restarts'])
    .where('services.id', '=', rule.target_id)
    .where('services.organization_id', '=', rule.organization_id)
    .executeTakeFirst();
  return row === undefined ? undefined : measureService(row, condition.measure);
}
