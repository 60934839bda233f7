import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import { EnvironmentParams } from '../environments/environments.schemas.ts';
import type { EnvironmentLogs } from './deployments.environment-logs.ts';
import type { DeploymentQueue } from './deployments.queue.ts';
import {
  DeploymentRequestParams,
  DeploymentStatusQuery,
  EnvDeploymentStatus,
  EnvironmentLogResponseList,
  EnvironmentLogsQuery,
  EnvironmentLogsResponseList,
  QueuedDeploymentRequestForServiceList,
  QueuedDeploymentRequestWithStagesList,
  ServiceQueueParams,
} from './deployments.queue-schemas.ts';

/**
 * The deployment queue (`/environment/{id}/deploymentQueue`, `/service/{id}/deploymentQueue`, the cancel and the
 * status of one request) and an environment's logs (`/environment/{id}/logs`, `/environment/{id}/log`):
 * docs/deployment-queue.md.
 */
export function registerDeploymentQueueRoutes(app: FastifyTypeBox, queue: DeploymentQueue, logs: EnvironmentLogs): void {
  app.get(
    '/environment/:environmentId/deploymentQueue',
    {
      schema: {
        operationId: 'listDeploymentRequestByEnvironmentId',
        summary: "List an environment's deployment queue",
        description:
          "The environment's deployment requests that have not ended (queued for the cluster's agent, or under way), oldest first: its own actions, " +
          "with the services each carries its action into as stages (databases first) and how each service's own deployment goes once the action was " +
          'fanned out, and its services\' own deploys, stops and restarts. 404 when the environment is not one of the caller\'s organization.',
        tags: ['Environment Main Calls'],
        params: EnvironmentParams,
        response: { 200: QueuedDeploymentRequestWithStagesList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => queue.listEnvironmentQueue(request.params.environmentId),
  );

  app.get(
    '/service/:serviceId/deploymentQueue',
    {
      schema: {
        operationId: 'listDeploymentRequestByServiceId',
        summary: "List a service's deployment queue",
        description:
          "The service's deployment requests that have not ended, oldest first: its own, and its environment's actions that concern it and have not " +
          'been carried into its own deployment yet (`requested_for: ENVIRONMENT`). The service may be of any kind. 404 for a service of another organization.',
        tags: ['Environment Main Calls'],
        params: ServiceQueueParams,
        response: { 200: QueuedDeploymentRequestForServiceList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => queue.listServiceQueue(request.params.serviceId),
  );

  app.post(
    '/deploymentQueue/:deploymentRequestId/cancelDeployment',
    {
      schema: {
        operationId: 'cancelDeploymentRequest',
        summary: 'Cancel a deployment request',
        description:
          "Cancels a request of the queue through its environment's or service's cancel: a queued one at once (its job is withdrawn, it ends CANCELED), " +
          "one under way at the agent's next step (CANCELING). An environment's request takes the services' deployments it was fanned out into " +
          'that have not ended with it, in the same transaction, as cancelEnvironmentDeployment does. 409 when it has ended or is no longer ' +
          "its subject's newest action; 404 for a request of another organization.",
        tags: ['Deployment Queue Actions'],
        params: DeploymentRequestParams,
        response: { 202: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'deployment_request' } },
    },
    async (request, reply) => {
      await queue.cancelDeploymentRequest(request.params.deploymentRequestId);
      return reply.code(HTTP_STATUS.accepted).send(null);
    },
  );

  app.get(
    '/environment/deploymentStatus',
    {
      schema: {
        operationId: 'getDeploymentStatusByDeploymentRequestId',
        summary: 'Get the status of a deployment request',
        description:
          "The environment a deployment request belongs to and the state it reached (an environment's action, or a service's own: the state of that " +
          'request, not of whatever came after it). 400 without a uuid `deploymentRequestId`; 404 for a request of another organization.',
        tags: ['Environment Main Calls'],
        querystring: DeploymentStatusQuery,
        response: { 200: EnvDeploymentStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'deployment_request' } },
    },
    async (request) => queue.getDeploymentStatus(request.query.deploymentRequestId),
  );

  app.get(
    '/environment/:environmentId/logs',
    {
      schema: {
        operationId: 'listEnvironmentLogs',
        summary: "List an environment's deployment log lines",
        description:
          "The lines its services' deployments recorded (build, rollout, the workloads' output and Slipway's own), in the order they were printed, at " +
          "most the last 1000: of the deployment request `version` (an environment's action: the services' deployments it was carried into), or of each " +
          "service's newest deployment. 400 when `version` names no deployment request of this environment.",
        tags: ['Environment Logs'],
        params: EnvironmentParams,
        querystring: EnvironmentLogsQuery,
        response: { 200: EnvironmentLogsResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => logs.listEnvironmentLogs(request.params.environmentId, request.query.version),
  );

  app.get(
    '/environment/:environmentId/log',
    {
      schema: {
        operationId: 'listEnvironmentLog',
        summary: "List an environment's activity",
        description:
          "The environment's activity, newest first, at most 100 entries: each action of the environment or of one of its services (deploy, stop, " +
          'restart) with who asked, the state it reached and why it waits or failed.',
        tags: ['Environment Logs'],
        params: EnvironmentParams,
        response: { 200: EnvironmentLogResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => logs.listEnvironmentLog(request.params.environmentId),
  );
}
