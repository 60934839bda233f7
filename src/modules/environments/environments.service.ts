import type { Kysely, Transaction } from 'kysely';
import { actingUserId, type Actor, type Placement, type Principal } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { EnvironmentStateChanges } from '../deployments/deployments.environment-records.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';
import type { RemovedContents } from '../projects/projects.service.ts';
import { bumpConfigRevision, countEnvironmentsByProject, countEnvironmentsOfOrganization, deleteEnvironmentRow, findEnvironment, findEnvironmentNames, insertEnvironment, listEnvironments, updateEnvironment, updateEnvironmentInStatus, type EnvironmentRow } from './environments.repo.ts';
import type { CloneEnvironmentBody, CreateEnvironmentBody, EditEnvironmentBody } from './environments.schemas.ts';

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
  /** The services module: without it, an environment holds none. */
  services?: {
    /** Removes the environment's services in its delete's transaction (their workloads' teardown queued). */
    removeEnvironmentServices(trx: Transaction<DB>, environmentId: string, options: { teardown: boolean }): Promise<string[]>;
    servicesRemoved(serviceIds: readonly string[]): Promise<void>;
  };
  /**
   * The deployments module: inside a delete's transaction, refuses (409) while the cluster's agent works on the
   * environment and withdraws its queued actions.
   */
  deployments: { refuseBusyEnvironment(trx: Transaction<DB>, environmentId: string): Promise<void> };
  /**
   * The deployment rules module (docs/deployment-rules.md): the project's rule matching a new environment's name
   * places it where the request does not, and gives it its schedule in the creation's transaction. Without it, an
   * environment gets its rule with the defaults when first read.
   */
  deploymentRules?: {
    placementFor(projectId: string, environmentName: string): Promise<{ clusterId: string; mode: EnvironmentMode } | undefined>;
    environmentCreated(trx: Transaction<DB>, environment: { id: string; projectId: string; name: string }): Promise<void>;
  };
  /** The deployment-stages module (docs/deployment-stages.md): a clone gets the source's stages, in its transaction. */
  stages?: { copyEnvironmentStages(trx: Transaction<DB>, fromEnvironmentId: string, toEnvironmentId: string): Promise<void> };
  /** Open pages' "look again" (organization-changes.signals.ts), published in the transaction that moves the state. */
  stateChanges?: Pick<StateChangePublisher, 'environmentChanged'> | undefined;
}

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

  /** A new environment's row: READY, never deployed. */
  function newEnvironmentRow(principal: Actor, input: { organizationId: string; projectId: string; clusterId: string; name: string; mode: string }) {
    const now = clock.now().toISOString();
    const name = cleanName(input.name);
    return {
      id: newId(),
      organization_id: input.organizationId,
      project_id: input.projectId,
      cluster_id: input.clusterId,
      name,
      name_key: nameKey(name),
      mode: input.mode,
      status: 'READY',
      deployed_revision: null,
      last_deployment_id: null,
      last_updated_by: principal.kind === 'schedule' ? null : (actingUserId(principal) ?? null),
      created_at: now,
      updated_at: now,
    };
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

  /**
   * Removes the environment and, by foreign keys, its history and whatever later modules keep for it; its queued
   * jobs are withdrawn. Refused while the cluster's agent is working on it. Answers the services removed with it.
   */
  async function removeEnvironmentIn(trx: Transaction<DB>, environmentId: string, teardown: boolean): Promise<string[]> {
    await deps.deployments.refuseBusyEnvironment(trx, environmentId);
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
      const rule = await deps.deploymentRules?.placementFor(projectId, cleanName(body.name));
      const cluster = await placementCluster(organizationId, body.cluster ?? rule?.clusterId, '/cluster');
      const row = newEnvironmentRow(principal, { organizationId, projectId, clusterId: cluster.id, name: body.name, mode: body.mode ?? rule?.mode ?? 'DEVELOPMENT' });
      await insertOrRefuse(
        () =>
          db.transaction().execute(async (trx) => {
            await insertEnvironment(trx, row);
            await deps.deploymentRules?.environmentCreated(trx, { id: row.id, projectId, name: row.name });
          }),
        row.name,
      );
      return viewOf(await requireEnvironment(db, row.id));
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

    /**
     * A new environment in the same project with the source's settings, never its history; variables when asked. The
     * actor may be Slipway itself (a pull request's preview environment: the git-webhooks module).
     */
    async cloneEnvironment(principal: Actor, environmentId: string, body: CloneEnvironmentBody): Promise<EnvironmentView> {
      const source = await requireEnvironment(db, environmentId);
      const cluster = await placementCluster(source.organization_id, body.cluster_id ?? source.cluster_id, '/cluster_id');
      const row = newEnvironmentRow(principal, {
        organizationId: source.organization_id,
        projectId: source.project_id,
        clusterId: cluster.id,
        name: body.name,
        mode: body.mode ?? source.mode,
      });
      await insertOrRefuse(
        () =>
          db.transaction().execute(async (trx) => {
            await insertEnvironment(trx, row);
            await deps.deploymentRules?.environmentCreated(trx, { id: row.id, projectId: row.project_id, name: row.name });
            await deps.stages?.copyEnvironmentStages(trx, source.id, row.id);
            if (body.clone_variables === true) await deps.variables.copyEnvironmentVariables(trx, source.id, row.id);
          }),
        row.name,
      );
      return viewOf(await requireEnvironment(db, row.id));
    },

    /**
     * The deployments module's port (deployments.environment-records.ts): an environment's place in the deployment
     * state machine is a column of its row, read here in the caller's transaction, and moved only by a
     * compare-and-set on the state it was read in (two requests, or a request and the agent, cannot both move it).
     */
    deploymentStateOf(executor: Queryable, environmentId: string): Promise<EnvironmentRow | undefined> {
      return findEnvironment(executor, environmentId);
    },

    async moveDeploymentState(trx: Transaction<DB>, environmentId: string, expectedStatus: string, changes: EnvironmentStateChanges): Promise<boolean> {
      const moved = await updateEnvironmentInStatus(trx, environmentId, expectedStatus, changes);
      if (moved) await deps.stateChanges?.environmentChanged(trx, environmentId);
      return moved;
    },

    /** The names of the environments among `ids` that exist, in one read. */
    environmentNames(ids: readonly string[]): Promise<Map<string, string>> {
      return findEnvironmentNames(db, ids);
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
    environmentCountsByProject: (projectIds: string[]): Promise<Map<string, number>> => countEnvironmentsByProject(db, projectIds),
    environmentCountsOfOrganization: (organizationId: string): Promise<Map<string, number>> => countEnvironmentsOfOrganization(db, organizationId),
  };
}
