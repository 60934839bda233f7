import type { EnvironmentsService } from '../environments/environments.service.ts';
import type { ServiceDeploymentsService, ServiceStatusView } from '../services/services.deployments.service.ts';
import type { ServicesService } from '../services/services.service.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';

/**
 * The status pages of the reference that span an environment or a project (getEnvironmentStatuses, the per-kind
 * getEnvironment…Status lists, getProjectEnvironmentsStatus, getProjectEnvironmentServiceNumber): each is the
 * owning module's own status of every environment or service it covers, read in one place, never stored twice.
 */
export interface DeploymentStatusesDeps {
  environments: Pick<EnvironmentsService, 'getEnvironmentStatus' | 'listEnvironment'>;
  services: Pick<ServicesService, 'listEnvironmentServices'>;
  serviceDeployments: Pick<ServiceDeploymentsService, 'getServiceStatus'>;
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
    return Promise.all(services.map(async (service) => ({ kind: service.kind, status: await deps.serviceDeployments.getServiceStatus(service.kind, service.id) })));
  }

  return {
    async getEnvironmentStatuses(environmentId: string) {
      const environment = await deps.environments.getEnvironmentStatus(environmentId);
      const groups = Object.fromEntries(Object.values(STATUS_GROUPS).map((group) => [group, [] as ServiceStatusView[]])) as Record<StatusGroup, ServiceStatusView[]>;
      for (const { kind, status } of await serviceStatuses(environmentId)) groups[STATUS_GROUPS[kind]].push(status);
      return { environment, ...groups };
    },

    async listEnvironmentServiceStatuses(environmentId: string, kind: ServiceKind) {
      await deps.environments.getEnvironmentStatus(environmentId);
      return { results: (await serviceStatuses(environmentId, kind)).map(({ status }) => status) };
    },

    async listProjectEnvironmentStatuses(projectId: string) {
      const environments = await deps.environments.listEnvironment(projectId);
      return { results: await Promise.all(environments.map((environment) => deps.environments.getEnvironmentStatus(environment.id))) };
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
