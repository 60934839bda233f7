import { Type } from 'typebox';
import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import type { ServiceKindDefinition } from '../services/services.kinds.ts';
import type { EnvironmentOverview } from './environments.overview.ts';
import { EnvironmentOverviewResponseList, EnvironmentParams, ProjectEnvironmentParams } from './environments.schemas.ts';

/** The overviews of environments.overview.ts: every service of an environment, and a project's environments. */
export function registerEnvironmentOverviewRoutes(app: FastifyTypeBox, overview: EnvironmentOverview, kinds: readonly ServiceKindDefinition[]): void {
  // Each kind's own response, told apart by `service_type`; the handler answers them as each kind's listing builds them.
  const ServiceOfAnyKind = Type.Unsafe<unknown>(Type.Union(kinds.map((definition) => definition.response)));

  app.get(
    '/environment/:environmentId/services',
    {
      schema: {
        operationId: 'listServicesByEnvironmentId',
        summary: "List all of an environment's services",
        description:
          "Every service of the environment — applications, containers, databases, jobs, Helm charts, Terraform services and agentic workflows — each as " +
          "its kind's own listing shows it, `service_type` telling them apart. 404 for an environment of another organization.",
        tags: ['Environment Main Calls'],
        params: EnvironmentParams,
        response: { 200: Type.Object({ results: Type.Array(ServiceOfAnyKind) }), ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'environment' } },
    },
    async (request) => overview.listServicesByEnvironmentId(request.params.environmentId),
  );

  app.get(
    '/project/:projectId/environment/overview',
    {
      schema: {
        operationId: 'getProjectEnvironmentsOverview',
        summary: "Overview of a project's environments",
        description:
          "Each environment of the project with its mode, its cluster, how many services it holds and its deployment status (the environment's " +
          'status, as getEnvironmentStatus answers it). 404 for a project of another organization.',
        tags: ['Environments'],
        params: ProjectEnvironmentParams,
        response: { 200: EnvironmentOverviewResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'project' } },
    },
    async (request) => overview.getProjectEnvironmentsOverview(request.params.projectId),
  );
}
