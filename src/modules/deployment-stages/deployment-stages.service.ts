import type { Kysely, Transaction } from 'kysely';
import type { Placement } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { DeploymentsService } from '../deployments/deployments.service.ts';
import type { StartOrder } from '../deployments/deployments.requests.ts';
import type { EnvironmentSummary } from '../environments/environments.service.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import {
  copyStages,
  deleteEmptyStage,
  findStage,
  insertMembershipsUnlessPresent,
  insertStage,
  insertStagesUnlessPresent,
  listMembershipsOfEnvironment,
  listStagesOfEnvironment,
  lockStagesOfEnvironment,
  setStageOrder,
  updateMembership,
  updateStage,
  type DeploymentStageRow,
  type StageMembershipRow,
} from './deployment-stages.repo.ts';
import type { DeploymentStageBody, StageStatus } from './deployment-stages.schemas.ts';

/**
 * Deployment stages (docs/deployment-stages.md): an environment's deploy starts its services stage after stage, in
 * the stages' order; the services of one stage start together. Every environment has two default stages, "DATABASE
 * DEFAULT" then "SERVICE DEFAULT" (databases first, as deploys went before stages existed), and every service
 * belongs to exactly one stage: a new one lands in the default stage of its group.
 *
 * Environments and services are created by their own modules, which know nothing of stages: the layout is completed
 * here whenever it is read (`layoutOf`): an environment without stages gets its defaults and a service without a
 * stage the default stage of its group, each insert tolerating a concurrent one. Every reader goes through it — these
 * operations, and the deployments module's start order (deployments.requests.ts, deployments.dispatch.ts).
 */

export interface DeploymentStagesDeps {
  db: Kysely<DB>;
  clock: Clock;
  environments: {
    findEnvironmentSummary(environmentId: string): Promise<EnvironmentSummary | undefined>;
    placementOf(environmentId: string): Promise<Placement | undefined>;
  };
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
  };
  /** The statuses getEnvironmentStatusesWithStages groups by stage. */
  deployments: Pick<DeploymentsService, 'getEnvironmentStatus' | 'getServiceStatus'>;
}

/** The two groups a default stage takes new services of. */
type DefaultGroup = 'DATABASE' | 'SERVICE';

/** The default stages, in their order. */
const DEFAULT_STAGES: ReadonlyArray<{ name: string; group: DefaultGroup; description: string }> = [
  { name: 'DATABASE DEFAULT', group: 'DATABASE', description: 'New databases land here; they start before the services of later stages.' },
  { name: 'SERVICE DEFAULT', group: 'SERVICE', description: 'New applications, containers, jobs, Helm charts and Terraform services land here.' },
];

function groupOf(kind: ServiceKind): DefaultGroup {
  return kind === 'DATABASE' ? 'DATABASE' : 'SERVICE';
}

/** Where each kind's statuses go in a stage of getEnvironmentStatusesWithStages (as in getEnvironmentStatuses). */
const STATUS_GROUPS = {
  APPLICATION: 'applications',
  CONTAINER: 'containers',
  JOB: 'jobs',
  DATABASE: 'databases',
  HELM: 'helms',
  TERRAFORM: 'terraforms',
  AGENTIC_WORKFLOW: 'agentic_workflows',
} as const satisfies Record<ServiceKind, string>;

type ServiceStatusView = Awaited<ReturnType<DeploymentsService['getServiceStatus']>>;

/**
 * A stage's status from its services' actions: under way while any is, otherwise the worst outcome of the last
 * actions; undefined while none of them was ever acted on.
 */
function stageStatusOf(statuses: ServiceStatusView[]): StageStatus | undefined {
  const outcomes = new Set(statuses.map((status) => status.status_details.status));
  if (outcomes.has('ONGOING') || outcomes.has('CANCELING')) return 'ONGOING';
  if (outcomes.has('QUEUED')) return 'QUEUED';
  if (outcomes.has('ERROR')) return 'ERROR';
  if (outcomes.has('CANCELED')) return 'CANCELED';
  if (outcomes.has('SUCCESS')) return 'DONE';
  return undefined;
}

/** An environment's stages in order, with the stage of each of its services. */
export interface StageLayout {
  stages: DeploymentStageRow[];
  memberships: Map<string, StageMembershipRow>;
  services: StoredService[];
}

export function createDeploymentStagesService(deps: DeploymentStagesDeps) {
  const { db, clock } = deps;

  async function requireEnvironment(environmentId: string): Promise<EnvironmentSummary> {
    const environment = await deps.environments.findEnvironmentSummary(environmentId);
    if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
    return environment;
  }

  async function requireStage(stageId: string): Promise<DeploymentStageRow> {
    const stage = await findStage(db, stageId);
    if (stage === undefined) throw notFound(`deployment stage ${stageId} not found`);
    return stage;
  }

  /** The environment's default stages, when it has no stage yet (a new environment). */
  async function placeDefaultStages(environmentId: string): Promise<void> {
    const now = isoTimestamp(clock);
    const rows = DEFAULT_STAGES.map((stage, order) => ({
      id: newId(),
      environment_id: environmentId,
      name: stage.name,
      name_key: nameKey(stage.name),
      description: stage.description,
      deployment_order: order,
      default_for: stage.group,
      created_at: now,
      updated_at: now,
    }));
    try {
      await insertStagesUnlessPresent(db, rows);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`environment ${environmentId} not found`);
      throw error;
    }
  }

  /** Places each service without a stage into the default stage of its group. */
  async function placeServices(stages: DeploymentStageRow[], services: StoredService[]): Promise<void> {
    const now = isoTimestamp(clock);
    for (const service of services) {
      const stage = stages.find((candidate) => candidate.default_for === groupOf(service.kind));
      if (stage === undefined) throw new Error(`environment ${service.environmentId} has no default ${groupOf(service.kind)} stage`);
      try {
        await insertMembershipsUnlessPresent(db, [{ id: newId(), service_id: service.id, stage_id: stage.id, is_skipped: 0, created_at: now, updated_at: now }]);
      } catch (error) {
        // The service was deleted meanwhile: nothing to place.
        if (!isForeignKeyViolation(error)) throw error;
      }
    }
  }

  /** The environment's stages and the stage of each service, completed first (see the module comment). */
  async function layoutOf(environmentId: string): Promise<StageLayout> {
    let stages = await listStagesOfEnvironment(db, environmentId);
    if (stages.length === 0) {
      await placeDefaultStages(environmentId);
      stages = await listStagesOfEnvironment(db, environmentId);
    }
    const services = await deps.services.listEnvironmentServices(environmentId);
    let memberships = await listMembershipsOfEnvironment(db, environmentId);
    const placed = new Set(memberships.map((membership) => membership.service_id));
    const unplaced = services.filter((service) => !placed.has(service.id));
    if (unplaced.length > 0) {
      await placeServices(stages, unplaced);
      memberships = await listMembershipsOfEnvironment(db, environmentId);
    }
    return { stages, memberships: new Map(memberships.map((membership) => [membership.service_id, membership])), services };
  }

  function stageView(stage: DeploymentStageRow, layout: StageLayout) {
    const members: Array<{ membership: StageMembershipRow; kind: ServiceKind }> = [];
    for (const service of layout.services) {
      const membership = layout.memberships.get(service.id);
      if (membership?.stage_id === stage.id) members.push({ membership, kind: service.kind });
    }
    return {
      id: stage.id,
      created_at: stage.created_at,
      updated_at: stage.updated_at,
      environment: { id: stage.environment_id },
      name: stage.name,
      description: stage.description ?? '',
      deployment_order: stage.deployment_order,
      services: members.map(({ membership, kind }) => ({
        id: membership.id,
        created_at: membership.created_at,
        updated_at: membership.updated_at,
        service_id: membership.service_id,
        service_type: kind,
        is_skipped: membership.is_skipped === 1,
      })),
    };
  }

  async function listView(environmentId: string) {
    const layout = await layoutOf(environmentId);
    return { results: layout.stages.map((stage) => stageView(stage, layout)) };
  }

  async function stageViewOf(stageId: string) {
    const stage = await requireStage(stageId);
    const layout = await layoutOf(stage.environment_id);
    const current = layout.stages.find((candidate) => candidate.id === stageId);
    if (current === undefined) throw notFound(`deployment stage ${stageId} not found`);
    return stageView(current, layout);
  }

  /** Numbers the environment's stages 0, 1, 2, … in the order given, inside the caller's transaction. */
  async function renumber(trx: Transaction<DB>, ordered: DeploymentStageRow[]): Promise<void> {
    for (const [order, stage] of ordered.entries()) if (stage.deployment_order !== order) await setStageOrder(trx, stage.id, order);
  }

  /**
   * Runs a change of the environment's stage order in one transaction that holds its stages (see
   * lockStagesOfEnvironment), on the stages as they are once held.
   */
  async function reordering<T>(environmentId: string, change: (trx: Transaction<DB>, stages: DeploymentStageRow[]) => Promise<T>): Promise<T> {
    return db.transaction().execute(async (trx) => {
      await lockStagesOfEnvironment(trx, environmentId, isoTimestamp(clock));
      return change(trx, await listStagesOfEnvironment(trx, environmentId));
    });
  }

  function nameTaken(name: string): string {
    return `a deployment stage named "${name}" already exists in this environment`;
  }

  /** Moves a stage right before or after another stage of its environment; answers the environment's stages. */
  async function moveStage(stageId: string, otherId: string, placement: 'before' | 'after') {
    const stage = await requireStage(stageId);
    const other = await findStage(db, otherId);
    const otherPlacement = other === undefined ? undefined : await deps.environments.placementOf(other.environment_id);
    const ownPlacement = await deps.environments.placementOf(stage.environment_id);
    if (other === undefined || otherPlacement === undefined || otherPlacement.organizationId !== ownPlacement?.organizationId) {
      throw notFound(`deployment stage ${otherId} not found`);
    }
    if (other.environment_id !== stage.environment_id) {
      throw badRequest(`deployment stage ${otherId} belongs to another environment: a stage moves among the stages of its own environment only`, [
        { field: '/stageId', message: 'must be a stage of the same environment' },
      ]);
    }
    await reordering(stage.environment_id, async (trx, stages) => {
      const moving = stages.find((candidate) => candidate.id === stageId);
      if (moving === undefined) throw notFound(`deployment stage ${stageId} not found`);
      if (!stages.some((candidate) => candidate.id === otherId)) throw notFound(`deployment stage ${otherId} not found`);
      if (otherId === stageId) return;
      const rest = stages.filter((candidate) => candidate.id !== stageId);
      const anchor = rest.findIndex((candidate) => candidate.id === otherId);
      rest.splice(placement === 'before' ? anchor : anchor + 1, 0, moving);
      await renumber(trx, rest);
    });
    return listView(stage.environment_id);
  }

  return {
    /** Where a stage addressed without its environment in the path (`/deploymentStage/{id}/…`) lives. */
    async placementOf(stageId: string): Promise<Placement | undefined> {
      const stage = await findStage(db, stageId);
      return stage === undefined ? undefined : deps.environments.placementOf(stage.environment_id);
    },

    async listEnvironmentDeploymentStage(environmentId: string) {
      await requireEnvironment(environmentId);
      return listView(environmentId);
    },

    /** A new, empty stage, last in the environment's order. */
    async createEnvironmentDeploymentStage(environmentId: string, body: DeploymentStageBody) {
      await requireEnvironment(environmentId);
      await layoutOf(environmentId);
      const name = cleanName(body.name);
      const now = isoTimestamp(clock);
      const id = newId();
      try {
        await uniqueOrConflict(
          () =>
            reordering(environmentId, async (trx, stages) => {
              await insertStage(trx, {
                id,
                environment_id: environmentId,
                name,
                name_key: nameKey(name),
                description: body.description ?? null,
                deployment_order: stages.length,
                default_for: null,
                created_at: now,
                updated_at: now,
              });
            }),
          nameTaken(name),
        );
      } catch (error) {
        if (isForeignKeyViolation(error)) throw notFound(`environment ${environmentId} not found`);
        throw error;
      }
      return stageViewOf(id);
    },

    getDeploymentStage: stageViewOf,

    /** Renames the stage or changes its description; its place and services stay. */
    async editDeploymentStage(stageId: string, body: DeploymentStageBody) {
      const stage = await requireStage(stageId);
      const name = cleanName(body.name);
      const changes = {
        name,
        name_key: nameKey(name),
        description: body.description === undefined ? stage.description : body.description,
        updated_at: isoTimestamp(clock),
      };
      const updated = await uniqueOrConflict(() => updateStage(db, stageId, changes), nameTaken(name));
      if (!updated) throw notFound(`deployment stage ${stageId} not found`);
      return stageViewOf(stageId);
    },

    /**
     * Deletes an empty stage that is not a default one; the later stages move up. A default stage is where new
     * services land (400); a stage that still holds services is refused (409) — move them first, so no service is
     * ever put somewhere its user did not choose.
     */
    async deleteDeploymentStage(stageId: string): Promise<void> {
      const stage = await requireStage(stageId);
      if (stage.default_for !== null) {
        throw badRequest(`deployment stage "${stage.name}" is the default stage of new ${stage.default_for === 'DATABASE' ? 'databases' : 'services'} and cannot be deleted; rename or move it instead`);
      }
      await reordering(stage.environment_id, async (trx, stages) => {
        if (!(await deleteEmptyStage(trx, stageId))) {
          if ((await findStage(trx, stageId)) === undefined) throw notFound(`deployment stage ${stageId} not found`);
          throw conflict(`deployment stage "${stage.name}" still holds services: attach them to other stages first`);
        }
        await renumber(
          trx,
          stages.filter((candidate) => candidate.id !== stageId),
        );
      });
    },

    moveBeforeDeploymentStage: (stageId: string, otherId: string) => moveStage(stageId, otherId, 'before'),
    moveAfterDeploymentStage: (stageId: string, otherId: string) => moveStage(stageId, otherId, 'after'),

    /**
     * Moves a service of the stage's environment into the stage (and sets whether the environment's deploy skips it);
     * answers the environment's stages. A service of another environment is a 400, of another organization a 404.
     */
    async attachServiceToDeploymentStage(stageId: string, serviceId: string, body: { is_skipped?: boolean | undefined }) {
      const stage = await requireStage(stageId);
      const service = await deps.services.findService(serviceId);
      const placement = await deps.environments.placementOf(stage.environment_id);
      if (service === undefined || service.organizationId !== placement?.organizationId) throw notFound(`service ${serviceId} not found`);
      if (service.environmentId !== stage.environment_id) {
        throw badRequest(`service ${serviceId} belongs to another environment: a service is attached to a stage of its own environment only`, [
          { field: '/serviceId', message: 'must be a service of the stage’s environment' },
        ]);
      }
      const layout = await layoutOf(stage.environment_id);
      const current = layout.memberships.get(serviceId);
      if (current === undefined) throw notFound(`service ${serviceId} not found`);
      const isSkipped = body.is_skipped === undefined ? current.is_skipped : Number(body.is_skipped);
      try {
        if (!(await updateMembership(db, serviceId, { stage_id: stageId, is_skipped: isSkipped, updated_at: isoTimestamp(clock) }))) {
          throw notFound(`service ${serviceId} not found`);
        }
      } catch (error) {
        if (isForeignKeyViolation(error)) throw notFound(`deployment stage ${stageId} not found`);
        throw error;
      }
      return listView(stage.environment_id);
    },

    async getServiceDeploymentStage(serviceId: string) {
      const service = await deps.services.findService(serviceId);
      if (service === undefined) throw notFound(`service ${serviceId} not found`);
      const layout = await layoutOf(service.environmentId);
      const stage = layout.stages.find((candidate) => candidate.id === layout.memberships.get(serviceId)?.stage_id);
      if (stage === undefined) throw notFound(`service ${serviceId} not found`);
      return stageView(stage, layout);
    },

    /** The environment's status, and its services' statuses stage by stage, in the stages' order. */
    async getEnvironmentStatusesWithStages(environmentId: string) {
      const environment = await deps.deployments.getEnvironmentStatus(environmentId);
      const layout = await layoutOf(environmentId);
      const stages = [];
      for (const stage of layout.stages) {
        const groups = Object.fromEntries(Object.values(STATUS_GROUPS).map((group) => [group, [] as ServiceStatusView[]])) as Record<
          (typeof STATUS_GROUPS)[ServiceKind],
          ServiceStatusView[]
        >;
        const statuses: ServiceStatusView[] = [];
        for (const service of layout.services.filter((candidate) => layout.memberships.get(candidate.id)?.stage_id === stage.id)) {
          const status = await deps.deployments.getServiceStatus(service.kind, service.id);
          groups[STATUS_GROUPS[service.kind]].push(status);
          statuses.push(status);
        }
        const status = stageStatusOf(statuses);
        stages.push({ ...groups, stage: { id: stage.id, name: stage.name, description: stage.description ?? '', ...(status === undefined ? {} : { status }) } });
      }
      return { environment, stages };
    },

    /**
     * The deployments module's port: the place of each service of the environment in its stage order (0 first), its
     * stage's name, and whether the environment's deploy skips it.
     */
    async startOrderOf(environmentId: string): Promise<StartOrder> {
      const layout = await layoutOf(environmentId);
      const order = new Map<string, { stage: number; stageName: string; skipped: boolean }>();
      for (const [serviceId, membership] of layout.memberships) {
        const stage = layout.stages.findIndex((candidate) => candidate.id === membership.stage_id);
        if (stage >= 0) order.set(serviceId, { stage, stageName: layout.stages[stage]?.name ?? '', skipped: membership.is_skipped === 1 });
      }
      return order;
    },

    /**
     * The environments module's clone port: the clone gets the source's stages (names, descriptions, order, which
     * are the defaults), in the clone's transaction. Services are not cloned, so the copies start empty.
     */
    async copyEnvironmentStages(trx: Transaction<DB>, fromEnvironmentId: string, toEnvironmentId: string): Promise<void> {
      const now = isoTimestamp(clock);
      const source = await listStagesOfEnvironment(trx, fromEnvironmentId);
      await copyStages(
        trx,
        source.map((stage, order) => ({ ...stage, id: newId(), environment_id: toEnvironmentId, deployment_order: order, created_at: now, updated_at: now })),
      );
    },
  };
}

export type DeploymentStagesService = ReturnType<typeof createDeploymentStagesService>;
