import { Type, type Static } from 'typebox';
import { HISTORY_ACTION, QUEUED_ACTIONS, queuedActionOf, referenceStatus, waitingMessage } from '../../engine/deployment-states.ts';
import { enqueueJobOf, jobKind } from '../../jobs/job-kinds.ts';
import { createEnvironmentHistory, durationSeconds } from './environments.history.ts';
import type { Placement } from '../../auth/principal.ts';
import type { Kysely, Transaction } from 'kysely';
import { principalDisplayName, actingUserId, type Principal } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { cancelQueuedJob } from '../../jobs/job-queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { RemovedContents } from '../projects/projects.service.ts';
import { publishDeploymentTransition, type DeploymentEventSource, type EventPublisher } from '../webhooks/webhooks.events.ts';
import { bumpConfigRevision, countEnvironmentsByProject, deleteEnvironmentRow, findDeployment, findEnvironment, insertDeployment, insertEnvironment, listDeploymentJobIds, listEnvironments, updateDeployment, updateEnvironment, updateEnvironmentInStatus, type EnvironmentDeploymentRow, type EnvironmentRow } from './environments.repo.ts';
import { type CloneEnvironmentBody, type CreateEnvironmentBody, type EditEnvironmentBody, type RebootServicesBody } from './environments.schemas.ts';
import { isSettled, requestedState, stateOf, TAKE_EVENT, transitionOf, type EnvironmentProgress, type EnvironmentState, type QueuedAction } from './environments.states.ts';

export type EnvironmentMode = 'PRODUCTION' | 'STAGING' | 'DEVELOPMENT' | 'PREVIEW';

/** What other modules may know of an environment (variables scope to it, services live in it). */
export interface EnvironmentSummary {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  mode: EnvironmentMode;
  clusterId: string;
  createdAt: string;
}

/** The job that carries an environment action out; the cluster's agent (issue 9) registers its handler. */
export const ENVIRONMENT_ACTION_JOB = 'environment.action';

export const EnvironmentActionPayload = Type.Object({
  environmentId: Type.String(),
  deploymentId: Type.String(),
  action: Type.Enum(QUEUED_ACTIONS),
  requestedAt: Type.String(),
  /** Who asked (the services' deployments it fans out into name them); absent in jobs written before it existed. */
  triggeredBy: Type.Optional(Type.String()),
  /** rebootServices naming services: only those restart. */
  serviceIds: Type.Optional(Type.Array(Type.String())),
});
export type EnvironmentActionPayload = Static<typeof EnvironmentActionPayload>;
export const ENVIRONMENT_ACTION = jobKind(ENVIRONMENT_ACTION_JOB, EnvironmentActionPayload);

/** The variables module's part of a clone: copies the ENVIRONMENT-scoped variables and secrets, in the clone's transaction. */
export interface EnvironmentVariablesCopier {
  copyEnvironmentVariables(trx: Transaction<DB>, fromEnvironmentId: string, toEnvironmentId: string): Promise<void>;
}

/** Until the variables module exists, environments hold no variables, so a clone has none to copy. */
export const NO_ENVIRONMENT_VARIABLES: EnvironmentVariablesCopier = { copyEnvironmentVariables: async () => undefined };

export interface EnvironmentsDeps {
  db: Kysely<DB>;
  clock: Clock;
  clusters: {
    findClusterSummary(organizationId: string, clusterId: string): Promise<ClusterSummary | undefined>;
    listOrganizationCluster(organizationId: string): Promise<Array<{ id: string }>>;
  };
  variables: EnvironmentVariablesCopier;
  /**
   * Refuses an action that starts workloads on the cluster by throwing (the clusters module's admitDeployment): 403
   * on a LOCAL cluster the organization holds no grant for, 402 while its billing is not valid.
   */
  deploymentGate: (organizationId: string, clusterId: string) => Promise<void>;
  /** The services module: the environment's services (rebootServices names them); without it, an environment holds none. */
  services?: {
    listEnvironmentServices(environmentId: string): Promise<Array<{ id: string; kind: string }>>;
    /** Removes the environment's services in its delete's transaction (their workloads' teardown queued). */
    removeEnvironmentServices(trx: Transaction<DB>, environmentId: string, options: { teardown: boolean }): Promise<string[]>;
    servicesRemoved(serviceIds: readonly string[]): Promise<void>;
  };
  /** Deployment events for the webhooks, published in the transaction of each move (none unless given). */
  events?: { publisher: EventPublisher; sourceOf(environment: EnvironmentSummary): Promise<DeploymentEventSource> };
}

/** Actions that start workloads, and so cost money; a stop is always allowed. */
const COSTS_MONEY: ReadonlySet<QueuedAction> = new Set(['deploy', 'redeploy', 'restart']);

function modeOf(row: EnvironmentRow): EnvironmentMode {
  return row.mode as EnvironmentMode;
}

function summaryOf(row: EnvironmentRow): EnvironmentSummary {
  return {
    id: row.id,
    projectId: row.project_id,
    organizationId: row.organization_id,
    name: row.name,
    mode: modeOf(row),
    clusterId: row.cluster_id,
    createdAt: row.created_at,
  };
}

function deploymentStatusOf(row: EnvironmentRow): 'NEVER_DEPLOYED' | 'UP_TO_DATE' | 'OUT_OF_DATE' {
  if (row.deployed_revision === null) return 'NEVER_DEPLOYED';
  return row.deployed_revision === row.config_revision ? 'UP_TO_DATE' : 'OUT_OF_DATE';
}

function environmentView(row: EnvironmentRow, cluster: ClusterSummary | undefined) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    organization: { id: row.organization_id },
    project: { id: row.project_id },
    ...(row.last_updated_by === null ? {} : { last_updated_by: row.last_updated_by }),
    cloud_provider: cluster === undefined ? {} : { provider: cluster.cloudProvider, cluster: cluster.name },
    mode: modeOf(row),
    cluster_id: row.cluster_id,
    ...(cluster === undefined ? {} : { cluster_name: cluster.name }),
    expires_at: null,
  };
}
export type EnvironmentView = ReturnType<typeof environmentView>;


/** Inserts an environment: a taken name is a conflict, a project or cluster removed meanwhile a 404. */
async function insertOrRefuse(write: () => Promise<void>, name: string): Promise<void> {
  try {
    await uniqueOrConflict(write, nameTaken(name));
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound('the project or the cluster of this environment no longer exists');
    throw error;
  }
}

function nameTaken(name: string): string {
  return `an environment named "${name}" already exists in this project`;
}


export function createEnvironmentsService(deps: EnvironmentsDeps) {
  const history = createEnvironmentHistory({ db: deps.db, clock: deps.clock });
  const { db, clock } = deps;

  async function requireEnvironment(executor: Queryable, environmentId: string): Promise<EnvironmentRow> {
    const row = await findEnvironment(executor, environmentId);
    if (row === undefined) throw notFound(`environment ${environmentId} not found`);
    return row;
  }

  /** The cluster an environment is placed on: one of the organization's (404 otherwise), or its only one. */
  async function placementCluster(organizationId: string, clusterId: string | undefined, field: string): Promise<ClusterSummary> {
    if (clusterId === undefined) {
      const clusters = await deps.clusters.listOrganizationCluster(organizationId);
      const only = clusters.length === 1 ? clusters[0] : undefined;
      if (only === undefined) {
        throw badRequest(`name the cluster the environment runs on: this organization has ${clusters.length} clusters`, [
          { field, message: 'is required unless the organization has exactly one cluster' },
        ]);
      }
      clusterId = only.id;
    }
    const cluster = await deps.clusters.findClusterSummary(organizationId, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    return cluster;
  }

  async function viewsOf(rows: EnvironmentRow[]): Promise<EnvironmentView[]> {
    const clusters = new Map<string, ClusterSummary | undefined>();
    for (const row of rows) {
      if (!clusters.has(row.cluster_id)) clusters.set(row.cluster_id, await deps.clusters.findClusterSummary(row.organization_id, row.cluster_id));
    }
    return rows.map((row) => environmentView(row, clusters.get(row.cluster_id)));
  }

  async function viewOf(row: EnvironmentRow): Promise<EnvironmentView> {
    return environmentView(row, await deps.clusters.findClusterSummary(row.organization_id, row.cluster_id));
  }

  async function lastDeployment(row: EnvironmentRow, executor: Queryable = db): Promise<EnvironmentDeploymentRow | undefined> {
    return row.last_deployment_id === null ? undefined : findDeployment(executor, row.last_deployment_id);
  }

  /** Where an environment lives, for its deployment events (read before a transaction: it asks other modules). */
  async function eventSourceOf(environmentId: string): Promise<DeploymentEventSource | undefined> {
    if (deps.events === undefined) return undefined;
    const row = await findEnvironment(db, environmentId);
    return row === undefined ? undefined : deps.events.sourceOf(summaryOf(row));
  }

  async function publishMove(trx: Transaction<DB>, source: DeploymentEventSource | undefined, move: Parameters<typeof publishDeploymentTransition>[3]) {
    if (source !== undefined && deps.events !== undefined) await publishDeploymentTransition(deps.events.publisher, trx, source, move);
  }

  async function environmentStatusView(row: EnvironmentRow) {
    const state = stateOf(row);
    const last = await lastDeployment(row);
    return {
      id: row.id,
      state,
      last_deployment_date: last?.created_at ?? null,
      last_deployment_state: last === undefined ? state : stateOf({ id: last.id, status: last.status }),
      last_deployment_id: last?.job_id ?? null,
      total_deployment_duration_in_seconds: last?.finished_at ? Math.round(durationSeconds(last, clock.now())) : null,
      origin: (last?.origin ?? null) as 'API' | null,
      triggered_by: last?.triggered_by ?? null,
      deployment_status: deploymentStatusOf(row),
      deployment_request_id: last?.id ?? null,
      metrics: null,
      /** Slipway's addition: why the environment waits or failed. */
      message: last?.message ?? null,
    };
  }

  /** The reference's service-shaped Status, which deployEnvironment and rebootServices answer. */
  async function actionStatusView(row: EnvironmentRow) {
    const state = stateOf(row);
    const last = await lastDeployment(row);
    return { ...referenceStatus(row.id, state, deploymentStatusOf(row), last), message: last?.message ?? null };
  }

  /**
   * Moves an environment into QUEUED for an action and writes its history record and the job that carries it out,
   * in one transaction. The job waits for the cluster's agent; nothing here pretends to do its work.
   */
  async function requestAction(principal: Principal, environmentId: string, action: QueuedAction, serviceIds?: string[]): Promise<EnvironmentRow> {
    // Clusters and billing read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const before = await requireEnvironment(db, environmentId);
    if ((await deps.clusters.findClusterSummary(before.organization_id, before.cluster_id)) === undefined) {
      throw conflict(`cannot ${action} environment: its cluster ${before.cluster_id} no longer exists`);
    }
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(before.organization_id, before.cluster_id);
    return db.transaction().execute(async (trx) => {
      const current = await requireEnvironment(trx, environmentId);
      const from = stateOf(current);
      const to = requestedState(from, action, current.deployed_revision !== null);
      const now = clock.now().toISOString();
      const deploymentId = newId();
      const payload: EnvironmentActionPayload = {
        environmentId,
        deploymentId,
        action,
        requestedAt: now,
        triggeredBy: principalDisplayName(principal),
        ...(serviceIds === undefined ? {} : { serviceIds }),
      };
      const jobId = await enqueueJobOf(trx, clock, ENVIRONMENT_ACTION, payload, { serialKey: `environment:${environmentId}` });
      await insertDeployment(trx, {
        id: deploymentId,
        environment_id: environmentId,
        action: HISTORY_ACTION[action],
        status: to,
        message: waitingMessage(action),
        origin: 'API',
        triggered_by: principalDisplayName(principal),
        job_id: jobId,
        config_revision: current.config_revision,
        created_at: now,
        updated_at: now,
        finished_at: null,
        services_requested_at: null,
      });
      const moved = await updateEnvironmentInStatus(trx, environmentId, from, { status: to, last_deployment_id: deploymentId, updated_at: now });
      if (!moved) throw conflict(`cannot ${action} environment: its state changed meanwhile; read it again`);
      return { ...current, status: to, last_deployment_id: deploymentId, updated_at: now };
    });
  }



  /**
   * Removes the environment and, by foreign keys, its history and whatever later modules keep for it; its queued
   * jobs are withdrawn. Refused while the cluster's agent is working on it. Answers the services removed with it.
   */
  async function removeEnvironmentIn(trx: Transaction<DB>, environmentId: string, teardown: boolean): Promise<string[]> {
    const current = await requireEnvironment(trx, environmentId);
    requestedState(stateOf(current), 'delete', current.deployed_revision !== null);
    for (const jobId of await listDeploymentJobIds(trx, environmentId)) await cancelQueuedJob(trx, clock, jobId);
    const serviceIds = (await deps.services?.removeEnvironmentServices(trx, environmentId, { teardown })) ?? [];
    await deleteEnvironmentRow(trx, environmentId);
    return serviceIds;
  }
  return {
    /**
     * The variables module's change listener (SPEC.md variable rule 4): inside the transaction that changed a
     * project's or an environment's variables, deployed environments that see them become OUT_OF_DATE.
     */
    async variablesChanged(trx: Transaction<DB>, change: { projectId: string; environmentId: string | null }): Promise<void> {
      await bumpConfigRevision(trx, change, clock.now().toISOString());
    },

    async listEnvironment(projectId: string): Promise<EnvironmentView[]> {
      return viewsOf(await listEnvironments(db, projectId));
    },

    async createEnvironment(principal: Principal, organizationId: string, projectId: string, body: CreateEnvironmentBody): Promise<EnvironmentView> {
      const cluster = await placementCluster(organizationId, body.cluster, '/cluster');
      const now = clock.now().toISOString();
      const id = newId();
      const name = cleanName(body.name);
      await insertOrRefuse(
        () =>
          insertEnvironment(db, {
            id,
            organization_id: organizationId,
            project_id: projectId,
            cluster_id: cluster.id,
            name,
            name_key: nameKey(name),
            mode: body.mode ?? 'DEVELOPMENT',
            status: 'READY',
            deployed_revision: null,
            last_deployment_id: null,
            last_updated_by: actingUserId(principal) ?? null,
            created_at: now,
            updated_at: now,
          }),
        name,
      );
      return viewOf(await requireEnvironment(db, id));
    },

    /** Whether this environment action was already fanned out into its services' deployments (deployments.dispatch.ts). */
    async servicesRequested(deploymentId: string): Promise<boolean> {
      return ((await findDeployment(db, deploymentId))?.services_requested_at ?? null) !== null;
    },

    /** Records that the action was fanned out, so no worker asks its services again. */
    async markServicesRequested(deploymentId: string): Promise<void> {
      await updateDeployment(db, deploymentId, { services_requested_at: clock.now().toISOString() });
    },

    async getEnvironment(environmentId: string): Promise<EnvironmentView> {
      return viewOf(await requireEnvironment(db, environmentId));
    },

    /** Renames or changes the mode; a mode change is deployed configuration, so a deployed environment becomes OUT_OF_DATE. */
    async editEnvironment(principal: Principal, environmentId: string, body: EditEnvironmentBody): Promise<EnvironmentView> {
      const current = await requireEnvironment(db, environmentId);
      const name = body.name === undefined ? current.name : cleanName(body.name);
      const mode = body.mode ?? current.mode;
      await uniqueOrConflict(
        () =>
          updateEnvironment(db, environmentId, {
            name,
            name_key: nameKey(name),
            mode,
            config_revision: mode === current.mode ? current.config_revision : current.config_revision + 1,
            last_updated_by: actingUserId(principal) ?? current.last_updated_by,
            updated_at: clock.now().toISOString(),
          }),
        nameTaken(name),
      );
      return viewOf(await requireEnvironment(db, environmentId));
    },

    /** `skipReconcile`: the records go, what runs on the cluster stays (the reference's delete parameter). */
    async deleteEnvironment(environmentId: string, options: { skipReconcile?: boolean | undefined } = {}): Promise<void> {
      const removed = await db.transaction().execute((trx) => removeEnvironmentIn(trx, environmentId, options.skipReconcile !== true));
      await deps.services?.servicesRemoved(removed);
    },

    /**
     * Inside the transaction that deletes a project: removes each of its environments as deleteEnvironment does, its
     * workloads handed to their clusters' agents to tear down (refused, 409, while an agent works on one). The answer
     * names the removed services (their teardown jobs have their serial keys) and what to run once that transaction
     * committed.
     */
    async removeProjectEnvironments(trx: Transaction<DB>, projectId: string): Promise<RemovedContents> {
      const removed: string[] = [];
      for (const environment of await listEnvironments(trx, projectId)) removed.push(...(await removeEnvironmentIn(trx, environment.id, true)));
      return { serviceIds: removed, afterCommit: async () => deps.services?.servicesRemoved(removed) };
    },

    /** A new environment in the same project with the source's settings, never its history; variables when asked. */
    async cloneEnvironment(principal: Principal, environmentId: string, body: CloneEnvironmentBody): Promise<EnvironmentView> {
      const source = await requireEnvironment(db, environmentId);
      const cluster = await placementCluster(source.organization_id, body.cluster_id ?? source.cluster_id, '/cluster_id');
      const now = clock.now().toISOString();
      const id = newId();
      const name = cleanName(body.name);
      await insertOrRefuse(
        () =>
          db.transaction().execute(async (trx) => {
            await insertEnvironment(trx, {
              id,
              organization_id: source.organization_id,
              project_id: source.project_id,
              cluster_id: cluster.id,
              name,
              name_key: nameKey(name),
              mode: body.mode ?? source.mode,
              status: 'READY',
              deployed_revision: null,
              last_deployment_id: null,
              last_updated_by: actingUserId(principal) ?? null,
              created_at: now,
              updated_at: now,
            });
            if (body.clone_variables === true) await deps.variables.copyEnvironmentVariables(trx, source.id, id);
          }),
        name,
      );
      return viewOf(await requireEnvironment(db, id));
    },

    async getEnvironmentStatus(environmentId: string) {
      return environmentStatusView(await requireEnvironment(db, environmentId));
    },

    async deployEnvironment(principal: Principal, environmentId: string) {
      return actionStatusView(await requestAction(principal, environmentId, 'deploy'));
    },

    async redeployEnvironment(principal: Principal, environmentId: string) {
      return environmentStatusView(await requestAction(principal, environmentId, 'redeploy'));
    },

    async stopEnvironment(principal: Principal, environmentId: string) {
      return environmentStatusView(await requestAction(principal, environmentId, 'stop'));
    },

    /**
     * Restarts the environment's services: those named, or all of them. Each id given must name a service of this
     * environment of the field's kind (400 naming each one that does not); the environment's restart job carries the
     * restart into the named services' own deployments.
     */
    async rebootServices(principal: Principal, environmentId: string, body: RebootServicesBody) {
      const fields = [
        ['application_ids', 'APPLICATION'],
        ['database_ids', 'DATABASE'],
        ['container_ids', 'CONTAINER'],
      ] as const;
      const given = fields.some(([field]) => (body[field] ?? []).length > 0);
      const kinds = new Map<string, string>();
      if (given) for (const service of (await deps.services?.listEnvironmentServices(environmentId)) ?? []) kinds.set(service.id, service.kind);
      const unknown = fields.flatMap(([field, kind]) =>
        (body[field] ?? [])
          .map((id, index) => ({ id, index }))
          .filter(({ id }) => kinds.get(id) !== kind)
          .map(({ id, index }) => ({ field: `/${field}/${index}`, message: `no ${kind.toLowerCase()} ${id} in this environment` })),
      );
      if (unknown.length > 0) {
        await requireEnvironment(db, environmentId);
        throw badRequest('unknown services', unknown);
      }
      const named = given ? fields.flatMap(([field]) => body[field] ?? []) : undefined;
      return actionStatusView(await requestAction(principal, environmentId, 'restart', named));
    },

    /** Cancels the action under way: a queued one at once (its job is withdrawn), a running deploy at the agent's next step. */
    async cancelEnvironmentDeployment(environmentId: string) {
      const source = await eventSourceOf(environmentId);
      const row = await db.transaction().execute(async (trx) => {
        const current = await requireEnvironment(trx, environmentId);
        const from = stateOf(current);
        const to = transitionOf(from, 'cancel');
        if (to === undefined) throw conflict(`cannot cancel: environment is ${from}, with no cancellable action under way`);
        const now = clock.now().toISOString();
        const last = await lastDeployment(current, trx);
        if (last !== undefined) {
          if (to === 'CANCELED') await cancelQueuedJob(trx, clock, last.job_id);
          await updateDeployment(trx, last.id, {
            status: to,
            message: to === 'CANCELED' ? 'canceled before the agent took it' : 'cancel requested: the agent stops at its next step',
            updated_at: now,
            ...(to === 'CANCELED' ? { finished_at: now } : {}),
          });
          if (to === 'CANCELED') await publishMove(trx, source, { action: last.action, deploymentId: last.id, from, to, message: 'canceled before the agent took it' });
        }
        const moved = await updateEnvironmentInStatus(trx, environmentId, from, { status: to, updated_at: now });
        if (!moved) throw conflict('cannot cancel: the environment state changed meanwhile; read it again');
        return { ...current, status: to, updated_at: now };
      });
      return environmentStatusView(row);
    },

    ...history,

    /**
     * What the cluster's agent (issue 9) reports while it carries out an environment's newest action: it takes the
     * queued action, then reports its phases. Each report moves the state through the transition table (409 when
     * the table has no such move) and the history record with it.
     */
    async recordAgentProgress(environmentId: string, deploymentId: string, event: EnvironmentProgress | 'take', message?: string) {
      const source = await eventSourceOf(environmentId);
      const row = await db.transaction().execute(async (trx) => {
        const current = await requireEnvironment(trx, environmentId);
        if (current.last_deployment_id !== deploymentId) throw conflict(`deployment ${deploymentId} is not the environment's current action`);
        const record = await findDeployment(trx, deploymentId);
        if (record === undefined) throw notFound(`deployment ${deploymentId} not found`);
        const resolved: EnvironmentProgress = event === 'take' ? TAKE_EVENT[queuedActionOf(record.action)] : event;
        const from = stateOf(current);
        const to = transitionOf(from, resolved);
        if (to === undefined) throw conflict(`cannot apply ${resolved} to environment: it is ${from}`);
        const now = clock.now().toISOString();
        const deployed = to === 'DEPLOYED' ? { deployed_revision: record.config_revision } : {};
        const moved = await updateEnvironmentInStatus(trx, environmentId, from, { status: to, updated_at: now, ...deployed });
        if (!moved) throw conflict('the environment state changed meanwhile');
        await updateDeployment(trx, deploymentId, {
          status: to,
          message: message ?? null,
          updated_at: now,
          ...(isSettled(to) ? { finished_at: now } : {}),
        });
        await publishMove(trx, source, { action: record.action, deploymentId, from, to, message });
        return { ...current, status: to, updated_at: now, ...deployed };
      });
      return environmentStatusView(row);
    },

    /** Whether an action's deployment record still waits to be carried out (exists, this environment's, not ended). */
    async isDeploymentOpen(environmentId: string, deploymentId: string): Promise<boolean> {
      const record = await findDeployment(db, deploymentId);
      return record !== undefined && record.environment_id === environmentId && record.finished_at === null;
    },

    /** The environment's state, undefined once it is gone (what the cluster's agent asks before going on). */
    async findEnvironmentState(environmentId: string): Promise<EnvironmentState | undefined> {
      const row = await findEnvironment(db, environmentId);
      return row === undefined ? undefined : stateOf(row);
    },

    async findEnvironmentSummary(environmentId: string): Promise<EnvironmentSummary | undefined> {
      const row = await findEnvironment(db, environmentId);
      return row === undefined ? undefined : summaryOf(row);
    },

    /** Where an environment addressed without its organization in the path (`/environment/{environmentId}/…`) lives. */
    async placementOf(environmentId: string): Promise<Placement | undefined> {
      const row = await findEnvironment(db, environmentId);
      return row === undefined
        ? undefined
        : { organizationId: row.organization_id, projectId: row.project_id, environmentId: row.id, environmentMode: row.mode as EnvironmentMode };
    },
  };
}

export type EnvironmentsService = ReturnType<typeof createEnvironmentsService>;

/** The projects module's content port: environments per project, and the services module's count of services. */
export function environmentCountsOf(db: Kysely<DB>, services: { countsByProject(projectIds: string[]): Promise<Map<string, number>> }) {
  return {
    async countsByProject(projectIds: string[]): Promise<Map<string, { environments: number; services: number }>> {
      const counts = await countEnvironmentsByProject(db, projectIds);
      const serviceCounts = await services.countsByProject(projectIds);
      return new Map([...counts].map(([projectId, environments]) => [projectId, { environments, services: serviceCounts.get(projectId) ?? 0 }]));
    },
  };
}
