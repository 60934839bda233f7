import type { FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { liveStreamsEndedOnClose } from '../../http/live-stream.ts';
import { requesterOf } from '../../http/route-access.ts';
import { badRequest } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceKindDefinition } from '../services/services.kinds.ts';
import { serviceParams } from '../services/services.schemas.ts';
import { FOLLOW_MEDIA_TYPES, lastEventIdOf, LOG_MEDIA_TYPES, resumeAfter, STREAM_FORMATS, streamLog, textLine } from './deployments.log-stream.ts';
import type { DeploymentsService } from './deployments.service.ts';
import {
  DeploymentHistoryPaginatedResponseList,
  DeploymentHistoryQuery,
  DeploymentHistoryV2Query,
  DeploymentHistoryServicePaginatedResponseListV2,
  DeploymentParams,
  DeployServiceRequest,
  LogResponseList,
  MAX_HISTORY_PAGE_SIZE,
  ServiceDeployment,
  ServiceLogQuery,
  ServiceStatus,
} from './deployments.schemas.ts';

const QUEUED_NOTE = 'The cluster\'s agent carries the action out; until it takes it, the service stays QUEUED and its status message says so.';

/** Why an action on a service is refused, in words: the state machine's 409s and, for what starts a workload, the billing gate's 402. */
function actionRefusals(action: 'deploy' | 'redeploy' | 'stop' | 'restart'): string {
  const state =
    action === 'deploy'
      ? "409 when the service's state does not allow it (an action is under way) or changed meanwhile"
      : "409 when the service was never deployed, its state does not allow it (an action is under way) or changed meanwhile";
  return action === 'stop' ? `${state}.` : `${state}; 402 while the organization's billing is not valid.`;
}

function historyRefusals(cursorField: 'startId' | 'cursor'): string {
  return `400 for a pageSize outside 1 to ${MAX_HISTORY_PAGE_SIZE}, or a ${cursorField} that names no deployment of this service.`;
}

function serviceIdOf(request: FastifyRequest, definition: ServiceKindDefinition): string {
  return (request.params as Record<string, string>)[definition.idParam] as string;
}

/** One kind's actions, status, history and logs, on its item path (`/application/{applicationId}/deploy`, …). */
function registerKindDeploymentRoutes(app: FastifyTypeBox, deployments: DeploymentsService, definition: ServiceKindDefinition, liveStreams: Set<AbortController>): void {
  const kind: ServiceKind = definition.kind;
  const noun = definition.operationNoun;
  const { aService, theService } = definition.prose;
  const itemUrl = `/${definition.item}/:${definition.idParam}`;
  const params = serviceParams(definition);
  const actionTags = [`${noun} Actions`];
  const historyTags = [`${noun} Deployment History`];
  const mainTags = [`${noun} Main Calls`];
  const logTags = [`${noun} Logs`];
  const deploy = { permission: 'services:deploy', target: 'service' } as const;
  const read = { permission: 'services:read', target: 'service' } as const;

  app.post(
    `${itemUrl}/deploy`,
    {
      schema: {
        operationId: `deploy${noun}`,
        summary: `Deploy ${aService}`,
        description:
          `Queues a deploy of ${theService} with its settings and variables as they are now (the deployment keeps that snapshot); git_commit_id ` +
          `(a full 40-digit id) and image_tag choose what to deploy where the kind has them. ${QUEUED_NOTE} 400 for a git_commit_id on a kind ` +
          `not built from git or abbreviated, or an image_tag on a kind without an image of its own; ${actionRefusals('deploy')}`,
        tags: actionTags,
        params,
        body: DeployServiceRequest,
        response: { 202: ServiceStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: deploy },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await deployments.deployService(requesterOf(request), kind, serviceIdOf(request, definition), request.body ?? {})),
  );

  const simpleActions = [
    {
      path: 'redeploy',
      action: 'redeploy',
      operationId: `redeploy${noun}`,
      summary: `Redeploy ${aService}`,
      run: deployments.redeployService,
      what: 'Queues a redeploy: what ran (its commit and tag), with the settings and variables as they are now.',
    },
    { path: 'stop', action: 'stop', operationId: `stop${noun}`, summary: `Stop ${aService}`, run: deployments.stopService, what: 'Queues a stop of what runs.' },
    {
      path: 'restart-service',
      action: 'restart',
      operationId: `reboot${noun}`,
      summary: `Restart ${aService}`,
      run: deployments.restartService,
      what: 'Queues a restart of what runs, with its deployed snapshot (a redeploy applies new configuration).',
    },
  ] as const;
  for (const action of simpleActions) {
    app.post(
      `${itemUrl}/${action.path}`,
      {
        schema: {
          operationId: action.operationId,
          summary: action.summary,
          description: `${action.what} ${QUEUED_NOTE} ${actionRefusals(action.action)}`,
          tags: actionTags,
          params,
          response: { 202: ServiceStatus, ...authenticatedErrors('conflict', 'payment_required') },
        },
        config: { access: deploy },
      },
      async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await action.run(requesterOf(request), kind, serviceIdOf(request, definition))),
    );
  }

  app.post(
    `${itemUrl}/cancelDeployment`,
    {
      schema: {
        operationId: `cancel${noun}Deployment`,
        summary: `Cancel the deployment of ${aService}`,
        description:
          "Cancels the action under way: a queued one at once (its job is withdrawn), a running deploy at the agent's next step (CANCELING). " +
          '409 when no cancellable action is under way, or when its state changed meanwhile.',
        tags: actionTags,
        params,
        response: { 202: ServiceStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: deploy },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await deployments.cancelServiceDeployment(kind, serviceIdOf(request, definition))),
  );

  app.get(
    `${itemUrl}/status`,
    {
      schema: {
        operationId: `get${noun}Status`,
        summary: `Get the status of ${aService}`,
        description:
          `The deployment state of ${theService} and its status message; OUT_OF_DATE when its settings or resolved variables differ from what ` +
          'the running deployment carries.',
        tags: mainTags,
        params,
        response: { 200: ServiceStatus, ...authenticatedErrors() },
      },
      config: { access: read },
    },
    async (request) => deployments.getServiceStatus(kind, serviceIdOf(request, definition)),
  );

  app.get(
    `${itemUrl}/deploymentHistory`,
    {
      schema: {
        operationId: `list${noun}DeploymentHistory`,
        summary: `List the deployments of ${aService}`,
        description: `The past deployments of ${theService}, newest first, pageSize entries (default 20) older than startId. ${historyRefusals('startId')}`,
        tags: historyTags,
        params,
        querystring: DeploymentHistoryQuery,
        response: { 200: DeploymentHistoryPaginatedResponseList, ...authenticatedErrors() },
      },
      config: { access: read },
    },
    async (request) => deployments.listServiceDeploymentHistory(kind, serviceIdOf(request, definition), request.query),
  );

  app.get(
    `${itemUrl}/deploymentHistoryV2`,
    {
      schema: {
        operationId: `list${noun}DeploymentHistoryV2`,
        summary: `List the deployments of ${aService}, by cursor`,
        description:
          `The past deployments of ${theService}, newest first, pageSize entries (default 20) older than cursor; next_cursor is the cursor of ` +
          `the next page. ${historyRefusals('cursor')}`,
        tags: historyTags,
        params,
        querystring: DeploymentHistoryV2Query,
        response: { 200: DeploymentHistoryServicePaginatedResponseListV2, ...authenticatedErrors() },
      },
      config: { access: read },
    },
    async (request) => deployments.listServiceDeploymentHistoryV2(kind, serviceIdOf(request, definition), request.query),
  );

  app.get(
    `${itemUrl}/deploymentHistory/:deploymentId`,
    {
      schema: {
        operationId: `get${noun}Deployment`,
        summary: `Get one deployment of ${aService}`,
        description:
          'One deployment with what it carries: the settings as deployed and the variable snapshot (secrets and hidden built-ins only as ' +
          `sealed: true). 404 for a deployment that is not one of ${theService}'s.`,
        tags: historyTags,
        params: DeploymentParams(definition.idParam),
        response: { 200: ServiceDeployment, ...authenticatedErrors() },
      },
      config: { access: read },
    },
    async (request) =>
      deployments.getServiceDeployment(kind, serviceIdOf(request, definition), (request.params as { deploymentId: string }).deploymentId),
  );

  app.get(
    `${itemUrl}/log`,
    {
      schema: {
        operationId: `list${noun}Log`,
        summary: `Read the log of ${aService}`,
        description:
          "The log of the newest deployment (or of deploymentId), as JSON or (Accept: text/plain) text lines. With Accept: text/event-stream (SSE) or application/x-ndjson the answer is a live stream that follows the deployment until it settles. With follow=true it is a live stream (SSE, NDJSON or plain text) of the service's output that does not end: the running deployment's lines, then each new deployment's, until the reader leaves. since, tail, instance and stream filter the lines. " +
          '400 for follow=true without a streaming Accept, or with deploymentId or after (a followed log resumes with cursor or Last-Event-ID), and for a cursor that names a deployment of another service.',
        tags: logTags,
        params,
        querystring: ServiceLogQuery,
        produces: LOG_MEDIA_TYPES,
        response: {
          200: {
            description: 'The stored lines, or a live stream of them',
            content: {
              'application/json': { schema: LogResponseList },
              'text/plain': { schema: { type: 'string' } },
              'text/event-stream': { schema: { type: 'string' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          ...authenticatedErrors(),
        },
      },
      config: { access: { permission: 'service-logs:read', target: 'service' } },
    },
    async (request, reply) => {
      const serviceId = serviceIdOf(request, definition);
      const { query } = request;
      const negotiator = new Negotiator(request);
      if (query.follow === true) {
        const format = STREAM_FORMATS[negotiator.mediaType(FOLLOW_MEDIA_TYPES) ?? ''];
        if (format === undefined) throw badRequest('a followed log is a stream', [{ field: '/follow', message: 'needs Accept: text/event-stream, application/x-ndjson or text/plain' }]);
        const resumed = { ...query, cursor: query.cursor ?? lastEventIdOf(request) };
        await streamLog(request, reply, format, liveStreams, (reader) => deployments.followServiceLog(kind, serviceId, resumed, reader));
        return reply;
      }
      const chosen = negotiator.mediaType(LOG_MEDIA_TYPES);
      if (chosen === 'text/event-stream' || chosen === 'application/x-ndjson') {
        const resumed = { ...query, after: resumeAfter(request, query.after) };
        await streamLog(request, reply, STREAM_FORMATS[chosen] ?? 'ndjson', liveStreams, (reader) => deployments.followServiceLog(kind, serviceId, resumed, reader));
        return reply;
      }
      const body = await deployments.listServiceLog(kind, serviceId, query);
      if (chosen === 'text/plain') return reply.header('vary', 'Accept').type('text/plain; charset=utf-8').send(body.results.map(textLine).join(''));
      return reply.header('vary', 'Accept').type('application/json').send(body);
    },
  );
}

/** Every kind's deployment routes (SERVICE_KIND_DEFINITIONS). */
export function registerServiceDeploymentRoutes(app: FastifyTypeBox, deployments: DeploymentsService, definitions: readonly ServiceKindDefinition[]): void {
  // A followed log never ends by itself: the server's shutdown ends the live streams, or it would wait for them.
  const liveStreams = liveStreamsEndedOnClose(app);
  for (const definition of definitions) registerKindDeploymentRoutes(app, deployments, definition, liveStreams);
}
