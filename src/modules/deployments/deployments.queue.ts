import type { Kysely } from 'kysely';
import { actionStatusOf, queuedActionOf, wireAction, type DeploymentState } from '../../engine/deployment-states.ts';
import type { Placement } from '../../auth/principal.ts';
import { readJson } from '../../db/db.json.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { payloadOf } from '../../jobs/job-kinds.ts';
import { findJob } from '../../jobs/job-queue.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import type { RequestOrigin } from '../../lib/request-origin.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { ENVIRONMENT_ACTION } from './deployments.environment-requests.ts';
import {
  findDeploymentRequestEnvironmentId,
  findEnvironmentDeployment,
  findRuntime,
  findServiceDeployment,
  listOpenEnvironmentDeployments,
  listOpenServiceDeployments,
  listServiceDeploymentsOfEnvironmentDeployment,
  type EnvironmentDeploymentRow,
  type ServiceDeploymentRow,
} from './deployments.repo.ts';
import { recordStateOf } from './deployments.service-records.ts';
import type { DeploymentsService } from './deployments.service.ts';
import { stateOf } from './deployments.states.ts';

/**
 * The deployment queue (docs/deployment-queue.md): the deployment requests of an environment or of one service that
 * have not ended yet — queued for the cluster's agent or under way — read from the deployment records that exist
 * anyway. A deployment request is one record: an environment's action (its id is the environment status's
 * `deployment_request_id`) or a service's own. An environment's action lists the services it carries its action
 * into by deployment stage, in the order they start (docs/deployment-stages.md); once it has been fanned out, each
 * shows how its own deployment goes, in the stage it was requested in. A request is cancelled through the cancel of its subject (deployments.transitions.ts): only the
 * newest action of an environment or a service can be under way, so the request must be it.
 */

export interface DeploymentQueueDeps {
  db: Kysely<DB>;
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
  };
  environments: { placementOf(environmentId: string): Promise<Placement | undefined> };
  deployments: Pick<DeploymentsService, 'cancelServiceDeployment' | 'cancelEnvironmentDeployment' | 'getEnvironmentStatus' | 'startOrderOf'>;
}

type StageStatus = 'QUEUED' | 'ONGOING' | 'DONE' | 'ERROR' | 'SKIPPED' | 'CANCELED';

/** A deployment stage as the queue shows it: its name and its position (0 first). */
interface StagePlace {
  name: string;
  order: number;
}

/** The reference's StageStatusEnum of a deployment's state. */
export function stageStatusOf(state: DeploymentState): StageStatus {
  const outcome = actionStatusOf(state);
  switch (outcome) {
    case 'SUCCESS':
      return 'DONE';
    case 'CANCELING':
      return 'CANCELED';
    case 'NEVER':
      return 'QUEUED';
    default:
      return outcome;
  }
}

/** A stage's status from its services': an error first, then work under way, then what waits; done when all ended. */
function stageStatusOfAll(statuses: readonly StageStatus[]): StageStatus {
  for (const status of ['ERROR', 'ONGOING', 'QUEUED'] as const) if (statuses.includes(status)) return status;
  if (statuses.length > 0 && statuses.every((status) => status === 'CANCELED')) return 'CANCELED';
  if (statuses.length > 0 && statuses.every((status) => status === 'SKIPPED')) return 'SKIPPED';
  return 'DONE';
}

function iconUriOf(kind: ServiceKind): string {
  return `urn:slipway:service-kind:${kind.toLowerCase()}`;
}

function auditingDataOf(record: { triggered_by: string; origin: string }) {
  return { triggered_by: record.triggered_by, origin: record.origin as RequestOrigin };
}

/** The services' own deployments an environment's action was fanned out into (each names it); none until it is. */
export function fannedOutDeployments(db: Queryable, record: EnvironmentDeploymentRow): Promise<ServiceDeploymentRow[]> {
  return listServiceDeploymentsOfEnvironmentDeployment(db, record.id);
}

/** The stage a service's deployment was requested in (recorded with it), or else the stage the service is in now. */
function stageOfDeployment(record: ServiceDeploymentRow, current: StagePlace): StagePlace {
  return record.deployment_stage_name === null || record.deployment_stage_order === null ? current : { name: record.deployment_stage_name, order: record.deployment_stage_order };
}

export function createDeploymentQueue(deps: DeploymentQueueDeps) {
  const { db } = deps;

  async function requireServiceOf(serviceId: string): Promise<StoredService> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined) throw notFound(`service ${serviceId} not found`);
    return service;
  }

  /**
   * The services an environment's action concerns: those it names (a restart of some), of those the ones its action
   * applies to (stop and restart act on deployed services only), as the fan-out (requestEnvironmentServicesAction)
   * chooses them.
   */
  async function servicesOfEnvironmentAction(record: EnvironmentDeploymentRow, services: readonly StoredService[]): Promise<StoredService[]> {
    const job = await findJob(db, record.job_id);
    const named = job === undefined ? undefined : payloadOf(ENVIRONMENT_ACTION, { id: job.id, payload: readJson<Record<string, unknown>>(job.payload) }).serviceIds;
    const action = queuedActionOf(record.action);
    const chosen: StoredService[] = [];
    for (const service of services) {
      if (named !== undefined && !named.includes(service.id)) continue;
      if ((action === 'stop' || action === 'restart') && (await findRuntime(db, service.id))?.deployed_deployment_id == null) continue;
      chosen.push(service);
    }
    return chosen;
  }

  /** The services' entries grouped by stage, in the stages' order. */
  function stagesOf(entries: ReadonlyArray<{ service: StoredService; status: StageStatus; stage: StagePlace }>) {
    const stages = new Map<string, { place: StagePlace; members: Array<{ service: StoredService; status: StageStatus }> }>();
    for (const entry of entries) {
      const key = `${entry.stage.order}:${entry.stage.name}`;
      const stage = stages.get(key) ?? { place: entry.stage, members: [] };
      stage.members.push(entry);
      stages.set(key, stage);
    }
    return [...stages.values()]
      .sort((a, b) => a.place.order - b.place.order)
      .map(({ place, members }) => ({
        name: place.name,
        status: stageStatusOfAll(members.map((member) => member.status)),
        services: members.map(({ service, status }) => ({
          identifier: { service_id: service.id, service_type: service.kind, name: service.name },
          status,
          icon_uri: iconUriOf(service.kind),
        })),
      }));
  }

  /** Where each service of the environment is now: its stage, and whether the environment's deploy skips it. */
  async function layoutOf(environmentId: string): Promise<Map<string, StagePlace & { skipped: boolean }>> {
    const order = await deps.deployments.startOrderOf(environmentId);
    return new Map([...order].map(([serviceId, place]) => [serviceId, { name: place.stageName, order: place.stage, skipped: place.skipped }]));
  }

  /**
   * An environment's action as a queue entry, and the services' deployments it stands for. Until it is fanned out, its
   * services wait in the stages they are in (those their stage skips on a deploy show SKIPPED); then each shows its
   * own deployment in the stage it was requested in, and a service it left out shows SKIPPED.
   */
  async function environmentEntry(record: EnvironmentDeploymentRow, services: readonly StoredService[], layout: ReadonlyMap<string, StagePlace & { skipped: boolean }>) {
    const concerned = await servicesOfEnvironmentAction(record, services);
    const fannedOut = await fannedOutDeployments(db, record);
    const fanOutDone = record.services_requested_at !== null;
    const starts = queuedActionOf(record.action) === 'deploy' || queuedActionOf(record.action) === 'redeploy';
    const entries = concerned.map((service) => {
      const current = layout.get(service.id) ?? { name: '', order: Number.MAX_SAFE_INTEGER, skipped: false };
      const own = fannedOut.find((deployment) => deployment.service_id === service.id);
      if (own !== undefined) return { service, status: stageStatusOf(recordStateOf(own)), stage: stageOfDeployment(own, current) };
      const skipped = fanOutDone || (starts && current.skipped);
      return { service, status: skipped ? ('SKIPPED' as const) : ('QUEUED' as const), stage: current };
    });
    return {
      entry: {
        identifier: { deployment_request_id: record.id, environment_id: record.environment_id },
        auditing_data: auditingDataOf(record),
        trigger_action: wireAction(record.action),
        stages: stagesOf(entries),
        /** Slipway's additions: the request's state, and when it was asked. */
        status: stateOf('environment', record.id, record.status),
        created_at: record.created_at,
      },
      absorbed: new Set(fannedOut.map((deployment) => deployment.id)),
    };
  }

  /** A service's own request as an environment's queue entry: one stage holding the service. */
  function serviceEntry(record: ServiceDeploymentRow, service: StoredService, current: StagePlace) {
    const status = stageStatusOf(recordStateOf(record));
    return {
      identifier: { deployment_request_id: record.id, environment_id: service.environmentId },
      auditing_data: auditingDataOf(record),
      trigger_action: wireAction(record.action),
      stages: stagesOf([{ service, status, stage: stageOfDeployment(record, current) }]),
      status: recordStateOf(record),
      created_at: record.created_at,
    };
  }

  return {
    /**
     * The environment's requests that have not ended, oldest first: its own actions (with the services' deployments
     * they were fanned out into, as stages) and its services' own requests. A service's deployment that an
     * environment action listed is not listed again.
     */
    async listEnvironmentQueue(environmentId: string) {
      await deps.deployments.getEnvironmentStatus(environmentId);
      const services = await deps.services.listEnvironmentServices(environmentId);
      const byId = new Map(services.map((service) => [service.id, service]));
      const layout = await layoutOf(environmentId);
      const absorbed = new Set<string>();
      const entries: Array<ReturnType<typeof serviceEntry>> = [];
      for (const record of await listOpenEnvironmentDeployments(db, environmentId)) {
        const { entry, absorbed: own } = await environmentEntry(record, services, layout);
        for (const id of own) absorbed.add(id);
        entries.push(entry);
      }
      for (const record of await listOpenServiceDeployments(db, { environmentId })) {
        const service = byId.get(record.service_id);
        if (service !== undefined && !absorbed.has(record.id)) entries.push(serviceEntry(record, service, layout.get(service.id) ?? { name: '', order: 0 }));
      }
      entries.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
      return { results: entries };
    },

    /**
     * The service's requests that have not ended, oldest first: its own, and its environment's actions that concern
     * it and have not been fanned out into its own yet (it waits for them).
     */
    async listServiceQueue(serviceId: string) {
      const service = await requireServiceOf(serviceId);
      const waiting: Array<{ record: EnvironmentDeploymentRow | ServiceDeploymentRow; state: DeploymentState }> = [];
      for (const record of await listOpenEnvironmentDeployments(db, service.environmentId)) {
        if (record.services_requested_at !== null) continue;
        if ((await servicesOfEnvironmentAction(record, [service])).length === 0) continue;
        waiting.push({ record, state: stateOf('environment', record.id, record.status) });
      }
      for (const record of await listOpenServiceDeployments(db, { serviceId })) waiting.push({ record, state: recordStateOf(record) });
      waiting.sort((a, b) => (a.record.created_at < b.record.created_at ? -1 : a.record.created_at > b.record.created_at ? 1 : 0));
      return {
        results: waiting.map(({ record, state }) => ({
          identifier: { deployment_request_id: record.id, service_id: service.id, service_type: service.kind, name: service.name },
          auditing_data: auditingDataOf(record),
          status_details: { action: wireAction(record.action), status: actionStatusOf(state), sub_action: 'NONE' as const },
          icon_uri: iconUriOf(service.kind),
          /** Slipway's additions: whose request it is (the environment's action or the service's own), and its state. */
          requested_for: 'service_id' in record ? ('SERVICE' as const) : ('ENVIRONMENT' as const),
          status: state,
          created_at: record.created_at,
        })),
      };
    },

    /**
     * Cancels a request that has not ended: the cancel of its environment or service (a queued one at once, one under
     * way at the agent's next step). 409 once it ended, or when it is no longer its subject's newest action.
     */
    async cancelDeploymentRequest(deploymentRequestId: string): Promise<void> {
      const environmentRecord = await findEnvironmentDeployment(db, deploymentRequestId);
      if (environmentRecord !== undefined) {
        if (environmentRecord.finished_at !== null) throw conflict(`deployment request ${deploymentRequestId} has ended (${environmentRecord.status}); nothing to cancel`);
        const current = await deps.deployments.getEnvironmentStatus(environmentRecord.environment_id);
        if (current.deployment_request_id !== deploymentRequestId) throw conflict(`deployment request ${deploymentRequestId} is not the environment's current action`);
        await deps.deployments.cancelEnvironmentDeployment(environmentRecord.environment_id);
        return;
      }
      const serviceRecord = await findServiceDeployment(db, deploymentRequestId);
      if (serviceRecord === undefined) throw notFound(`deployment request ${deploymentRequestId} not found`);
      if (serviceRecord.finished_at !== null) throw conflict(`deployment request ${deploymentRequestId} has ended (${serviceRecord.status}); nothing to cancel`);
      const service = await requireServiceOf(serviceRecord.service_id);
      if ((await findRuntime(db, service.id))?.last_deployment_id !== deploymentRequestId) {
        throw conflict(`deployment request ${deploymentRequestId} is not the service's current action`);
      }
      await deps.deployments.cancelServiceDeployment(service.kind, service.id);
    },

    /** Where a request stands: its environment and the state it reached (a service's request names its service's environment). */
    async getDeploymentStatus(deploymentRequestId: string) {
      const environmentRecord = await findEnvironmentDeployment(db, deploymentRequestId);
      if (environmentRecord !== undefined) {
        return {
          deployment_request_id: environmentRecord.id,
          environment_id: environmentRecord.environment_id,
          status: stateOf('environment', environmentRecord.id, environmentRecord.status),
        };
      }
      const serviceRecord = await findServiceDeployment(db, deploymentRequestId);
      const service = serviceRecord === undefined ? undefined : await deps.services.findService(serviceRecord.service_id);
      if (serviceRecord === undefined || service === undefined) throw notFound(`deployment request ${deploymentRequestId} not found`);
      return { deployment_request_id: serviceRecord.id, environment_id: service.environmentId, status: recordStateOf(serviceRecord) };
    },

    /** For the authorizer: where a deployment request lives (its environment's placement). */
    async placementOfDeploymentRequest(deploymentRequestId: string): Promise<Placement | undefined> {
      const environmentId = await findDeploymentRequestEnvironmentId(db, deploymentRequestId);
      return environmentId === undefined ? undefined : deps.environments.placementOf(environmentId);
    },
  };
}

export type DeploymentQueue = ReturnType<typeof createDeploymentQueue>;
