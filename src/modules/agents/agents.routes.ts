import { authenticatedClusterId, clusterCredentialHook } from '../../http/authenticate.ts';
import { authenticatedErrors, errorResponses } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OPERATOR_SECURITY } from '../../http/openapi.ts';
import { notFound } from '../../lib/errors.ts';
import { ClusterParams } from '../clusters/clusters.schemas.ts';
import {
  AgentCertificateReport,
  AgentCertificateReportAnswer,
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
        summary: 'Lease the next tasks',
        description:
          'Long-poll: leases the oldest tasks of the cluster (deploy, stop, delete, ...), waiting up to wait_seconds for ' +
          'one when there is none; each comes with a lease_id to send back with every report. 400 for an invalid query; ' +
          "401 without the cluster's agent credential.",
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
        summary: "Get a task's state",
        description:
          'Where a task of the cluster stands: its status (PENDING, LEASED, DONE), its outcome, and where its environment ' +
          "or service stands (CANCELING asks the agent to stop). 401 without the cluster's agent credential; 404 for a " +
          'task of another cluster or none.',
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
        summary: "Get a task's deployment spec",
        description:
          'The deployment to carry out, with its variables (secrets opened), for the holder of the live lease only. 401 ' +
          "without the cluster's agent credential; 404 for an unknown task, or one whose kind has no spec; 409 when the " +
          'task ended or lease_id is no longer its lease.',
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
        summary: "Report a task's progress",
        description:
          'Reports one phase (take, built, succeed, fail, cancel_done) under the lease; seq numbers reports from 1, and a ' +
          "retried report is a no-op. 400 for a report that skips ahead; 401 without the cluster's agent credential; 404 " +
          'for an unknown task; 409 when the task ended or the lease was lost (lease it again).',
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
        summary: "Send a task's log lines",
        description:
          "Appends log lines of a deployment under way (build and deploy output) to its deployment's log, which users " +
          "read with the service's log operations. 400 for a task kind that keeps no logs; 401 without the cluster's " +
          'agent credential; 404 for an unknown task; 409 when the lease was lost.',
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
        summary: "Send a workload's log lines",
        description:
          "Output of a deployed workload of the cluster (its processes, a cron job's runs), kept with the service's " +
          "running deployment. 400 for an invalid batch; 401 without the cluster's agent credential; 404 for a service " +
          'not on this cluster.',
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
        summary: "Report a workload's health",
        description:
          'How a deployed workload of the cluster runs: RUNNING, RESTARTING after a crash, or FAILED; shown in the ' +
          "service's status. 400 for an invalid report; 401 without the cluster's agent credential; 404 for a service not " +
          'on this cluster.',
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
    '/operator/v1/certificates',
    {
      schema: {
        operationId: 'reportAgentCertificates',
        summary: "Report the cluster's certificates",
        description:
          "Where the certificates a cluster obtains itself stand (a Kubernetes agent with a cert-manager issuer): PENDING, " +
          "ISSUED with when it expires, or ERROR with cert-manager's message, per hostname; `gone` lists hostnames the " +
          "cluster no longer certifies. The custom domains of the cluster's services show them as their certificate. " +
          "Hostnames that are no service's of this cluster are ignored and counted. 400 for an invalid report; 401 " +
          "without the cluster's agent credential.",
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        body: AgentCertificateReport,
        response: { 200: AgentCertificateReportAnswer, ...AGENT_ERRORS },
      },
      config: { access: { public: true } },
      onRequest,
    },
    async (request) => agents.recordCertificates(authenticatedClusterId(request), request.body),
  );

  app.post(
    '/operator/v1/routes',
    {
      schema: {
        operationId: 'resolveAgentRoutes',
        summary: 'Resolve routed hostnames',
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
        summary: 'Send a heartbeat',
        description:
          "Tells Slipway the agent is alive, with its version, its driver and what it sees of the cluster; the cluster's " +
          "agent status reads connected while heartbeats keep coming. 400 for an invalid body; 401 without the cluster's " +
          'agent credential.',
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
        summary: "Get a cluster agent's status",
        description:
          "Whether the cluster's agent is connected and heartbeating, and how much work waits for it. 404 when there is " +
          'no such cluster in the organization.',
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
