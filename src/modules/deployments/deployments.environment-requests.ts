import type { Transaction } from 'kysely';
import { Type, type Static } from 'typebox';
import { QUEUED_ACTIONS, waitingMessage, type QueuedAction } from '../../engine/deployment-states.ts';
import type { Requester } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, jobKind } from '../../jobs/job-kinds.ts';
import { cancelQueuedJob } from '../../jobs/job-queue.ts';
import { badRequest, conflict } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { REQUEST_ORIGINS } from '../../lib/request-origin.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { EnvironmentDeploymentState, EnvironmentRecords } from './deployments.environment-records.ts';
import { findEnvironmentDeployment, insertEnvironmentDeployment, listEnvironmentDeploymentJobIds, updateEnvironmentDeployment } from './deployments.repo.ts';
import type { RebootServicesBody } from './deployments.schemas.ts';
import { refuseServicesInTheWay } from './deployments.service-refusals.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { COSTS_MONEY, queuedRecord, requestedState, stateOf } from './deployments.states.ts';

/**
 * An environment's action requests (docs/environments.md): deploy, redeploy, stop and the restart of its services.
 * Each moves the environment into QUEUED and writes its deployment record and the job that carries it out, in one
 * transaction; the job fans the action out into its services' own deployments (deployments.dispatch.ts, recorded
 * here: servicesRequested). Unlike a service's, an environment's record carries no snapshot and no log: what is
 * deployed is its services', each with its own.
 */

/** The job that carries an environment action out (deployments.dispatch.ts). */
export const ENVIRONMENT_ACTION_JOB = 'environment.action';

export const EnvironmentActionPayload = Type.Object({
  environmentId: Type.String(),
  deploymentId: Type.String(),
  action: Type.Enum(QUEUED_ACTIONS),
  requestedAt: Type.String(),
  /** Who asked (the services' deployments it fans out into name them); absent in jobs written before it existed. */
  triggeredBy: Type.Optional(Type.String()),
  /** From where they asked (the services' deployments record it too); absent in jobs written before it existed. */
  origin: Type.Optional(Type.Enum(REQUEST_ORIGINS)),
  /** rebootServices naming services: only those restart. */
  serviceIds: Type.Optional(Type.Array(Type.String())),
});
export type EnvironmentActionPayload = Static<typeof EnvironmentActionPayload>;
export const ENVIRONMENT_ACTION = jobKind(ENVIRONMENT_ACTION_JOB, EnvironmentActionPayload);

/** The kinds rebootServices may name, by the body's field. */
const REBOOT_FIELDS = [
  ['application_ids', 'APPLICATION'],
  ['database_ids', 'DATABASE'],
  ['container_ids', 'CONTAINER'],
] as const;

export function createEnvironmentRequests(
  deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'environments' | 'clusters' | 'services' | 'deploymentGate'>,
  records: EnvironmentRecords,
) {
  const { db, clock } = deps;
  const { requireEnvironment, statusView, actionStatusView } = records;

  /**
   * Moves an environment into QUEUED for an action and writes its history record and the job that carries it out,
   * in one transaction. The job waits for the cluster's agent; nothing here pretends to do its work.
   */
  async function requestAction(requester: Requester, environmentId: string, action: QueuedAction, serviceIds?: string[]): Promise<EnvironmentDeploymentState> {
    // Clusters and billing read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const before = await requireEnvironment(db, environmentId);
    if ((await deps.clusters.findClusterSummary(before.organization_id, before.cluster_id)) === undefined) {
      throw conflict(`cannot ${action} environment: its cluster ${before.cluster_id} no longer exists`);
    }
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(before.organization_id, before.cluster_id);
    // Unlike a service's request, it does not wake the in-process worker: the job is taken at the worker's next poll.
    return db.transaction().execute(async (trx) => {
      const current = await requireEnvironment(trx, environmentId);
      const from = stateOf('environment', current.id, current.status);
      const to = requestedState('environment', from, action, current.deployed_revision !== null);
      const now = clock.now().toISOString();
      const deploymentId = newId();
      const payload: EnvironmentActionPayload = {
        environmentId,
        deploymentId,
        action,
        requestedAt: now,
        triggeredBy: requester.name,
        origin: requester.origin,
        ...(serviceIds === undefined ? {} : { serviceIds }),
      };
      const jobId = await enqueueJobOf(trx, clock, ENVIRONMENT_ACTION, payload, { serialKey: `environment:${environmentId}` });
      await insertEnvironmentDeployment(trx, {
        ...queuedRecord({ id: deploymentId, action, status: to, message: waitingMessage(action), requester, jobId, now }),
        environment_id: environmentId,
        config_revision: current.config_revision,
        services_requested_at: null,
      });
      const changes = { status: to, last_deployment_id: deploymentId, updated_at: now };
      if (!(await deps.environments.moveDeploymentState(trx, environmentId, from, changes))) {
        throw conflict(`cannot ${action} environment: its state changed meanwhile; read it again`);
      }
      return { ...current, ...changes };
    });
  }

  return {
    deployEnvironment: async (requester: Requester, environmentId: string) => actionStatusView(await requestAction(requester, environmentId, 'deploy')),
    redeployEnvironment: async (requester: Requester, environmentId: string) => statusView(await requestAction(requester, environmentId, 'redeploy')),
    stopEnvironment: async (requester: Requester, environmentId: string) => statusView(await requestAction(requester, environmentId, 'stop')),

    /**
     * Restarts the environment's services: those named, or all of them. Each id given must name a service of this
     * environment of the field's kind (400 naming each one that does not), and each service named must be able to
     * restart now (one 409 naming each that cannot, and nothing is queued, as the other bulk actions do); the
     * environment's restart job carries the restart into the named services' own deployments. Without names, the job
     * restarts the deployed services and skips those whose state refuses it.
     */
    async rebootServices(requester: Requester, environmentId: string, body: RebootServicesBody) {
      const given = REBOOT_FIELDS.some(([field]) => (body[field] ?? []).length > 0);
      const services = new Map<string, StoredService>(given ? (await deps.services.listEnvironmentServices(environmentId)).map((service) => [service.id, service]) : []);
      const asked = REBOOT_FIELDS.flatMap(([field, kind]) =>
        (body[field] ?? []).map((id, index) => ({ id, kind, field: `/${field}/${index}`, service: services.get(id) })),
      );
      const unknown = asked
        .filter(({ kind, service }) => service?.kind !== kind)
        .map(({ id, kind, field }) => ({ field, message: `no ${kind.toLowerCase()} ${id} in this environment` }));
      if (unknown.length > 0) {
        await requireEnvironment(db, environmentId);
        throw badRequest('unknown services', unknown);
      }
      await refuseServicesInTheWay(db, 'restart', asked.flatMap(({ service, field }) => (service === undefined ? [] : [{ service, field }])));
      const named = given ? asked.map(({ id }) => id) : undefined;
      return actionStatusView(await requestAction(requester, environmentId, 'restart', named));
    },

    /** Whether this environment action was already fanned out into its services' deployments (deployments.dispatch.ts). */
    async servicesRequested(deploymentId: string): Promise<boolean> {
      return ((await findEnvironmentDeployment(db, deploymentId))?.services_requested_at ?? null) !== null;
    },

    /** Records that the action was fanned out, so no worker asks its services again. */
    async markServicesRequested(deploymentId: string): Promise<void> {
      await updateEnvironmentDeployment(db, deploymentId, { services_requested_at: clock.now().toISOString() });
    },

    /**
     * For the environments module's delete, inside its transaction (before the row goes): refuses (409, naming the
     * state) while the agent works on the environment, and withdraws its queued actions.
     */
    async refuseBusyEnvironment(trx: Transaction<DB>, environmentId: string): Promise<void> {
      const current = await requireEnvironment(trx, environmentId);
      requestedState('environment', stateOf('environment', current.id, current.status), 'delete', current.deployed_revision !== null);
      for (const jobId of await listEnvironmentDeploymentJobIds(trx, environmentId)) await cancelQueuedJob(trx, clock, jobId);
    },
  };
}
