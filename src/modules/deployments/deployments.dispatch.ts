import type { ClaimedJob } from '../../jobs/job-queue.ts';
import { payloadOf } from '../../jobs/job-kinds.ts';
import type { JobHandler } from '../../jobs/job-worker.ts';
import type { Clock } from '../../lib/clock.ts';
import { STARTING_ACTIONS } from '../../engine/deployment-states.ts';
import type { EnvironmentTaskPayload, ServiceTaskPayload, ServiceTeardownPayload } from '../../protocol/agent-protocol.ts';
import { createAgentDispatchHandler, type AgentDispatchDeps } from '../agents/agents.jobs.ts';
import type { AgentsService } from '../agents/agents.service.ts';
import type { EnvironmentsService } from '../environments/environments.service.ts';
import { ENVIRONMENT_ACTION } from './deployments.environment-requests.ts';
import { SERVICE_ACTION } from './deployments.requests.ts';
import type { DeploymentsService } from './deployments.service.ts';
import { SERVICE_TEARDOWN } from './deployments.workloads.ts';

/**
 * The orchestration of deployments onto clusters: the handlers of the three jobs whose work is a cluster agent's —
 * a service's action, a deleted service's teardown, an environment's action — each putting one task into the
 * cluster's mailbox (agents.jobs.ts) in an order the agent can follow:
 *
 *   environment action ──fan out, once──▶ its services' own actions (stage by stage: docs/deployment-stages.md)
 *         │                                  │ each a service.action job → a SERVICE task
 *         └── its ENVIRONMENT task, only once all of theirs are in the mailbox (the agent meets theirs first)
 *   service action that starts a workload ── waits until those of earlier stages' services requested before it are in
 *
 * The fan-out happens when the environment's job first runs, before its task exists, and is recorded on the
 * environment's deployment record (`services_requested_at`): a job run again after a crash, or by another worker,
 * does not ask again. Between asking and recording, a crash makes the next run ask again; the services' state
 * machines refuse what is already under way, which the fan-out reports as skipped.
 *
 * The task payloads are the agent protocol's (src/protocol/agent-protocol.ts), so what a driver parses is what is
 * written here.
 */
export interface DeploymentDispatchDeps {
  agents: Pick<AgentsService, 'dispatchTask' | 'dispatchedTaskOutcome' | 'taskDispatched'>;
  environments: Pick<EnvironmentsService, 'findEnvironmentSummary'>;
  deployments: Pick<
    DeploymentsService,
    | 'servicesRequested'
    | 'markServicesRequested'
    | 'requestEnvironmentServicesAction'
    | 'openDeploymentIdsOfEnvironment'
    | 'findServiceState'
    | 'stagePlaceOf'
  >;
  clock: Clock;
  /** How often a waiting job looks at its task when no report wakes it (agents.jobs.ts). */
  recheckMs?: number | undefined;
  log: { info(object: object, message: string): void };
}

export function createDeploymentDispatch(deps: DeploymentDispatchDeps): Array<readonly [string, JobHandler]> {
  const { agents, environments, deployments } = deps;
  const dispatchToAgent = (handler: Pick<AgentDispatchDeps, 'locate' | 'ready'>): JobHandler =>
    createAgentDispatchHandler({ agents, clock: deps.clock, recheckMs: deps.recheckMs, ...handler });

  /** Whether each of these deployments has its task in the mailbox: what a task that must follow them waits for. */
  async function allDispatched(deploymentIds: readonly string[]): Promise<boolean> {
    for (const deploymentId of deploymentIds) if (!(await agents.taskDispatched(deploymentId))) return false;
    return true;
  }

  /** The environment's action becomes its services' own deployments, once (see the model above). */
  async function fanOut(job: ClaimedJob, environmentId: string): Promise<void> {
    const payload = payloadOf(ENVIRONMENT_ACTION, job);
    if ((await deployments.servicesRequested(payload.deploymentId)) || (await agents.taskDispatched(payload.deploymentId))) return;
    // Its services' deployments record the environment action's requester; a job written before the payload named the
    // origin comes from a record that says API (what every record said then).
    const requester = { name: payload.triggeredBy ?? 'Slipway', origin: payload.origin ?? 'API' };
    const outcomes = await deployments.requestEnvironmentServicesAction(environmentId, payload.action, requester, payload.serviceIds, payload.deploymentId);
    await deployments.markServicesRequested(payload.deploymentId);
    for (const skipped of outcomes.filter((outcome) => outcome.skipped !== undefined)) {
      deps.log.info({ environmentId, serviceId: skipped.serviceId }, `${payload.action} of ${skipped.name} skipped: ${skipped.skipped}`);
    }
  }

  const serviceAction = dispatchToAgent({
    // The task names the deployment; the agent reads its snapshot (settings, sealed variables) through it.
    locate: async (job) => {
      const payload = payloadOf(SERVICE_ACTION, job);
      if ((await deployments.findServiceState(payload.serviceId)) === undefined) return undefined;
      const place = await deployments.stagePlaceOf(payload.environmentId, payload.serviceId);
      const task: ServiceTaskPayload = {
        service_id: payload.serviceId,
        service_type: payload.kind,
        environment_id: payload.environmentId,
        deployment_id: payload.deploymentId,
        action: payload.action,
        requested_at: payload.requestedAt,
        ...(place === undefined ? {} : { deployment_stage_order: place.stage }),
      };
      return {
        clusterId: payload.clusterId,
        organizationId: payload.organizationId,
        subjectType: 'SERVICE',
        subjectId: payload.serviceId,
        deploymentId: payload.deploymentId,
        action: payload.action,
        requestedAt: payload.requestedAt,
        payload: task,
      };
    },
    // Started together with services of earlier deployment stages requested before it (by default: its environment's
    // databases), a service's task follows theirs into the mailbox (docs/deployment-stages.md), where the lease keeps
    // it until they are up (docs/agent-protocol.md, "Order").
    ready: async (request) => {
      const { environment_id: environmentId, service_id: serviceId } = request.payload;
      if (typeof environmentId !== 'string' || typeof serviceId !== 'string' || request.requestedAt === undefined) return true;
      if (!STARTING_ACTIONS.some((action) => action === request.action)) return true;
      const earlier = (await deployments.stagePlaceOf(environmentId, serviceId))?.earlierServiceIds ?? [];
      return allDispatched(await deployments.openDeploymentIdsOfEnvironment(environmentId, { startsBefore: { at: request.requestedAt, serviceIds: earlier } }));
    },
  });

  const serviceTeardown = dispatchToAgent({
    locate: async (job) => {
      const payload = payloadOf(SERVICE_TEARDOWN, job);
      const task: ServiceTeardownPayload = { service_id: payload.serviceId, service_type: payload.kind, environment_id: payload.environmentId, name: payload.name };
      return {
        clusterId: payload.clusterId,
        organizationId: payload.organizationId,
        subjectType: 'SERVICE_TEARDOWN',
        subjectId: payload.serviceId,
        // A teardown has no deployment record: its job stands for it.
        deploymentId: job.id,
        action: 'delete',
        requestedAt: payload.requestedAt,
        payload: task,
      };
    },
  });

  const environmentAction = dispatchToAgent({
    locate: async (job) => {
      const payload = payloadOf(ENVIRONMENT_ACTION, job);
      const environment = await environments.findEnvironmentSummary(payload.environmentId);
      if (environment === undefined) return undefined;
      await fanOut(job, environment.id);
      const task: EnvironmentTaskPayload = { environment_id: environment.id, action: payload.action, requested_at: payload.requestedAt };
      return {
        clusterId: environment.clusterId,
        organizationId: environment.organizationId,
        subjectType: 'ENVIRONMENT',
        subjectId: environment.id,
        deploymentId: payload.deploymentId,
        action: payload.action,
        payload: task,
      };
    },
    // Its task follows its services' in the mailbox: the agent meets theirs first.
    ready: async (request) => allDispatched(await deployments.openDeploymentIdsOfEnvironment(request.subjectId)),
  });

  return [
    [SERVICE_ACTION.kind, serviceAction],
    [SERVICE_TEARDOWN.kind, serviceTeardown],
    [ENVIRONMENT_ACTION.kind, environmentAction],
  ];
}
