import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requesterOf } from '../../http/route-access.ts';
import { EnvironmentParams } from '../environments/environments.schemas.ts';
import {
  DeploymentHistoryEnvironmentPaginatedResponseList,
  DeploymentHistoryEnvironmentPaginatedResponseListV2,
  DeploymentHistoryQuery,
  DeploymentHistoryV2Query,
  EnvironmentActionStatus,
  EnvironmentStatus,
  MAX_HISTORY_PAGE_SIZE,
  RebootServicesRequest,
} from './deployments.schemas.ts';
import type { DeploymentsService } from './deployments.service.ts';

const MAIN_TAGS = ['Environment Main Calls'];
const ACTION_TAGS = ['Environment Actions'];
const HISTORY_TAGS = ['Environment Deployment History'];

const QUEUED_NOTE = 'The cluster\'s agent carries the action out; until it takes it, the environment stays QUEUED and its status message says so.';

/** Why an environment action is refused, in words: the state machine's and the cluster's 409s, the billing gate's 402. */
function actionRefusals(action: 'deploy' | 'redeploy' | 'stop' | 'restart'): string {
  const state =
    action === 'deploy'
      ? "409 when the environment's state does not allow it (an action is under way), changed meanwhile"
      : "409 when the environment was never deployed, its state does not allow it (an action is under way), changed meanwhile";
  const conflict = `${state}, or its cluster no longer exists`;
  return action === 'stop' ? `${conflict}.` : `${conflict}; 402 while the organization's billing is not valid.`;
}

function historyRefusals(cursorField: 'startId' | 'cursor'): string {
  return `400 for a pageSize outside 1 to ${MAX_HISTORY_PAGE_SIZE}, or a ${cursorField} that names no deployment of this environment.`;
}

/**
 * An environment's status, actions and deployment history (`/environment/{environmentId}/…`). Registered right after
 * the environments module's routes, in the order the API has always listed them.
 */
export function registerEnvironmentDeploymentRoutes(app: FastifyTypeBox, deployments: DeploymentsService): void {
  app.get(
    '/environment/:environmentId/status',
    {
      schema: {
        operationId: 'getEnvironmentStatus',
        summary: 'Get the status of an environment',
        description:
          "The environment's deployment state and status message (QUEUED, DEPLOYING, DEPLOYED, STOPPED, …); OUT_OF_DATE once its mode or " +
          'the variables its services see changed since it was deployed. Its services each have their own status (getEnvironmentStatuses).',
        tags: MAIN_TAGS,
        params: EnvironmentParams,
        response: { 200: EnvironmentStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => deployments.getEnvironmentStatus(request.params.environmentId),
  );

  app.post(
    '/environment/:environmentId/deploy',
    {
      schema: {
        operationId: 'deployEnvironment',
        summary: 'Deploy an environment',
        description: `Queues a deploy of the environment, which the job fans out into a deployment of each of its services (stage by stage). ${QUEUED_NOTE} ${actionRefusals('deploy')}`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentActionStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await deployments.deployEnvironment(requesterOf(request), request.params.environmentId)),
  );

  // Redeploy and stop answer the environment's status; deploy and rebootServices the reference's Status.
  const statusActions = [
    {
      path: 'redeploy',
      action: 'redeploy',
      operationId: 'redeployEnvironment',
      summary: 'Redeploy an environment',
      what: "Queues a redeploy of a deployed environment: each of its services redeploys what ran with today's settings and variables.",
      errors: ['conflict', 'payment_required'],
      run: deployments.redeployEnvironment,
    },
    {
      path: 'stop',
      action: 'stop',
      operationId: 'stopEnvironment',
      summary: 'Stop an environment',
      what: 'Queues a stop of a deployed environment and of its services; nothing is deleted.',
      errors: ['conflict'],
      run: deployments.stopEnvironment,
    },
  ] as const;
  for (const action of statusActions) {
    app.post(
      `/environment/:environmentId/${action.path}`,
      {
        schema: {
          operationId: action.operationId,
          summary: action.summary,
          description: `${action.what} ${QUEUED_NOTE} ${actionRefusals(action.action)}`,
          tags: ACTION_TAGS,
          params: EnvironmentParams,
          response: { 202: EnvironmentStatus, ...authenticatedErrors(...action.errors) },
        },
        config: { access: { permission: 'environments:deploy', target: 'environment' } },
      },
      async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await action.run(requesterOf(request), request.params.environmentId)),
    );
  }

  app.post(
    '/environment/:environmentId/service/restart-service',
    {
      schema: {
        operationId: 'rebootServices',
        summary: "Restart an environment's services",
        description:
          "Queues a restart of a deployed environment's services: those the body names (application_ids, database_ids, container_ids), or " +
          `every deployed one when no id is given. ${QUEUED_NOTE} 400 naming each id that is not a service of that kind in this environment. ` +
          'The services named are all checked before anything is queued: one 409 names each whose state refuses a restart (never deployed, ' +
          'stopped, or an action queued or under way) — its kind, name, id and state, in the message and in details at the body field that ' +
          'named it — and nothing is queued. Without ids, and for a service whose state changes before the job carries the restart out, the ' +
          `job skips a service whose state refuses it and logs why. ${actionRefusals('restart')}`,
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
      reply.code(HTTP_STATUS.accepted).send(await deployments.rebootServices(requesterOf(request), request.params.environmentId, request.body)),
  );

  app.post(
    '/environment/:environmentId/cancelDeployment',
    {
      schema: {
        operationId: 'cancelEnvironmentDeployment',
        summary: "Cancel an environment's deployment",
        description:
          "Cancels the queued action at once, or a deploy under way at the agent's next step. In the same transaction it cancels the services' " +
          'deployments the action was fanned out into that have not ended, each as its own cancel does: a queued one at once (its job ' +
          "withdrawn), one the agent carries out at its next step (CANCELING); a service whose newest action is another, or whose stop or restart " +
          'is under way, is left as it is. A fan-out that comes after the cancel asks no service anything. 409 when no cancellable action is ' +
          'under way, or when its state changed meanwhile.',
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
        summary: 'List the deployments of an environment',
        description:
          "The environment's past actions, newest first, pageSize entries (default 20) older than startId; next_cursor is the startId of the " +
          `next page. ${historyRefusals('startId')}`,
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
        summary: 'List the deployments of an environment, by cursor',
        description:
          "The environment's past actions, newest first, pageSize entries (default 20) older than cursor; next_cursor is the cursor of the " +
          `next page. ${historyRefusals('cursor')}`,
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
