import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, SkipReconcileQuery } from '../../protocol/wire.ts';
import {
  CloneEnvironmentRequest,
  CreateEnvironmentRequest,
  DeploymentHistoryEnvironmentPaginatedResponseList,
  DeploymentHistoryEnvironmentPaginatedResponseListV2,
  DeploymentHistoryQuery,
  DeploymentHistoryV2Query,
  Environment,
  EnvironmentActionStatus,
  EnvironmentEditRequest,
  EnvironmentParams,
  EnvironmentResponseList,
  EnvironmentStatus,
  ProjectEnvironmentParams,
  RebootServicesRequest,
} from './environments.schemas.ts';
import type { EnvironmentsService } from './environments.service.ts';

const TAGS = ['Environments'];
const MAIN_TAGS = ['Environment Main Calls'];
const ACTION_TAGS = ['Environment Actions'];
const HISTORY_TAGS = ['Environment Deployment History'];

const QUEUED_NOTE = 'The cluster\'s agent carries the action out; until it takes it, the environment stays QUEUED and its status message says so.';

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

  app.get(
    '/environment/:environmentId/status',
    {
      schema: { operationId: 'getEnvironmentStatus', tags: MAIN_TAGS, params: EnvironmentParams, response: { 200: EnvironmentStatus, ...authenticatedErrors() } },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => environments.getEnvironmentStatus(request.params.environmentId),
  );

  app.post(
    '/environment/:environmentId/deploy',
    {
      schema: {
        operationId: 'deployEnvironment',
        description: `Queues a deploy. ${QUEUED_NOTE}`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentActionStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await environments.deployEnvironment(requirePrincipal(request), request.params.environmentId)),
  );

  app.post(
    '/environment/:environmentId/redeploy',
    {
      schema: {
        operationId: 'redeployEnvironment',
        description: `Queues a redeploy of a deployed environment. ${QUEUED_NOTE}`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await environments.redeployEnvironment(requirePrincipal(request), request.params.environmentId)),
  );

  app.post(
    '/environment/:environmentId/stop',
    {
      schema: {
        operationId: 'stopEnvironment',
        description: `Queues a stop of a deployed environment. ${QUEUED_NOTE}`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await environments.stopEnvironment(requirePrincipal(request), request.params.environmentId)),
  );

  app.post(
    '/environment/:environmentId/service/restart-service',
    {
      schema: {
        operationId: 'rebootServices',
        description: `Queues a restart of a deployed environment's services. ${QUEUED_NOTE}`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        body: RebootServicesRequest,
        response: { 202: EnvironmentActionStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
      // The reference's body is optional: no body restarts every service, as an empty one does.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await environments.rebootServices(requirePrincipal(request), request.params.environmentId, request.body)),
  );

  app.post(
    '/environment/:environmentId/cancelDeployment',
    {
      schema: {
        operationId: 'cancelEnvironmentDeployment',
        description: 'Cancels the queued action at once, or a deploy under way at the agent\'s next step.',
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await environments.cancelEnvironmentDeployment(request.params.environmentId)),
  );

  app.get(
    '/environment/:environmentId/deploymentHistory',
    {
      schema: {
        operationId: 'listEnvironmentDeploymentHistory',
        description: 'Newest first, pageSize entries (default 20) older than startId; next_cursor is the startId of the next page.',
        tags: HISTORY_TAGS,
        params: EnvironmentParams,
        querystring: DeploymentHistoryQuery,
        response: { 200: DeploymentHistoryEnvironmentPaginatedResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => environments.listEnvironmentDeploymentHistory(request.params.environmentId, request.query),
  );

  app.get(
    '/environment/:environmentId/deploymentHistoryV2',
    {
      schema: {
        operationId: 'listEnvironmentDeploymentHistoryV2',
        description: 'Newest first, pageSize entries (default 20) older than cursor; next_cursor is the cursor of the next page.',
        tags: HISTORY_TAGS,
        params: EnvironmentParams,
        querystring: DeploymentHistoryV2Query,
        response: { 200: DeploymentHistoryEnvironmentPaginatedResponseListV2, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => environments.listEnvironmentDeploymentHistoryV2(request.params.environmentId, request.query),
  );
}
