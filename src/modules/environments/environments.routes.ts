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
      schema: { operationId: 'listEnvironment', tags: TAGS, params: ProjectEnvironmentParams, response: { 200: EnvironmentResponseList, ...authenticatedErrors() } },
      config: { access: { permission: 'environments:read', target: 'project' } },
    },
    async (request) => ({ results: await environments.listEnvironment(request.params.projectId) }),
  );

  app.post(
    '/project/:projectId/environment',
    {
      schema: {
        operationId: 'createEnvironment',
        description: 'Creates an environment on a cluster of the organization (the only one when `cluster` is left out). Names are unique per project.',
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
      schema: { operationId: 'getEnvironment', tags: MAIN_TAGS, params: EnvironmentParams, response: { 200: Environment, ...authenticatedErrors() } },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => environments.getEnvironment(request.params.environmentId),
  );

  app.put(
    '/environment/:environmentId',
    {
      schema: {
        operationId: 'editEnvironment',
        description: 'Renames an environment or changes its mode; a mode change makes a deployed environment OUT_OF_DATE until its next deploy.',
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
        description:
          "Removes the environment with its services and deployment history (queued actions are withdrawn), and has the cluster's agent tear its workloads down unless skipReconcile; 409 while the agent works on it.",
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
        description: 'Creates a new environment in the same project with this one\'s settings (never its history); clone_variables copies its variables and secrets.',
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
