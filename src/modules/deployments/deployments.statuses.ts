import type { EnvironmentsService } from '../environments/environments.service.ts';
import type { DeploymentsService, ServiceStatusView } from './deployments.service.ts';
import type { ServicesService } from '../services/services.service.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';

/**
 * The status pages of the reference that span an environment or a project (getEnvironmentStatuses, the per-kind
 * getEnvironment…Status lists, getProjectEnvironmentsStatus, getProjectEnvironmentServiceNumber): each is the
 * status of every environment or service it covers as this module answers it one by one, never stored twice.
 */
export interface DeploymentStatusesDeps {
  environments: Pick<EnvironmentsService, 'listEnvironment'>;
  services: Pick<ServicesService, 'listEnvironmentServices'>;
  deployments: Pick<DeploymentsService, 'getServiceStatus' | 'getEnvironmentStatus'>;
}

/** Where each kind's statuses go in getEnvironmentStatuses. */
const STATUS_GROUPS = {
  APPLICATION: 'applications',
  CONTAINER: 'containers',
  JOB: 'jobs',
  DATABASE: 'databases',
  HELM: 'helms',
  TERRAFORM: 'terraforms',
  AGENTIC_WORKFLOW: 'agentic_workflows',
} as const satisfies Record<ServiceKind, string>;

type StatusGroup = (typeof STATUS_GROUPS)[ServiceKind];

export function createDeploymentStatuses(deps: DeploymentStatusesDeps) {
  /** The services of the environment (of one kind, or all) with their statuses, in the services module's order. */
  async function serviceStatuses(environmentId: string, kind?: ServiceKind) {
    const services = (await deps.services.listEnvironmentServices(environmentId)).filter((service) => kind === undefined || service.kind === kind);
    return Promise.all(services.map(async (service) => ({ kind: service.kind, status: await deps.deployments.getServiceStatus(service.kind, service.id) })));
  }

  return {
    async getEnvironmentStatuses(environmentId: string) {
      const environment = await deps.deployments.getEnvironmentStatus(environmentId);
      const groups = Object.fromEntries(Object.values(STATUS_GROUPS).map((group) => [group, [] as ServiceStatusView[]])) as Record<StatusGroup, ServiceStatusView[]>;
      for (const { kind, status } of await serviceStatuses(environmentId)) groups[STATUS_GROUPS[kind]].push(status);
      return { environment, ...groups };
    },

    async listEnvironmentServiceStatuses(environmentId: string, kind: ServiceKind) {
      await deps.deployments.getEnvironmentStatus(environmentId);
      return { results: (await serviceStatuses(environmentId, kind)).map(({ status }) => status) };
    },

    async listProjectEnvironmentStatuses(projectId: string) {
      const environments = await deps.environments.listEnvironment(projectId);
      return { results: await Promise.all(environments.map((environment) => deps.deployments.getEnvironmentStatus(environment.id))) };
    },

    async listProjectEnvironmentStats(projectId: string) {
      const environments = await deps.environments.listEnvironment(projectId);
      return {
        results: await Promise.all(
          environments.map(async (environment) => {
            const count = (await deps.services.listEnvironmentServices(environment.id)).length;
            return { id: environment.id, service_total_number: count, number: count };
          }),
        ),
      };
    },
  };
}

export type DeploymentStatuses = ReturnType<typeof createDeploymentStatuses>;
