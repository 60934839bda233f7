import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { kindDefinition } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import {
  EnvironmentStatsResponseList,
  EnvironmentStatuses,
  EnvironmentStatusList,
  EnvironmentStatusParams,
  ProjectStatusParams,
  ReferenceObjectStatusResponseList,
} from './deployments.schemas.ts';
import type { DeploymentStatuses } from './deployments.statuses.ts';

/** The kinds the reference lists per environment (`/environment/{id}/<path>/status`), with their operation ids. */
const KIND_STATUS_ROUTES: ReadonlyArray<{ kind: ServiceKind; path: string; operationId: string; tag: string }> = [
  { kind: 'APPLICATION', path: 'application', operationId: 'getEnvironmentApplicationStatus', tag: 'Applications' },
  { kind: 'CONTAINER', path: 'container', operationId: 'getEnvironmentContainerStatus', tag: 'Containers' },
  { kind: 'DATABASE', path: 'database', operationId: 'getEnvironmentDatabaseStatus', tag: 'Databases' },
  { kind: 'JOB', path: 'job', operationId: 'getEnvironmentJobStatus', tag: 'Jobs' },
  { kind: 'HELM', path: 'helm', operationId: 'getEnvironmentHelmStatus', tag: 'Helms' },
];

export function registerDeploymentStatusRoutes(app: FastifyTypeBox, statuses: DeploymentStatuses): void {
  app.get(
    '/environment/:environmentId/statuses',
    {
      schema: {
        operationId: 'getEnvironmentStatuses',
        summary: 'Get the statuses of an environment and its services',
        description: "The environment's status and every one of its services', grouped by kind, in one call.",
        tags: ['Environment Main Calls'],
        params: EnvironmentStatusParams,
        response: { 200: EnvironmentStatuses, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => statuses.getEnvironmentStatuses(request.params.environmentId),
  );

  for (const route of KIND_STATUS_ROUTES) {
    app.get(
      `/environment/:environmentId/${route.path}/status`,
      {
        schema: {
          operationId: route.operationId,
          summary: `List the statuses of an environment's ${kindDefinition(route.kind).prose.services}`,
          description: `The deployment state and status message of every one of the environment's ${kindDefinition(route.kind).prose.services}.`,
          tags: [route.tag],
          params: EnvironmentStatusParams,
          response: { 200: ReferenceObjectStatusResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'environments:read', target: 'environment' } },
      },
      async (request) => statuses.listEnvironmentServiceStatuses(request.params.environmentId, route.kind),
    );
  }

  app.get(
    '/project/:projectId/environment/status',
    {
      schema: {
        operationId: 'getProjectEnvironmentsStatus',
        summary: "List the statuses of a project's environments",
        description: 'The status of every environment of the project, as getEnvironmentStatus answers each.',
        tags: ['Environments'],
        params: ProjectStatusParams,
        response: { 200: EnvironmentStatusList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'project' } },
    },
    async (request) => statuses.listProjectEnvironmentStatuses(request.params.projectId),
  );

  app.get(
    '/project/:projectId/environment/stats',
    {
      schema: {
        operationId: 'getProjectEnvironmentServiceNumber',
        summary: "Count the services of a project's environments",
        description: 'How many services each environment of the project holds.',
        tags: ['Environments'],
        params: ProjectStatusParams,
        response: { 200: EnvironmentStatsResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'project' } },
    },
    async (request) => statuses.listProjectEnvironmentStats(request.params.projectId),
  );
}
