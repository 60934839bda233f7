import type { AgentsDeps } from '../agents/agents.service.ts';
import type { EnvironmentsService } from '../environments/environments.service.ts';
import type { ServiceAgentSpecs } from '../services/services.agent-spec.ts';
import type { ServiceDeploymentsService } from '../services/services.deployments.service.ts';

/**
 * What an agent's reports move (docs/agent-protocol.md), as the agents module asks it: the subjects of its tasks —
 * an environment's deployment, a service's, a deleted service's teardown — and the deployed workloads of its cluster
 * (their output, health and routes). Each answer is the owning module's own operation; this is where the deployment
 * modules meet the protocol's vocabulary.
 */
export interface AgentSubjectsDeps {
  environments: Pick<EnvironmentsService, 'recordAgentProgress' | 'findEnvironmentState' | 'isDeploymentOpen'>;
  serviceDeployments: Pick<
    ServiceDeploymentsService,
    'recordServiceProgress' | 'findServiceState' | 'isDeploymentOpen' | 'appendDeploymentLog' | 'appendWorkloadLog' | 'recordWorkloadHealth'
  >;
  specs: Pick<ServiceAgentSpecs, 'serviceTaskSpec' | 'routesOf'>;
  log: { warn(object: object, message: string): void };
}

export function createAgentSubjects(deps: AgentSubjectsDeps): Pick<AgentsDeps, 'subjects' | 'workloads'> {
  const { environments, serviceDeployments, specs } = deps;
  return {
    subjects: {
      ENVIRONMENT: {
        recordProgress: async (environmentId, deploymentId, event, message) => ({
          status: (await environments.recordAgentProgress(environmentId, deploymentId, event, message)).state,
        }),
        statusOf: (environmentId) => environments.findEnvironmentState(environmentId),
        deploymentOpen: (environmentId, deploymentId) => environments.isDeploymentOpen(environmentId, deploymentId),
      },
      SERVICE: {
        recordProgress: async (serviceId, deploymentId, event, message) => ({
          status: (await serviceDeployments.recordServiceProgress(serviceId, deploymentId, event, message)).state,
        }),
        statusOf: (serviceId) => serviceDeployments.findServiceState(serviceId),
        deploymentOpen: (serviceId, deploymentId) => serviceDeployments.isDeploymentOpen(serviceId, deploymentId),
        specOf: (serviceId, deploymentId) => specs.serviceTaskSpec(serviceId, deploymentId),
        appendLogs: (deploymentId, lines) =>
          serviceDeployments.appendDeploymentLog(
            deploymentId,
            lines.map((line) => ({ message: line.line, stream: line.stream, timestamp: line.at })),
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
      },
    },
    workloads: {
      appendLogs: (serviceId, clusterId, lines) =>
        serviceDeployments.appendWorkloadLog(
          serviceId,
          clusterId,
          lines.map((line) => ({ message: line.line, stream: line.stream, timestamp: line.at, ...(line.instance === undefined ? {} : { instance: line.instance }) })),
        ),
      recordHealth: (serviceId, clusterId, report) => serviceDeployments.recordWorkloadHealth(serviceId, clusterId, report),
      routesOf: (clusterId, serviceIds) => specs.routesOf(clusterId, serviceIds),
    },
  };
}
