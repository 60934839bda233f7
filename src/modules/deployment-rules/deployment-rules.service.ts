import type { Kysely, Transaction } from 'kysely';
import type { Requester, ScheduledActor } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { DeploymentState } from '../../engine/deployment-states.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { EnvironmentMode } from '../environments/environments.service.ts';
import { timezoneFrom } from '../services/services.kind-job.ts';
import { latestScheduledAction, storedWeekdays, timeOfDayFrom, timeOfDayView, weekdaysOf, wildcardMatches, type ScheduledAction, type Weekday } from './deployment-rules.calendar.ts';
import {
  claimScheduleUntil,
  deleteProjectRule,
  findEnvironmentRule,
  findProjectRule,
  insertEnvironmentRuleUnlessPresent,
  insertProjectRule,
  listAutoStopRules,
  listProjectRules,
  nextPriorityIndex,
  updateEnvironmentRule,
  updateProjectRule,
  type EnvironmentDeploymentRuleRow,
  type ProjectDeploymentRuleRow,
} from './deployment-rules.repo.ts';
import type { EnvironmentDeploymentRuleBody, PriorityOrderBody, ProjectDeploymentRuleBody } from './deployment-rules.schemas.ts';

/**
 * Deployment rules (docs/deployment-rules.md): a project's rules, tried in priority order, place a new environment
 * whose name matches one (cluster, mode) and give it that rule's auto-stop schedule; every environment has one
 * environment rule holding its schedule, which the deployment-rules schedule applies (deployment-rules.schedule.ts)
 * by asking the deployments module to stop or deploy the environment. Projects, environments and clusters are other
 * modules'; this one reaches them through the ports below.
 */

export interface DeploymentRulesDeps {
  db: Kysely<DB>;
  clock: Clock;
  clusters: { findClusterSummary(organizationId: string, clusterId: string): Promise<ClusterSummary | undefined> };
  /** The deployments module's environment actions: what a schedule asks for is what a user's request would do. */
  deployments: {
    findEnvironmentState(environmentId: string): Promise<DeploymentState | undefined>;
    stopEnvironment(requester: Requester, environmentId: string): Promise<unknown>;
    deployEnvironment(requester: Requester, environmentId: string): Promise<unknown>;
  };
  log: { info(object: object, message: string): void };
}

/** A new environment's schedule when no project rule matches it: office hours, not stopped unless asked. */
export const DEFAULT_ENVIRONMENT_SCHEDULE = {
  timezone: 'UTC',
  startTime: '08:00',
  stopTime: '19:00',
  weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'] as Weekday[],
};

/** Who a scheduled stop or start is recorded as triggered by (the history's `triggered_by`). */
const SCHEDULE_ACTOR: ScheduledActor = { kind: 'schedule', name: 'deployment rule schedule', origin: 'PLATFORM_INTERNAL' };

interface CheckedSchedule {
  auto_stop: number;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string;
}

/** The schedule fields of a body, checked; each problem names its field. */
function checkedSchedule(body: { auto_stop?: boolean | undefined; timezone: string; start_time: string; stop_time: string; weekdays: Weekday[] }): CheckedSchedule {
  const timezone = timezoneFrom(body.timezone.trim(), '/timezone');
  const startTime = timeOfDayFrom(body.start_time, '/start_time');
  const stopTime = timeOfDayFrom(body.stop_time, '/stop_time');
  const autoStop = body.auto_stop === true;
  if (autoStop && body.weekdays.length === 0) {
    throw badRequest('an auto-stopped environment needs the weekdays it runs on', [{ field: '/weekdays', message: 'must list at least one weekday when auto_stop is true' }]);
  }
  // Stopping and starting at one instant would leave the environment to whichever ran last: refused, not guessed.
  if (autoStop && startTime === stopTime) {
    throw badRequest('start_time and stop_time are the same time', [{ field: '/stop_time', message: 'must differ from start_time when auto_stop is true' }]);
  }
  return { auto_stop: autoStop ? 1 : 0, timezone, start_time: startTime, stop_time: stopTime, weekdays: storedWeekdays(body.weekdays) };
}

function projectRuleView(row: ProjectDeploymentRuleRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    description: row.description,
    mode: row.mode as EnvironmentMode,
    cluster_id: row.cluster_id,
    auto_stop: row.auto_stop === 1,
    timezone: row.timezone,
    start_time: timeOfDayView(row.start_time),
    stop_time: timeOfDayView(row.stop_time),
    weekdays: weekdaysOf(row.weekdays),
    wildcard: row.wildcard,
    priority_index: row.priority_index,
  };
}

function environmentRuleView(row: EnvironmentDeploymentRuleRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    on_demand_preview: row.on_demand_preview === 1,
    auto_stop: row.auto_stop === 1,
    auto_preview: row.auto_preview === 1,
    timezone: row.timezone,
    start_time: timeOfDayView(row.start_time),
    stop_time: timeOfDayView(row.stop_time),
    weekdays: weekdaysOf(row.weekdays),
  };
}

function nameTaken(name: string): string {
  return `a deployment rule named "${name}" already exists in this project`;
}

export function createDeploymentRulesService(deps: DeploymentRulesDeps) {
  const { db, clock } = deps;

  async function requireProjectRule(executor: Queryable, projectId: string, ruleId: string): Promise<ProjectDeploymentRuleRow> {
    const row = await findProjectRule(executor, projectId, ruleId);
    if (row === undefined) throw notFound(`deployment rule ${ruleId} not found`);
    return row;
  }

  /** The project's first rule (by priority) whose wildcard matches the environment's name. */
  async function matchingProjectRule(executor: Queryable, projectId: string, environmentName: string): Promise<ProjectDeploymentRuleRow | undefined> {
    return (await listProjectRules(executor, projectId)).find((rule) => wildcardMatches(rule.wildcard, environmentName));
  }

  /** A rule's fields from its request body, checked: the cluster must be one of the organization's. */
  async function projectRuleFields(organizationId: string, body: ProjectDeploymentRuleBody) {
    if ((await deps.clusters.findClusterSummary(organizationId, body.cluster_id)) === undefined) {
      throw badRequest(`cluster ${body.cluster_id} is not a cluster of this organization`, [{ field: '/cluster_id', message: 'must be a cluster of the organization' }]);
    }
    const name = cleanName(body.name);
    return {
      name,
      name_key: nameKey(name),
      description: body.description ?? null,
      mode: body.mode,
      cluster_id: body.cluster_id,
      wildcard: body.wildcard.trim(),
      ...checkedSchedule(body),
    };
  }

  /** A write that may race its project's or cluster's deletion: the foreign key then says which is gone. */
  async function writingProjectRule<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await uniqueOrConflict(write, nameTaken(name));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound('the project or the cluster of this deployment rule no longer exists');
      throw error;
    }
  }

  /** The environment's rule as stored, written first with the defaults for an environment that has none yet. */
  async function environmentRuleOf(environmentId: string): Promise<EnvironmentDeploymentRuleRow> {
    const existing = await findEnvironmentRule(db, environmentId);
    if (existing !== undefined) return existing;
    try {
      await insertEnvironmentRuleUnlessPresent(db, defaultEnvironmentRule(environmentId));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`environment ${environmentId} not found`);
      throw error;
    }
    const written = await findEnvironmentRule(db, environmentId);
    if (written === undefined) throw notFound(`environment ${environmentId} not found`);
    return written;
  }

  function defaultEnvironmentRule(environmentId: string) {
    const now = isoTimestamp(clock);
    return {
      id: newId(),
      environment_id: environmentId,
      auto_stop: 0,
      on_demand_preview: 0,
      auto_preview: 0,
      timezone: DEFAULT_ENVIRONMENT_SCHEDULE.timezone,
      start_time: DEFAULT_ENVIRONMENT_SCHEDULE.startTime,
      stop_time: DEFAULT_ENVIRONMENT_SCHEDULE.stopTime,
      weekdays: storedWeekdays(DEFAULT_ENVIRONMENT_SCHEDULE.weekdays),
      schedule_applied_until: now,
      created_at: now,
      updated_at: now,
    };
  }

  /**
   * Carries one scheduled action out through the deployments module. A stop asks only what a user's stop would (409
   * when nothing is deployed, or while another action is under way: nothing to do then); a start deploys only an
   * environment that is STOPPED, so a schedule never redeploys one that runs, nor deploys one never deployed.
   */
  async function act(environmentId: string, action: ScheduledAction): Promise<void> {
    const state = await deps.deployments.findEnvironmentState(environmentId);
    if (state === undefined) return;
    if (action === 'start' && state !== 'STOPPED') {
      deps.log.info({ environmentId, state }, 'deployment rule: scheduled start skipped, the environment is not stopped');
      return;
    }
    try {
      if (action === 'stop') await deps.deployments.stopEnvironment(SCHEDULE_ACTOR, environmentId);
      else await deps.deployments.deployEnvironment(SCHEDULE_ACTOR, environmentId);
      deps.log.info({ environmentId, action }, 'deployment rule: scheduled action requested');
    } catch (error) {
      // A refusal (409 state, 402 billing, 403 no LOCAL grant, 404 gone) is the environment's answer, not the sweep's failure.
      if (!(error instanceof AppError)) throw error;
      deps.log.info({ environmentId, action, refused: error.message }, 'deployment rule: scheduled action refused');
    }
  }

  return {
    async listProjectDeploymentRules(projectId: string) {
      return (await listProjectRules(db, projectId)).map(projectRuleView);
    },

    async createDeploymentRule(organizationId: string, projectId: string, body: ProjectDeploymentRuleBody) {
      const fields = await projectRuleFields(organizationId, body);
      const now = isoTimestamp(clock);
      const id = newId();
      await writingProjectRule(fields.name, () =>
        db.transaction().execute(async (trx) => {
          await insertProjectRule(trx, { id, project_id: projectId, ...fields, priority_index: await nextPriorityIndex(trx, projectId), created_at: now, updated_at: now });
        }),
      );
      return projectRuleView(await requireProjectRule(db, projectId, id));
    },

    async getProjectDeploymentRule(projectId: string, ruleId: string) {
      return projectRuleView(await requireProjectRule(db, projectId, ruleId));
    },

    /** Changes the rule for environments created from now on; those it placed before keep what they were given. */
    async editProjectDeployemtnRule(organizationId: string, projectId: string, ruleId: string, body: ProjectDeploymentRuleBody) {
      await requireProjectRule(db, projectId, ruleId);
      const fields = await projectRuleFields(organizationId, body);
      const updated = await writingProjectRule(fields.name, () => updateProjectRule(db, projectId, ruleId, { ...fields, updated_at: isoTimestamp(clock) }));
      if (!updated) throw notFound(`deployment rule ${ruleId} not found`);
      return projectRuleView(await requireProjectRule(db, projectId, ruleId));
    },

    /** Removes the rule; the rules after it move up, so priorities stay 0…n-1. */
    async deleteProjectDeploymentRule(projectId: string, ruleId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        if (!(await deleteProjectRule(trx, projectId, ruleId))) throw notFound(`deployment rule ${ruleId} not found`);
        const remaining = await listProjectRules(trx, projectId);
        for (const [index, rule] of remaining.entries()) {
          if (rule.priority_index !== index) await updateProjectRule(trx, projectId, rule.id, { priority_index: index });
        }
      });
    },

    /** Sets the order the rules are tried in: the body must name each of the project's rules exactly once. */
    async updateDeploymentRulesPriorityOrder(projectId: string, body: PriorityOrderBody): Promise<void> {
      const field = '/project_deployment_rule_ids_in_order';
      const order = body.project_deployment_rule_ids_in_order;
      if (order === undefined) throw badRequest('the new order is missing', [{ field, message: "is required: every one of the project's rules, first tried first" }]);
      await db.transaction().execute(async (trx) => {
        const rules = await listProjectRules(trx, projectId);
        const known = new Set(rules.map((rule) => rule.id));
        const problems = order.flatMap((id, index) =>
          !known.has(id)
            ? [{ field: `${field}/${index}`, message: `no deployment rule ${id} in this project` }]
            : order.indexOf(id) !== index
              ? [{ field: `${field}/${index}`, message: `${id} is named twice` }]
              : [],
        );
        const missing = rules.filter((rule) => !order.includes(rule.id));
        if (missing.length > 0) problems.push({ field, message: `must name every rule of the project; missing ${missing.map((rule) => rule.id).join(', ')}` });
        if (problems.length > 0) throw badRequest("the order must name each of the project's deployment rules once", problems);
        const now = isoTimestamp(clock);
        for (const [index, id] of order.entries()) await updateProjectRule(trx, projectId, id, { priority_index: index, updated_at: now });
      });
    },

    async getEnvironmentDeploymentRule(environmentId: string) {
      return environmentRuleView(await environmentRuleOf(environmentId));
    },

    /**
     * Replaces the environment's schedule. The schedule starts afresh from now: a stop or start time that passed
     * before the edit is not acted on.
     */
    async editEnvironmentDeploymentRule(environmentId: string, ruleId: string, body: EnvironmentDeploymentRuleBody) {
      const current = await environmentRuleOf(environmentId);
      if (current.id !== ruleId) throw notFound(`deployment rule ${ruleId} not found`);
      const now = isoTimestamp(clock);
      const changes = {
        ...checkedSchedule(body),
        on_demand_preview: body.on_demand_preview === true ? 1 : 0,
        auto_preview: body.auto_preview === true ? 1 : 0,
        schedule_applied_until: now,
        updated_at: now,
      };
      if (!(await updateEnvironmentRule(db, environmentId, ruleId, changes))) throw notFound(`deployment rule ${ruleId} not found`);
      return environmentRuleView({ ...current, ...changes });
    },

    /**
     * The environments module's creation port: the cluster and mode of the project's rule matching a new
     * environment's name, for what the request leaves out.
     */
    async placementFor(projectId: string, environmentName: string): Promise<{ clusterId: string; mode: EnvironmentMode } | undefined> {
      const rule = await matchingProjectRule(db, projectId, environmentName);
      return rule === undefined ? undefined : { clusterId: rule.cluster_id, mode: rule.mode as EnvironmentMode };
    },

    /** In a new environment's transaction: its rule, with the matching project rule's schedule or the defaults. */
    async environmentCreated(trx: Transaction<DB>, environment: { id: string; projectId: string; name: string }): Promise<void> {
      const rule = await matchingProjectRule(trx, environment.projectId, environment.name);
      const row = defaultEnvironmentRule(environment.id);
      await insertEnvironmentRuleUnlessPresent(
        trx,
        rule === undefined
          ? row
          : { ...row, auto_stop: rule.auto_stop, timezone: rule.timezone, start_time: rule.start_time, stop_time: rule.stop_time, weekdays: rule.weekdays },
      );
    },

    /**
     * The schedule's sweep: for each auto-stopped environment whose stop or start time came since the rule was last
     * applied, the latest of them is claimed (compare-and-set of `schedule_applied_until`, so a sweep running twice,
     * or on two workers, acts once) and then carried out. Claimed before acting: a crash in between loses that one
     * action (the next scheduled one still happens) rather than risking a second stop or deploy.
     */
    async applyDueSchedules(): Promise<number> {
      const now = clock.now();
      let acted = 0;
      for (const rule of await listAutoStopRules(db)) {
        const due = latestScheduledAction(
          { timezone: rule.timezone, startTime: rule.start_time, stopTime: rule.stop_time, weekdays: weekdaysOf(rule.weekdays) },
          new Date(rule.schedule_applied_until),
          now,
        );
        if (due === undefined) continue;
        if (!(await claimScheduleUntil(db, rule.id, rule.schedule_applied_until, now.toISOString()))) continue;
        await act(rule.environment_id, due.action);
        acted += 1;
      }
      return acted;
    },
  };
}

export type DeploymentRulesService = ReturnType<typeof createDeploymentRulesService>;
