import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authenticatedClusterId, clusterCredentialHook } from '../../http/authenticate.ts';
import { authenticatedErrors, errorResponses, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OPERATOR_SECURITY } from '../../http/openapi.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { AgentClusterEventReport, AgentClusterEventReportAnswer } from '../../protocol/agent-protocol.ts';
import { NoContent } from '../../protocol/wire.ts';
import { BareClusterParams, ClusterParams } from '../clusters/clusters.schemas.ts';
import { KUBECONFIG_MAX_BYTES } from './cluster-insight.kubeconfig.ts';
import {
  ClusterEnvironmentResponseList,
  ClusterEventsQuery,
  ClusterExecCredential,
  ClusterKubernetesEventList,
  ClusterLogsQuery,
  ClusterLogsResponse,
  ClusterLogsResponseList,
  ClusterMetricsQuery,
  ClusterMetricsResponse,
  ClusterOperatorFleetInventoryResponseList,
  ClusterOperatorStatusResponse,
  ClusterOperatorUpdateRequest,
  ClusterOperatorUpdateResponse,
  ClusterReadinessStatus,
  ClusterTokenQuery,
  KubeconfigQuery,
} from './cluster-insight.schemas.ts';
import type { ClusterInsightService } from './cluster-insight.service.ts';

export interface ClusterInsightRouteDeps {
  insight: ClusterInsightService;
  /** The cluster an operator/agent credential acts for (401 otherwise): the clusters module's authenticateOperator. */
  authenticateAgent(credential: string): Promise<{ clusterId: string }>;
}

const TAGS = ['Clusters'];
const OPERATOR_TAGS = ['Cluster Operator'];
const AGENT_TAGS = ['Cluster Agent'];
const YAML = 'application/x-yaml';
const yamlAnswer = (description: string) => ({ description, content: { [YAML]: { schema: Type.String() } } });

/**
 * The kubeconfig a PUT carried, taken off the request before the audit log reads its body: the log keeps a masked copy
 * of every write's body, and a kubeconfig in YAML text has no field names its masking could recognise.
 */
const uploadedKubeconfigs = new WeakMap<FastifyRequest, string>();
const NOT_RECORDED = '(a kubeconfig: not recorded)';

/** A cluster's kubeconfig, events, logs, metrics, environments, readiness and operator (docs/cluster-insight.md). */
export function registerClusterInsightRoutes(app: FastifyTypeBox, deps: ClusterInsightRouteDeps): void {
  const { insight } = deps;

  app.get(
    '/organization/:organizationId/cluster/:clusterId/kubeconfig',
    {
      schema: {
        operationId: 'getClusterKubeconfig',
        summary: "Get a self-managed cluster's kubeconfig",
        description:
          'The kubeconfig given with editClusterKubeconfig, as YAML. with_token_from_cli=true answers it without credentials: each ' +
          'user runs curl with $SLIPWAY_API_TOKEN against get-cluster-token-by-clusterId when kubectl needs a token. Needs the ' +
          'admin role (it is a credential); every read is in the audit log. 400 for read_only=true (Slipway cannot narrow a ' +
          'kubeconfig) or a cluster that is not self-managed; 404 when none was given.',
        tags: TAGS,
        params: ClusterParams,
        querystring: KubeconfigQuery,
        response: { 200: yamlAnswer('The kubeconfig (YAML)'), ...authenticatedErrors() },
      },
      config: { access: { permission: 'cluster-kubeconfig:read', target: 'organization' }, audited: true },
    },
    async (request, reply) => {
      const text = await insight.getClusterKubeconfig(request.params.organizationId, request.params.clusterId, {
        withTokenFromCli: request.query.with_token_from_cli ?? false,
        readOnly: request.query.read_only,
      });
      return reply.header('cache-control', 'no-store').type(YAML).send(text);
    },
  );

  // The one route whose body is YAML: its parser lives in a scope of its own, so every other route stays JSON-only.
  app.register(async (scope: FastifyTypeBox) => {
    scope.addContentTypeParser(YAML, { parseAs: 'string', bodyLimit: KUBECONFIG_MAX_BYTES }, (_request, body, done) => {
      done(null, typeof body === 'string' ? body : body.toString('utf8'));
    });
    scope.put(
      '/organization/:organizationId/cluster/:clusterId/kubeconfig',
      {
        schema: {
          operationId: 'editClusterKubeconfig',
          summary: "Set a self-managed cluster's kubeconfig",
          description:
            'Stores the kubeconfig (YAML, application/x-yaml, up to 256 KiB) sealed with the installation\'s key; it is never ' +
            'answered but by getClusterKubeconfig, never logged. It must hold clusters (each with its server), users and ' +
            'contexts naming them, and a current-context of the list: 400 naming each problem otherwise, or for a cluster ' +
            'that is not self-managed. Needs the admin role.',
          tags: TAGS,
          params: ClusterParams,
          consumes: [YAML],
          body: Type.String({ description: 'The kubeconfig (YAML).' }),
          response: { 204: NoContent, ...authenticatedErrors('payload_too_large', 'unsupported_media_type') },
        },
        config: { access: { permission: 'cluster-kubeconfig:update', target: 'organization' } },
        preValidation: async (request) => {
          if (typeof request.body === 'string') {
            uploadedKubeconfigs.set(request, request.body);
            request.body = NOT_RECORDED;
          }
        },
      },
      async (request, reply) => {
        const text = uploadedKubeconfigs.get(request);
        uploadedKubeconfigs.delete(request);
        await insight.editClusterKubeconfig(request.params.organizationId, request.params.clusterId, text ?? '');
        return reply.code(HTTP_STATUS.noContent).send(null);
      },
    );
  });

  // The reference's own operation ids (kebab-case here): clients generated from it name the methods after them.
  app.get(
    '/cluster/:clusterId/token',
    {
      schema: {
        operationId: 'get-cluster-token-by-clusterId',
        summary: "Get a token for a self-managed cluster's API",
        description:
          "The bearer token of the stored kubeconfig's current user, as the ExecCredential kubectl's exec plugins print " +
          '(what a kubeconfig from getClusterKubeconfig with with_token_from_cli runs). Needs the admin role. 400 for ' +
          'read_only=true, a user that authenticates without a token, or a cluster that is not self-managed; 404 when no ' +
          'kubeconfig was given.',
        tags: TAGS,
        params: BareClusterParams,
        querystring: ClusterTokenQuery,
        response: { 200: ClusterExecCredential, ...authenticatedErrors() },
      },
      config: { access: { permission: 'cluster-kubeconfig:read', target: 'cluster' }, audited: true },
    },
    async (request, reply) => reply.header('cache-control', 'no-store').send(await insight.getClusterToken(request.params.clusterId, request.query.read_only)),
  );

  app.get(
    '/cluster/:clusterId/events',
    {
      schema: {
        operationId: 'get-cluster-kubernetes-events',
        summary: "List a cluster's Kubernetes events",
        description:
          "The Kubernetes events of Slipway's namespaces as the cluster's agent reports them, last seen between " +
          'from_date_time and to_date_time (ISO-8601), newest first, at most 1000; node_name, pod_name and ' +
          'reporting_component narrow them. 400 for a date that does not parse or a range that ends before it starts.',
        tags: TAGS,
        params: BareClusterParams,
        querystring: ClusterEventsQuery,
        response: { 200: ClusterKubernetesEventList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => ({ results: await insight.listClusterEvents(request.params.clusterId, request.query) }),
  );

  app.get(
    '/cluster/:clusterId/logs',
    {
      schema: {
        operationId: 'get-cluster-logs',
        summary: "Query a cluster's log lines",
        description:
          "A Loki query over the cluster's log lines (its deploys, its agent's own lines), answered in Loki's shape as JSON " +
          'text: endpoint query_range or query; query a stream selector over the labels source, type and step with = or ' +
          '!=, then |= / != line filters; start, end (nanoseconds or RFC 3339), since, limit (1-5000, default 100) and ' +
          'direction as Loki takes them. 400 for anything else (regular expressions, parsers, metric queries).',
        tags: TAGS,
        params: BareClusterParams,
        querystring: ClusterLogsQuery,
        response: { 200: ClusterLogsResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => ({ response: await insight.queryClusterLogs(request.params.clusterId, request.query) }),
  );

  app.get(
    '/cluster/:clusterId/metrics',
    {
      schema: {
        operationId: 'get-cluster-metrics',
        summary: "Query a cluster's metrics",
        description:
          "A Prometheus query of the cluster's metrics. Slipway collects none (no Prometheus runs, no driver reports " +
          "metrics), so query and query_range get Prometheus's empty answer as JSON text; 400 for another endpoint.",
        tags: TAGS,
        params: BareClusterParams,
        querystring: ClusterMetricsQuery,
        response: { 200: ClusterMetricsResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => ({ metrics: await insight.queryClusterMetrics(request.params.clusterId, request.query) }),
  );

  app.get(
    '/cluster/:clusterId/environments',
    {
      schema: {
        operationId: 'get-environments-by-cluster-id',
        summary: 'List the environments on a cluster',
        description:
          'The environments placed on the cluster that the caller may read, with their project and services (agentic ' +
          'workflows, which the reference does not list, are left out).',
        tags: TAGS,
        params: BareClusterParams,
        response: { 200: ClusterEnvironmentResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => ({ results: await insight.listClusterEnvironments(requirePrincipal(request), request.params.clusterId) }),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/logs',
    {
      schema: {
        operationId: 'listClusterLogs',
        summary: "List a cluster's log lines",
        description:
          "The cluster's newest log lines, oldest first (at most 1000): each step of its deploys as the worker ran them, " +
          'operator updates requested, and the lines its agent reports. Error lines carry the error.',
        tags: TAGS,
        params: ClusterParams,
        response: { 200: ClusterLogsResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => ({ results: await insight.listClusterLogs(request.params.organizationId, request.params.clusterId) }),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/isReady',
    {
      schema: {
        operationId: 'getClusterReadinessStatus',
        summary: 'Get whether a cluster is ready',
        description: 'Ready: the cluster is deployed (DEPLOYED or RESTARTED) and its agent heartbeats.',
        tags: TAGS,
        params: ClusterParams,
        response: { 200: ClusterReadinessStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => insight.getClusterReadiness(request.params.organizationId, request.params.clusterId),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/operator/attach',
    {
      schema: {
        operationId: 'attachClusterOperator',
        summary: "Attach a self-managed cluster's operator",
        description:
          "Puts the cluster's operator (its Slipway agent) under fleet management, with the control plane's versions as " +
          'its target until updateClusterOperator sets others. A self-managed cluster is attached from its creation; ' +
          'attaching again changes nothing. 400 for a cluster that is not self-managed. Needs the admin role.',
        tags: OPERATOR_TAGS,
        params: ClusterParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'cluster-operator:update', target: 'organization' } },
    },
    async (request, reply) => {
      await insight.attachClusterOperator(request.params.organizationId, request.params.clusterId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/operator/status',
    {
      schema: {
        operationId: 'getClusterOperatorStatus',
        summary: "Get a self-managed cluster's operator status",
        description:
          "Whether the cluster's agent (its operator) is connected, its last heartbeat, the version it runs against the " +
          'target, and where that leaves it (CURRENT, OUTDATED_IMAGE, DISCONNECTED, …). The agent does not report its ' +
          'chart, so the reported chart is null. 400 for a cluster that is not self-managed.',
        tags: OPERATOR_TAGS,
        params: ClusterParams,
        response: { 200: ClusterOperatorStatusResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => insight.getClusterOperatorStatus(request.params.organizationId, request.params.clusterId),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/operator/update',
    {
      schema: {
        operationId: 'updateClusterOperator',
        summary: "Set the versions a cluster's operator should run",
        description:
          "Records the chart and image versions (the image defaults to the control plane's version) the cluster's agent " +
          'should run and answers 202 with an execution id. Slipway does not reach into a self-managed cluster: its ' +
          "owner upgrades the release (the bootstrap's helm command), and the status reads OUTDATED_IMAGE until the agent " +
          'heartbeats with the new version. 400 for a bad version or a cluster that is not self-managed; 409 when no ' +
          'operator is attached. Needs the admin role.',
        tags: OPERATOR_TAGS,
        params: ClusterParams,
        body: ClusterOperatorUpdateRequest,
        response: { 202: ClusterOperatorUpdateResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'cluster-operator:update', target: 'organization' } },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await insight.updateClusterOperator(request.params.organizationId, request.params.clusterId, request.body)),
  );

  app.get(
    '/admin/operator/clusters',
    {
      schema: {
        operationId: 'listClusterOperatorFleet',
        summary: 'List the self-managed clusters and their operators',
        description:
          'Every self-managed cluster of the organizations the caller administers (admin or owner role, or an ADMIN ' +
          'token in its own organization), with whether its operator is attached and connected and its versions against ' +
          'the target. 403 for a caller who administers no organization (policy tokens included).',
        tags: OPERATOR_TAGS,
        response: { 200: ClusterOperatorFleetInventoryResponseList, ...errorResponses('unauthenticated', 'forbidden') },
      },
      config: { access: { permission: 'cluster-operator-fleet:read', target: 'none' } },
    },
    async (request) => ({ results: await insight.listClusterOperatorFleet(requirePrincipal(request)) }),
  );

  // The agent's side: authenticated by the cluster's operator credential before its body is read.
  app.post(
    '/operator/v1/cluster-events',
    {
      schema: {
        operationId: 'reportAgentClusterEvents',
        summary: "Report the cluster's events and the agent's own lines",
        description:
          "Kubernetes events of Slipway's namespaces (a known uid is updated: count, message, occurrences) and the " +
          "agent's own log lines about its cluster, at most 500 of each per report; the newest 2000 of each are kept per " +
          "cluster. 400 for an invalid report; 401 without the cluster's agent credential.",
        tags: AGENT_TAGS,
        security: OPERATOR_SECURITY,
        body: AgentClusterEventReport,
        response: { 200: AgentClusterEventReportAnswer, ...errorResponses('bad_request', 'unauthenticated') },
      },
      config: { access: { public: true } },
      onRequest: clusterCredentialHook(deps.authenticateAgent, 'an agent credential'),
    },
    async (request) => insight.recordAgentReport(authenticatedClusterId(request), request.body),
  );
}
