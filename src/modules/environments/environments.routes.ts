import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, SkipReconcileQuery } from '../../protocol/wire.ts';
import {
  CloneEnvironmentRequest,
  CreateEnvironmentRequest,
  Environment,
  EnvironmentEditRequest,
  EnvironmentParams,
  EnvironmentResponseList,
  ProjectEnvironmentParams,
} from './environments.schemas.ts';
import type { EnvironmentsService } from './environments.service.ts';

const TAGS = ['Environments'];
const MAIN_TAGS = ['Environment Main Calls'];

/** An environment's CRUD; its status, actions and history are the deployments module's (deployments.environment-routes.ts). */
export function registerEnvironmentRoutes(app: FastifyTypeBox, environments: EnvironmentsService): void {
  app.get(
    '/project/:projectId/environment',
    {
      schema: {
        operationId: 'listEnvironment',
        summary: 'List the environments of a project',
        description: 'Every environment of the project, each with its mode and the cluster it runs on.',
        tags: TAGS,
        params: ProjectEnvironmentParams,
        response: { 200: EnvironmentResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'project' } },
    },
    async (request) => ({ results: await environments.listEnvironment(request.params.projectId) }),
  );

  app.post(
    '/project/:projectId/environment',
    {
      schema: {
        operationId: 'createEnvironment',
        summary: 'Create an environment',
        description:
          'Creates an environment of the project on a cluster of the organization: `cluster`, or else the one a deployment rule of the project ' +
          "chooses for the environment's name, or else the organization's only cluster. `mode` defaults to the rule's, or DEVELOPMENT. It starts " +
          'READY, with no services and never deployed. 400 without a cluster when the organization has several and no rule chooses one; 404 for ' +
          'a cluster that is not the organization\'s; 409 when the project has an environment of that name.',
        tags: TAGS,
        params: ProjectEnvironmentParams,
        body: CreateEnvironmentRequest,
        response: { 201: Environment, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:create', target: 'project' } },
    },
    async (request, reply) => {
      const access = requireAccess(request);
      const created = await environments.createEnvironment(requirePrincipal(request), access.organizationId, request.params.projectId, request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.get(
    '/environment/:environmentId',
    {
      schema: {
        operationId: 'getEnvironment',
        summary: 'Get an environment',
        description: 'The environment with its mode, its project and the cluster it runs on; its deployment state is getEnvironmentStatus\'s answer.',
        tags: MAIN_TAGS,
        params: EnvironmentParams,
        response: { 200: Environment, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => environments.getEnvironment(request.params.environmentId),
  );

  app.put(
    '/environment/:environmentId',
    {
      schema: {
        operationId: 'editEnvironment',
        summary: 'Edit an environment',
        description:
          'Renames an environment or changes its mode; a field left out keeps its value. A mode change makes a deployed environment OUT_OF_DATE ' +
          'until its next deploy. 409 when the project has another environment of the new name.',
        tags: MAIN_TAGS,
        params: EnvironmentParams,
        body: EnvironmentEditRequest,
        response: { 200: Environment, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:update', target: 'environment' } },
    },
    async (request) => environments.editEnvironment(requirePrincipal(request), request.params.environmentId, request.body),
  );

  app.delete(
    '/environment/:environmentId',
    {
      schema: {
        operationId: 'deleteEnvironment',
        summary: 'Delete an environment',
        description:
          "Removes the environment with its services and deployment history (queued actions are withdrawn), and has the cluster's agent tear its workloads down unless skipReconcile (then what runs on the cluster stays). 409 while the agent works on it or on one of its services.",
        tags: MAIN_TAGS,
        params: EnvironmentParams,
        querystring: SkipReconcileQuery,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:delete', target: 'environment' } },
    },
    async (request, reply) => {
      await environments.deleteEnvironment(request.params.environmentId, { skipReconcile: request.query.skipReconcile });
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    '/environment/:environmentId/clone',
    {
      schema: {
        operationId: 'cloneEnvironment',
        summary: 'Clone an environment',
        description:
          "Creates a new environment in the same project with this one's mode, cluster and deployment stages (cluster_id and mode may choose " +
          'others), never its history; clone_variables copies its environment-scoped variables and secrets. The clone starts READY, never ' +
          "deployed. 404 for a cluster that is not the organization's; 409 when the project has an environment of that name.",
        tags: MAIN_TAGS,
        params: EnvironmentParams,
        body: CloneEnvironmentRequest,
        response: { 201: Environment, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:create', target: 'environment' } },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.created).send(await environments.cloneEnvironment(requirePrincipal(request), request.params.environmentId, request.body)),
  );
}
