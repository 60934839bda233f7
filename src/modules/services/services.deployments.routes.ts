import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { DeploymentHistoryQuery, DeploymentHistoryV2Query } from '../environments/environments.schemas.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceKindDefinition } from './services.kinds.ts';
import { serviceParams } from './services.schemas.ts';
import type { ServiceDeploymentsService } from './services.deployments.service.ts';
import {
  DeploymentHistoryPaginatedResponseList,
  DeploymentHistoryServicePaginatedResponseListV2,
  DeploymentParams,
  DeployServiceRequest,
  LogResponseList,
  ServiceDeployment,
  ServiceLogQuery,
  ServiceStatus,
} from './services.deployments.schemas.ts';

const QUEUED_NOTE = 'The cluster\'s agent carries the action out; until it takes it, the service stays QUEUED and its status message says so.';

/** What a log read may answer: stored lines as JSON, or a live stream that follows the deployment until it settles. */
const LOG_MEDIA_TYPES = ['application/json', 'text/event-stream', 'application/x-ndjson'];

function serviceIdOf(request: FastifyRequest, definition: ServiceKindDefinition): string {
  return (request.params as Record<string, string>)[definition.idParam] as string;
}

/** The sequence number a stream resumes after: `after`, else an EventSource's Last-Event-ID (the last seq it saw). */
function resumeAfter(request: FastifyRequest, after: number | undefined): number | undefined {
  if (after !== undefined) return after;
  const header = request.headers['last-event-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/**
 * Streams a deployment's log on the raw response: SSE (`id:` is the line's seq, `event: log`, a final `event: end`
 * with the state reached) or NDJSON (one `{type:"log",…}` object per line, a final `{type:"end",…}`). The stream
 * ends when the deployment settles, or when the reader leaves.
 */
async function streamLog(
  request: FastifyRequest,
  reply: FastifyReply,
  format: 'sse' | 'ndjson',
  follow: (reader: Parameters<ServiceDeploymentsService['followServiceLog']>[3]) => ReturnType<ServiceDeploymentsService['followServiceLog']>,
): Promise<void> {
  const raw = reply.raw;
  let closed = false;
  raw.on('close', () => {
    closed = true;
  });
  const write = async (text: string): Promise<void> => {
    if (closed) return;
    if (!raw.write(text)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  const started = { value: false };
  const start = () => {
    if (started.value) return;
    started.value = true;
    reply.hijack();
    raw.writeHead(HTTP_STATUS.ok, {
      'content-type': format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      'x-request-id': request.id,
      'x-content-type-options': 'nosniff',
      vary: 'Accept',
    });
  };
  // The first read happens before anything is written, so a 404 still answers with the error body; a failure once
  // the stream has started can only cut it (the reader sees no end event and may resume with Last-Event-ID).
  let outcome: Awaited<ReturnType<typeof follow>>;
  try {
    outcome = await follow({
      closed: () => closed,
      async emit(lines) {
        start();
        for (const line of lines) {
          await write(format === 'sse' ? `id: ${line.seq}\nevent: log\ndata: ${JSON.stringify(line)}\n\n` : `${JSON.stringify({ type: 'log', ...line })}\n`);
        }
      },
      async heartbeat() {
        start();
        await write(format === 'sse' ? ': keep-alive\n\n' : `${JSON.stringify({ type: 'heartbeat' })}\n`);
      },
    });
  } catch (error) {
    if (!started.value) throw error;
    request.log.error({ err: error }, 'log stream cut');
    raw.destroy();
    return;
  }
  start();
  const end = { deployment_id: outcome.deploymentId, state: outcome.state };
  await write(format === 'sse' ? `event: end\ndata: ${JSON.stringify(end)}\n\n` : `${JSON.stringify({ type: 'end', ...end })}\n`);
  raw.end();
}

/** One kind's actions, status, history and logs, on its item path (`/application/{applicationId}/deploy`, …). */
function registerKindDeploymentRoutes(app: FastifyTypeBox, deployments: ServiceDeploymentsService, definition: ServiceKindDefinition): void {
  const kind: ServiceKind = definition.kind;
  const noun = definition.operationNoun;
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
        description: `Queues a deploy with the service's settings and variables as they are now (the deployment keeps that snapshot). ${QUEUED_NOTE}`,
        tags: actionTags,
        params,
        body: DeployServiceRequest,
        response: { 202: ServiceStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: deploy },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await deployments.deployService(requirePrincipal(request), kind, serviceIdOf(request, definition), request.body ?? {})),
  );

  const simpleActions = [
    { path: 'redeploy', operationId: `redeploy${noun}`, run: deployments.redeployService, what: 'Queues a redeploy: what ran (its commit and tag), with the settings and variables as they are now.' },
    { path: 'stop', operationId: `stop${noun}`, run: deployments.stopService, what: 'Queues a stop of what runs.' },
    { path: 'restart-service', operationId: `reboot${noun}`, run: deployments.restartService, what: 'Queues a restart of what runs, with its deployed snapshot (a redeploy applies new configuration).' },
  ] as const;
  for (const action of simpleActions) {
    app.post(
      `${itemUrl}/${action.path}`,
      {
        schema: {
          operationId: action.operationId,
          description: `${action.what} ${QUEUED_NOTE}`,
          tags: actionTags,
          params,
          response: { 202: ServiceStatus, ...authenticatedErrors('conflict', 'payment_required') },
        },
        config: { access: deploy },
      },
      async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await action.run(requirePrincipal(request), kind, serviceIdOf(request, definition))),
    );
  }

  app.post(
    `${itemUrl}/cancelDeployment`,
    {
      schema: {
        operationId: `cancel${noun}Deployment`,
        description: 'Cancels the action under way: a queued one at once (its job is withdrawn), a running deploy at the agent\'s next step (CANCELING).',
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
        description: 'OUT_OF_DATE when the settings or the resolved variables differ from what the running deployment carries.',
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
        description: 'One deployment with what it carries: the settings as deployed and the variable snapshot (secrets and hidden built-ins only as sealed: true).',
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
        description:
          'The log of the newest deployment (or of deploymentId). With Accept: text/event-stream (SSE) or application/x-ndjson the answer is a live stream that follows the deployment until it settles.',
        tags: logTags,
        params,
        querystring: ServiceLogQuery,
        produces: LOG_MEDIA_TYPES,
        response: {
          200: {
            description: 'The stored lines, or a live stream of them',
            content: {
              'application/json': { schema: LogResponseList },
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
      const chosen = new Negotiator(request).mediaType(LOG_MEDIA_TYPES);
      if (chosen === 'text/event-stream' || chosen === 'application/x-ndjson') {
        const query = { ...request.query, after: resumeAfter(request, request.query.after) };
        await streamLog(request, reply, chosen === 'text/event-stream' ? 'sse' : 'ndjson', (reader) => deployments.followServiceLog(kind, serviceId, query, reader));
        return reply;
      }
      return reply.header('vary', 'Accept').type('application/json').send(await deployments.listServiceLog(kind, serviceId, request.query));
    },
  );
}

/** Every kind's deployment routes (SERVICE_KIND_DEFINITIONS). */
export function registerServiceDeploymentRoutes(app: FastifyTypeBox, deployments: ServiceDeploymentsService, definitions: readonly ServiceKindDefinition[]): void {
  for (const definition of definitions) registerKindDeploymentRoutes(app, deployments, definition);
}
