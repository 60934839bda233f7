import type { AgentsDeps } from '../agents/agents.service.ts';
import type { ServiceAgentSpecs } from '../services/services.agent-spec.ts';
import type { DeploymentsService } from './deployments.service.ts';

/**
 * What an agent's reports move (docs/agent-protocol.md), as the agents module asks it: the subjects of its tasks —
 * an environment's deployment, a service's, a deleted service's teardown — and the deployed workloads of its cluster
 * (their output, health and routes). Each answer is this module's own operation, but for a task's spec and a
 * workload's routes, which are the services module's (services.agent-spec.ts); this is where deployments meet the
 * protocol's vocabulary.
 */
export interface AgentSubjectsDeps {
  deployments: Pick<
    DeploymentsService,
    | 'recordEnvironmentProgress'
    | 'findEnvironmentState'
    | 'recordServiceProgress'
    | 'findServiceState'
    | 'isDeploymentOpen'
    | 'appendDeploymentLog'
    | 'appendWorkloadLog'
    | 'recordWorkloadHealth'
  >;
  specs: Pick<ServiceAgentSpecs, 'serviceTaskSpec' | 'teardownTaskSpec' | 'routesOf'>;
  log: { warn(object: object, message: string): void };
}

export function createAgentSubjects(deps: AgentSubjectsDeps): Pick<AgentsDeps, 'subjects' | 'workloads'> {
  const { deployments, specs } = deps;
  return {
    subjects: {
      ENVIRONMENT: {
        recordProgress: async (environmentId, deploymentId, event, message) => ({
          status: (await deployments.recordEnvironmentProgress(environmentId, deploymentId, event, message)).state,
        }),
        statusOf: (environmentId) => deployments.findEnvironmentState(environmentId),
        deploymentOpen: (environmentId, deploymentId) => deployments.isDeploymentOpen('environment', environmentId, deploymentId),
      },
      SERVICE: {
        recordProgress: async (serviceId, deploymentId, event, message) => ({
          status: (await deployments.recordServiceProgress(serviceId, deploymentId, event, message)).state,
        }),
        statusOf: (serviceId) => deployments.findServiceState(serviceId),
        deploymentOpen: (serviceId, deploymentId) => deployments.isDeploymentOpen('service', serviceId, deploymentId),
        specOf: (serviceId, deploymentId) => specs.serviceTaskSpec(serviceId, deploymentId),
        appendLogs: (deploymentId, lines, claim) =>
          deployments.appendDeploymentLog(
            deploymentId,
            lines.map((line) => ({ message: line.line, stream: line.stream, timestamp: line.at })),
            claim,
          ),
      },
      // A deleted service's remains: nothing of it is left to move through states; its job waits for the outcome.
      SERVICE_TEARDOWN: {
        recordProgress: async (serviceId, _jobId, event, message) => {
          if (event === 'fail') deps.log.warn({ serviceId }, `tearing a deleted service down failed: ${message ?? 'no reason given'}`);
          return { status: event === 'succeed' ? 'DELETED' : event === 'fail' ? 'DELETE_ERROR' : 'DELETING' };
        },
        statusOf: async () => 'DELETING',
        deploymentOpen: async () => true,
        // A lifecycle job's on_delete runs with its last deployment, kept by the teardown job (the deployment id of
        // a teardown task is its job's id); any other teardown has no spec (404).
        specOf: (serviceId, jobId) => specs.teardownTaskSpec(serviceId, jobId),
      },
    },
    workloads: {
      appendLogs: (serviceId, clusterId, lines) =>
        deployments.appendWorkloadLog(
          serviceId,
          clusterId,
          lines.map((line) => ({ message: line.line, stream: line.stream, timestamp: line.at, ...(line.instance === undefined ? {} : { instance: line.instance }) })),
        ),
      recordHealth: (serviceId, clusterId, report) => deployments.recordWorkloadHealth(serviceId, clusterId, report),
      routesOf: (clusterId, serviceIds) => specs.routesOf(clusterId, serviceIds),
    },
  };
}
