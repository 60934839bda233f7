import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { EnvironmentParams } from '../environments/environments.schemas.ts';
import {
  DeploymentHistoryEnvironmentPaginatedResponseList,
  DeploymentHistoryEnvironmentPaginatedResponseListV2,
  DeploymentHistoryQuery,
  DeploymentHistoryV2Query,
  EnvironmentActionStatus,
  EnvironmentStatus,
  RebootServicesRequest,
} from './deployments.schemas.ts';
import type { DeploymentsService } from './deployments.service.ts';

const MAIN_TAGS = ['Environment Main Calls'];
const ACTION_TAGS = ['Environment Actions'];
const HISTORY_TAGS = ['Environment Deployment History'];

const QUEUED_NOTE = 'The cluster\'s agent carries the action out; until it takes it, the environment stays QUEUED and its status message says so.';

/**
 * An environment's status, actions and deployment history (`/environment/{environmentId}/…`). Registered right after
 * the environments module's routes, in the order the API has always listed them.
 */
export function registerEnvironmentDeploymentRoutes(app: FastifyTypeBox, deployments: DeploymentsService): void {
  app.get(
    '/environment/:environmentId/status',
    {
      schema: { operationId: 'getEnvironmentStatus', tags: MAIN_TAGS, params: EnvironmentParams, response: { 200: EnvironmentStatus, ...authenticatedErrors() } },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => deployments.getEnvironmentStatus(request.params.environmentId),
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
      reply.code(HTTP_STATUS.accepted).send(await deployments.deployEnvironment(requirePrincipal(request), request.params.environmentId)),
  );

  // Redeploy and stop answer the environment's status; deploy and rebootServices the reference's Status.
  const statusActions = [
    { path: 'redeploy', operationId: 'redeployEnvironment', what: 'Queues a redeploy of a deployed environment.', errors: ['conflict', 'payment_required'], run: deployments.redeployEnvironment },
    { path: 'stop', operationId: 'stopEnvironment', what: 'Queues a stop of a deployed environment.', errors: ['conflict'], run: deployments.stopEnvironment },
  ] as const;
  for (const action of statusActions) {
    app.post(
      `/environment/:environmentId/${action.path}`,
      {
        schema: {
          operationId: action.operationId,
          description: `${action.what} ${QUEUED_NOTE}`,
          tags: ACTION_TAGS,
          params: EnvironmentParams,
          response: { 202: EnvironmentStatus, ...authenticatedErrors(...action.errors) },
        },
        config: { access: { permission: 'environments:deploy', target: 'environment' } },
      },
      async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await action.run(requirePrincipal(request), request.params.environmentId)),
    );
  }

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
      reply.code(HTTP_STATUS.accepted).send(await deployments.rebootServices(requirePrincipal(request), request.params.environmentId, request.body)),
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
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await deployments.cancelEnvironmentDeployment(request.params.environmentId)),
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
    async (request) => deployments.listEnvironmentDeploymentHistory(request.params.environmentId, request.query),
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
    async (request) => deployments.listEnvironmentDeploymentHistoryV2(request.params.environmentId, request.query),
  );
}
