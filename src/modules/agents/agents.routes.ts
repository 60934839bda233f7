import { authenticatedClusterId, clusterCredentialHook } from '../../http/authenticate.ts';
import { authenticatedErrors, errorResponses } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OPERATOR_SECURITY } from '../../http/openapi.ts';
import { notFound } from '../../lib/errors.ts';
import { ClusterParams } from '../clusters/clusters.schemas.ts';
import {
  AgentHeartbeat,
  AgentHeartbeatAnswer,
  AgentLogAnswer,
  AgentLogBatch,
  AgentProgressAnswer,
  AgentProgressReport,
  AgentRoutes,
  AgentTaskLease,
  AgentTaskSpec,
  AgentTaskState,
  AgentWorkloadHealth,
  AgentWorkloadHealthAnswer,
  AgentWorkloadLogBatch,
} from '../../protocol/agent-protocol.ts';
import { AgentRoutesQuery, AgentTaskParams, AgentTaskSpecQuery, AgentWorkloadParams, ClusterAgentStatus, LeaseAgentTasksQuery } from './agents.schemas.ts';
import type { AgentsService } from './agents.service.ts';

export interface AgentRoutesDeps {
  agents: AgentsService;
  /** The cluster an operator/agent credential acts for (401 otherwise): the clusters module's authenticateOperator. */
  authenticateAgent(credential: string): Promise<{ clusterId: string }>;
  /** Whether the organization has the cluster (404 otherwise). */
  clusterExists(organizationId: string, clusterId: string): Promise<boolean>;
}

const AGENT_TAGS = ['Cluster Agent'];
const AGENT_ERRORS = errorResponses('bad_request', 'unauthenticated', 'not_found', 'conflict');

/**
 * The agent's side of the protocol: authenticated by the cluster's operator credential (docs/agent-protocol.md), in
 * each route's onRequest hook — before its body, path or query is read, so a caller without the credential gets 401
 * and nothing about what the route expects.
 */
export function registerAgentRoutes(app: FastifyTypeBox, deps: AgentRoutesDeps): void {
  const { agents } = deps;
  const onRequest = clusterCredentialHook(deps.authenticateAgent, 'an agent credential');

  app.get(
    '/operator/v1/tasks',
    {
      schema: {
        operationId: 'leaseAgentTasks',
        description: 'Long-poll: leases the oldest tasks of the cluster, waiting up to wait_seconds for one when there is none.',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        querystring: LeaseAgentTasksQuery,
        response: { 200: AgentTaskLease, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => {
      const clusterId = authenticatedClusterId(request);
      // A poller that hangs up stops waiting (and leases nothing it could not receive).
      const gone = new AbortController();
      request.raw.once('close', () => gone.abort());
      return agents.leaseTasks(clusterId, {
        max: request.query.max ?? 5,
        waitMs: (request.query.wait_seconds ?? 25) * 1000,
        signal: gone.signal,
      });
    },
  );

  app.get(
    '/operator/v1/tasks/:taskId',
    {
      schema: {
        operationId: 'getAgentTask',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentTaskParams,
        response: { 200: AgentTaskState, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.getTask(authenticatedClusterId(request), request.params.taskId),
  );

  app.get(
    '/operator/v1/tasks/:taskId/spec',
    {
      schema: {
        operationId: 'getAgentTaskSpec',
        description: 'The deployment to carry out, with its variables (secrets opened) — for the holder of the live lease only.',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentTaskParams,
        querystring: AgentTaskSpecQuery,
        response: { 200: AgentTaskSpec, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.getTaskSpec(authenticatedClusterId(request), request.params.taskId, request.query.lease_id),
  );

  app.post(
    '/operator/v1/tasks/:taskId/progress',
    {
      schema: {
        operationId: 'reportAgentTaskProgress',
        description: 'Reports one phase (take, built, succeed, fail, cancel_done) under the lease; seq numbers reports from 1, retries are no-ops.',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentTaskParams,
        body: AgentProgressReport,
        response: { 200: AgentProgressAnswer, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.reportProgress(authenticatedClusterId(request), request.params.taskId, request.body),
  );

  app.post(
    '/operator/v1/tasks/:taskId/logs',
    {
      schema: {
        operationId: 'appendAgentTaskLogs',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentTaskParams,
        body: AgentLogBatch,
        response: { 200: AgentLogAnswer, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.appendLogs(authenticatedClusterId(request), request.params.taskId, request.body),
  );

  app.post(
    '/operator/v1/workloads/:serviceId/logs',
    {
      schema: {
        operationId: 'appendAgentWorkloadLogs',
        description: "Output of a deployed workload of the cluster (its processes, a cron job's runs), kept with the service's running deployment.",
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentWorkloadParams,
        body: AgentWorkloadLogBatch,
        response: { 200: AgentLogAnswer, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.appendWorkloadLogs(authenticatedClusterId(request), request.params.serviceId, request.body.lines),
  );

  app.post(
    '/operator/v1/workloads/:serviceId/health',
    {
      schema: {
        operationId: 'reportAgentWorkloadHealth',
        description: "How a deployed workload of the cluster runs: RUNNING, RESTARTING after a crash, or FAILED; shown in the service's status.",
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        params: AgentWorkloadParams,
        body: AgentWorkloadHealth,
        response: { 200: AgentWorkloadHealthAnswer, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.recordWorkloadHealth(authenticatedClusterId(request), request.params.serviceId, request.body),
  );

  app.post(
    '/operator/v1/routes',
    {
      schema: {
        operationId: 'resolveAgentRoutes',
        description:
          "The hostnames the cluster's routed services are reached by now: the service's own and its verified custom domains (a read, as POST for the list of ids).",
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        body: AgentRoutesQuery,
        response: { 200: AgentRoutes, ...errorResponses('bad_request', 'unauthenticated') },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.resolveRoutes(authenticatedClusterId(request), request.body.service_ids),
  );

  app.post(
    '/operator/v1/heartbeat',
    {
      schema: {
        operationId: 'recordAgentHeartbeat',
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        body: AgentHeartbeat,
        response: { 200: AgentHeartbeatAnswer, ...errorResponses('bad_request', 'unauthenticated') },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.recordHeartbeat(authenticatedClusterId(request), request.body),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/agent',
    {
      schema: {
        operationId: 'getClusterAgentStatus',
        description: "Whether the cluster's agent is connected and heartbeating, and how much work waits for it.",
        tags: ['Clusters'],
        params: ClusterParams,
        response: { 200: ClusterAgentStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => {
      const { organizationId, clusterId } = request.params;
      if (!(await deps.clusterExists(organizationId, clusterId))) throw notFound(`cluster ${clusterId} not found`);
      return agents.agentStatus(clusterId);
    },
  );
}
