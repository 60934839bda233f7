import type { CLOUD_VENDORS } from '../clusters/clusters.schemas.ts';
import type { DeploymentsService } from '../deployments/deployments.service.ts';
import type { ServiceKindDefinition } from '../services/services.kinds.ts';
import type { ServicesService } from '../services/services.service.ts';
import type { EnvironmentsService } from './environments.service.ts';

/**
 * Views that span an environment's or a project's contents (docs/deployment-queue.md, "Overviews"): every service of
 * an environment whatever its kind (listServicesByEnvironmentId), and a project's environments with their cluster,
 * how many services each holds and its deployment status (getProjectEnvironmentsOverview). Each is read from the
 * module that owns it, never stored twice.
 */

export interface EnvironmentOverviewDeps {
  environments: Pick<EnvironmentsService, 'listEnvironment'>;
  services: Pick<ServicesService, 'listAllServices' | 'listEnvironmentServices'>;
  deployments: Pick<DeploymentsService, 'getEnvironmentStatus'>;
  kinds: readonly ServiceKindDefinition[];
}

export function createEnvironmentOverview(deps: EnvironmentOverviewDeps) {
  return {
    /** Every service of the environment, of every kind, as each kind's own listing shows it (kinds in the API's order). */
    async listServicesByEnvironmentId(environmentId: string) {
      return { results: await deps.services.listAllServices(environmentId, deps.kinds.map((definition) => definition.kind)) };
    },

    /** The project's environments, each with its cluster, its number of services and its deployment status. */
    async getProjectEnvironmentsOverview(projectId: string) {
      const environments = await deps.environments.listEnvironment(projectId);
      return {
        results: await Promise.all(
          environments.map(async (environment) => ({
            id: environment.id,
            created_at: environment.created_at,
            updated_at: environment.updated_at,
            name: environment.name,
            mode: environment.mode,
            cluster: {
              id: environment.cluster_id,
              name: environment.cluster_name ?? '',
              cloud_provider: (environment.cloud_provider.provider ?? 'ON_PREMISE') as (typeof CLOUD_VENDORS)[number],
              // Slipway has no demonstration clusters.
              is_demo: false,
            },
            // Every service is Slipway's own: there is no Argo CD import here.
            services_overview: { service_count: (await deps.services.listEnvironmentServices(environment.id)).length, managed_by: 'PLATFORM' as const },
            deployment_status: await deps.deployments.getEnvironmentStatus(environment.id),
          })),
        ),
      };
    },
  };
}

export type EnvironmentOverview = ReturnType<typeof createEnvironmentOverview>;
