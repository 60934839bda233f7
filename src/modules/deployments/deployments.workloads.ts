import type { Transaction } from 'kysely';
import type { WorkloadHealth } from '../../protocol/agent-protocol.ts';
import type { DB } from '../../db/db.schema.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { Type, type Static } from 'typebox';
import type { Clock } from '../../lib/clock.ts';
import { enqueueJobOf, jobKind, payloadOf } from '../../jobs/job-kinds.ts';
import { cancelQueuedJob, findJob } from '../../jobs/job-queue.ts';
import { notFound } from '../../lib/errors.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import type { SnapshotVariable } from '../variables/variables.service.ts';
import { findServiceDeployment, findRuntime, listServiceDeploymentJobIds, listServiceIdsInStatus, updateRuntimeInStatus, type ServiceDeploymentRow } from './deployments.repo.ts';
import { serviceStateOf, snapshotOf } from './deployments.service-records.ts';
import type { DeploymentSnapshot, DeploymentsDeps } from './deployments.service.ts';
import { requestedState } from './deployments.states.ts';

/**
 * A service's workload on its cluster, as the cluster's agent sees it: the deployment it carries out (with the
 * variables opened for it), the one that runs there and how it runs, and its teardown when the service is deleted.
 */

/** The job that removes a deleted service's workload from its cluster (the row is already gone). */
export const SERVICE_TEARDOWN_JOB = 'service.teardown';

/** Everything the agent needs to tear a deleted service down: its record is gone when the job runs. */
export const ServiceTeardownPayload = Type.Object({
  serviceId: Type.String(),
  kind: Type.Enum(SERVICE_KINDS),
  name: Type.String(),
  organizationId: Type.String(),
  environmentId: Type.String(),
  clusterId: Type.String(),
  /** The deployment that last ran (its id names the workload the agent started). */
  deployedDeploymentId: Type.Union([Type.String(), Type.Null()]),
  requestedAt: Type.String(),
  /**
   * A lifecycle JOB with an on_delete command: that deployment's snapshot (as stored: secrets sealed) and its
   * environment, kept here because both records go with the service, so that the teardown's task spec can still be
   * served (to the lease holder only, secrets opened then) for the command to run with.
   */
  onDelete: Type.Optional(
    Type.Object({
      snapshot: Type.String(),
      environment: Type.Object({ id: Type.String(), name: Type.String(), mode: Type.String(), projectId: Type.String() }),
    }),
  ),
});
export type ServiceTeardownPayload = Static<typeof ServiceTeardownPayload>;
export const SERVICE_TEARDOWN = jobKind(SERVICE_TEARDOWN_JOB, ServiceTeardownPayload);

/** A deployment's snapshot as the agent's task spec carries it: every variable opened (for the lease holder only). */
function agentSnapshotOf(snapshot: DeploymentSnapshot, openValue: (variable: SnapshotVariable) => string) {
  return {
    service: snapshot.service,
    git_commit_id: snapshot.git_commit_id,
    image_tag: snapshot.image_tag,
    variables: (snapshot.variables?.variables ?? []).map((variable) => ({
      key: variable.key,
      value: openValue(variable),
      mount_path: variable.mount_path,
      scope: variable.scope,
      secret: variable.sealed !== undefined,
    })),
  };
}

/** Whether a deployed service is a lifecycle JOB with an on_delete command (its teardown runs it: docs/service-kinds.md). */
function hasOnDelete(service: DeploymentSnapshot['service']): boolean {
  const schedule = service.settings.schedule as { kind?: unknown; on_delete?: unknown } | undefined;
  return service.kind === 'JOB' && schedule?.kind === 'LIFECYCLE' && schedule.on_delete !== null && schedule.on_delete !== undefined;
}

/**
 * Queues the removal of what `deployed` put on its cluster, for the cluster's agent, inside the caller's transaction:
 * a deleted service's teardown (refuseBusyService) and an uninstall's (deployments.uninstall.ts). The payload carries
 * all the agent needs, as the service's records may be gone when it runs; the job shares the service's serial key,
 * so an action requested afterwards waits until the teardown ended.
 */
export async function queueServiceTeardown(trx: Transaction<DB>, clock: Clock, deployed: ServiceDeploymentRow): Promise<string> {
  const { service } = snapshotOf(deployed);
  const payload: ServiceTeardownPayload = {
    serviceId: service.id,
    kind: service.kind,
    name: service.name,
    organizationId: service.organizationId,
    environmentId: service.environmentId,
    clusterId: service.clusterId,
    deployedDeploymentId: deployed.id,
    requestedAt: clock.now().toISOString(),
  };
  if (hasOnDelete(service)) {
    // The environment row may go in the same transaction (an environment's deletion): read it while it is there.
    const environment = await trx.selectFrom('environments').select(['id', 'name', 'mode', 'project_id']).where('id', '=', service.environmentId).executeTakeFirst();
    if (environment !== undefined) {
      payload.onDelete = { snapshot: writeJson(snapshotOf(deployed)), environment: { id: environment.id, name: environment.name, mode: environment.mode, projectId: environment.project_id } };
    }
  }
  return enqueueJobOf(trx, clock, SERVICE_TEARDOWN, payload, { serialKey: `service:${service.id}` });
}

/** The states in which a deployed workload runs as its last action left it (a health report applies to it). */
const RUNNING_STATES: ReadonlySet<string> = new Set(['DEPLOYED', 'RESTARTED']);

export function createServiceDeploymentWorkloads(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'metering' | 'stateChanges'>) {
  const { db, clock } = deps;

  /** The service's running deployment (DEPLOYED or RESTARTED), wherever it put the service. */
  async function running(serviceId: string): Promise<{ status: string; service: DeploymentSnapshot['service'] } | undefined> {
    const runtime = await findRuntime(db, serviceId);
    if (runtime?.deployed_deployment_id === null || runtime === undefined || !RUNNING_STATES.has(runtime.status)) return undefined;
    const record = await findServiceDeployment(db, runtime.deployed_deployment_id);
    return record === undefined ? undefined : { status: runtime.status, service: snapshotOf(record).service };
  }

  /** The same, when that deployment put it on `clusterId`. */
  async function runningOn(serviceId: string, clusterId: string): Promise<{ status: string; service: DeploymentSnapshot['service'] } | undefined> {
    const found = await running(serviceId);
    return found?.service.clusterId === clusterId ? found : undefined;
  }

  return {
    /**
     * How a deployed workload runs, from the agent of the service's cluster (docs/agent-protocol.md, "Workload
     * health"): RUNNING, RESTARTING after a crash (restarts so far, the reason) or FAILED. Shown in the service's
     * status until its next deployment. A service of another cluster, or one not deployed, is a 404.
     */
    async recordWorkloadHealth(serviceId: string, clusterId: string, report: { health: WorkloadHealth; restarts: number; message?: string | undefined }) {
      const running = await runningOn(serviceId, clusterId);
      if (running === undefined) throw notFound(`no running service ${serviceId} on this cluster`);
      const recorded = await updateRuntimeInStatus(db, serviceId, running.status, {
        workload_health: report.health,
        workload_restarts: report.restarts,
        workload_message: report.message ?? null,
        workload_reported_at: clock.now().toISOString(),
      });
      if (recorded) await deps.stateChanges?.serviceChanged(db, serviceId);
    },

    /**
     * For the cluster's agent: one deployment with its snapshot (secrets still sealed: open them with the
     * variables module's openSnapshotValue where the workload starts).
     */
    async deploymentForAgent(deploymentId: string): Promise<{ record: ServiceDeploymentRow; snapshot: DeploymentSnapshot } | undefined> {
      const record = await findServiceDeployment(db, deploymentId);
      return record === undefined ? undefined : { record, snapshot: snapshotOf(record) };
    },

    /** The service as its running deployment deployed it (DEPLOYED or RESTARTED), on whichever cluster. */
    async runningService(serviceId: string): Promise<DeploymentSnapshot['service'] | undefined> {
      return (await running(serviceId))?.service;
    },

    /** Every service whose deployment runs now (DEPLOYED or RESTARTED). */
    listRunningServiceIds(): Promise<string[]> {
      return listServiceIdsInStatus(db, [...RUNNING_STATES]);
    },

    /** The service as its running deployment deployed it, when it runs on the cluster (DEPLOYED or RESTARTED there). */
    async runningServiceOn(serviceId: string, clusterId: string): Promise<DeploymentSnapshot['service'] | undefined> {
      return (await runningOn(serviceId, clusterId))?.service;
    },

    /**
     * The deployment as the agent carries it out (its task spec): the service as deployed, the commit or tag, and
     * every variable with its value opened — secrets and hidden built-ins included, for the lease holder only.
     */
    async deploymentSpecForAgent(serviceId: string, deploymentId: string, openValue: (variable: SnapshotVariable) => string) {
      const record = await findServiceDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      return agentSnapshotOf(snapshotOf(record), openValue);
    },

    /**
     * A deleted lifecycle JOB's last deployment as its teardown (job `jobId`) carries it out: what the teardown job
     * kept of it for on_delete (refuseBusyService), with its environment as it was. A 404 for any other teardown.
     */
    async teardownSpecForAgent(serviceId: string, jobId: string, openValue: (variable: SnapshotVariable) => string) {
      const job = await findJob(db, jobId);
      const payload = job === undefined || job.kind !== SERVICE_TEARDOWN_JOB ? undefined : payloadOf(SERVICE_TEARDOWN, { id: job.id, payload: readJson<Record<string, unknown>>(job.payload) });
      if (payload === undefined || payload.serviceId !== serviceId || payload.onDelete === undefined) throw notFound(`the teardown of service ${serviceId} has no spec`);
      return { ...agentSnapshotOf(readJson<DeploymentSnapshot>(payload.onDelete.snapshot), openValue), environment: payload.onDelete.environment };
    },

    /**
     * For the services module's delete, inside its transaction (before the row goes): refuses (409, naming the
     * state) while the agent works on the service, withdraws its queued actions, and, when a workload may exist,
     * queues its teardown for the agent (unless `teardown` is false: skipReconcile). Call `serviceRemoved` after the
     * commit.
     */
    async refuseBusyService(trx: Transaction<DB>, serviceId: string, options: { teardown: boolean }): Promise<void> {
      const runtime = await findRuntime(trx, serviceId);
      if (runtime === undefined) return;
      requestedState('service', serviceStateOf(runtime), 'delete', runtime.deployed_deployment_id !== null);
      for (const jobId of await listServiceDeploymentJobIds(trx, serviceId)) await cancelQueuedJob(trx, clock, jobId);
      const deployed = runtime.deployed_deployment_id === null || !options.teardown ? undefined : await findServiceDeployment(trx, runtime.deployed_deployment_id);
      if (deployed !== undefined) await queueServiceTeardown(trx, clock, deployed);
    },

    /** After a service's removal is committed: its metered running time ends. */
    async serviceRemoved(serviceId: string): Promise<void> {
      await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at: clock.now().toISOString() });
    },
  };
}
