import { Type } from 'typebox';
import { principalDisplayName, type Access } from '../../auth/principal.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import { CommitResponseList } from '../services/services.commits.ts';
import {
  PlatformComponentConfigurationPreviewRequest,
  PlatformComponentConfigurationResolutionResponse,
} from '../platform-templates/platform-templates.schemas.ts';
import {
  AnalysisParams,
  ClusterAnalysisLogResponseList,
  ClusterAnalysisRequest,
  ClusterAnalysisResponse,
  ClusterAnalysisResponseList,
  ClusterCloudProviderInfo,
  ClusterCloudProviderInfoRequest,
  ClusterDnsProviderRequest,
  ClusterDnsProviderResponse,
  ClusterKarpenterPrivateSubnetIdsPutRequest,
  ClusterOnlyParams,
  ClusterRoutingTable,
  ClusterRoutingTableRequest,
  ComponentResolveParams,
  EksAnywhereClusterJwtResponse,
  EksAnywhereCommitRequest,
  EksAnywhereCommitResponse,
  OrganizationClusterParams,
} from './cluster-settings.schemas.ts';
import { ANALYSES_LISTED, EKS_ANYWHERE_COMMITS, EKS_ANYWHERE_JWT_TTL_SECONDS, type ClusterSettingsService } from './cluster-settings.service.ts';

const TAGS = ['Clusters'];

const PlatformComponentConfigurationPreviewResponse = Type.Object(
  { clusterId: Type.String({ format: 'uuid' }), ...PlatformComponentConfigurationResolutionResponse.properties },
  { $id: 'PlatformComponentConfigurationPreviewResponse' },
);

/** The organization a `/cluster/{clusterId}/…` or `/clusters/{clusterId}/…` request reached (found by the authorizer). */
function organizationOf(request: { access: Access | undefined }): string {
  return requireAccess(request).organizationId;
}

/** A cluster's network and provider settings, its analyses and its platform component preview (docs/cluster-network.md). */
export function registerClusterSettingsRoutes(app: FastifyTypeBox, settings: ClusterSettingsService): void {
  app.get(
    '/organization/:organizationId/cluster/:clusterId/routingTable',
    {
      schema: {
        operationId: 'getRoutingTable',
        summary: "Get a cluster's routing table",
        description: 'The routes stored for the cluster (empty until set), destinations in canonical CIDR form. 404 when the cluster is not the organization’s.',
        tags: TAGS,
        params: OrganizationClusterParams,
        response: { 200: ClusterRoutingTable, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => settings.getRoutingTable(request.params.organizationId, request.params.clusterId),
  );

  app.put(
    '/organization/:organizationId/cluster/:clusterId/routingTable',
    {
      schema: {
        operationId: 'editRoutingTable',
        summary: "Replace a cluster's routing table",
        description:
          'Replaces every route. A destination is an IPv4 or IPv6 CIDR block with its host bits zero, appearing once; a target is `local`, a ' +
          'cloud gateway, peering, interface or endpoint id (igw-, nat-, vgw-, tgw-, lgw-, pcx-, eni-, vpce-, eigw-, cagw-) or a next-hop address ' +
          'of the destination’s family. 400 naming each bad route, and nothing is written. Stored for the cluster’s VPC; the local driver has none ' +
          'and Kubernetes drivers record it only (docs/cluster-network.md).',
        tags: TAGS,
        params: OrganizationClusterParams,
        body: ClusterRoutingTableRequest,
        response: { 201: ClusterRoutingTable, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (request, reply) => reply.code(201).send(await settings.editRoutingTable(request.params.organizationId, request.params.clusterId, request.body.routes)),
  );

  app.get(
    '/cluster/:clusterId/dnsProvider',
    {
      schema: {
        operationId: 'getClusterDnsProvider',
        summary: "Get a cluster's DNS provider",
        description: 'The DNS provider the cluster’s domains are managed with; PLATFORM with the installation’s apps domain until one is set. Secrets are never answered.',
        tags: TAGS,
        params: ClusterOnlyParams,
        response: { 200: ClusterDnsProviderResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => settings.getClusterDnsProvider(organizationOf(request), request.params.clusterId),
  );

  app.put(
    '/cluster/:clusterId/dnsProvider',
    {
      schema: {
        operationId: 'editClusterDnsProvider',
        summary: "Set a cluster's DNS provider",
        description:
          'PLATFORM (the installation’s), CLOUDFLARE (email and API token) or ROUTE53 (static AWS keys, region, optional hosted zone) with the ' +
          'domain to manage. The Cloudflare token and the AWS secret key are sealed at rest and never answered. 400 for a bad domain, e-mail, key, ' +
          'region or a field of another provider.',
        tags: TAGS,
        params: ClusterOnlyParams,
        body: ClusterDnsProviderRequest,
        response: { 200: ClusterDnsProviderResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:update', target: 'cluster' } },
    },
    async (request) => settings.editClusterDnsProvider(organizationOf(request), request.params.clusterId, request.body.dns_provider),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/cloudProviderInfo',
    {
      schema: {
        operationId: 'getOrganizationCloudProviderInfo',
        summary: "Get a cluster's cloud provider binding",
        description: 'The cloud provider, credentials and region the cluster is bound to: the binding set for it, or else what it was created with.',
        tags: TAGS,
        params: OrganizationClusterParams,
        response: { 200: ClusterCloudProviderInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => settings.getOrganizationCloudProviderInfo(request.params.organizationId, request.params.clusterId),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/cloudProviderInfo',
    {
      schema: {
        operationId: 'specifyClusterCloudProviderInfo',
        summary: 'Bind a cluster to cloud provider credentials',
        description:
          'Binds the cluster to credentials of the organization (credentials.id, required) of the cluster’s own provider, in a region (the ' +
          'cluster’s when left out). 400 for unknown credentials, credentials of another provider, or a provider that is not the cluster’s. ' +
          'Bound credentials cannot be deleted (409) until the binding changes or the cluster goes.',
        tags: TAGS,
        params: OrganizationClusterParams,
        body: ClusterCloudProviderInfoRequest,
        response: { 201: ClusterCloudProviderInfo, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (request, reply) =>
      reply.code(201).send(await settings.specifyClusterCloudProviderInfo(request.params.organizationId, request.params.clusterId, request.body ?? {})),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/eks-anywhere/jwt',
    {
      schema: {
        operationId: 'getEksAnywhereClusterJwt',
        summary: 'Get a JWT for an EKS Anywhere cluster',
        description:
          `A token signed by this control plane (HS256), scoped to the cluster (subject cluster:<id>, audience slipway-eks-anywhere), valid ` +
          `${EKS_ANYWHERE_JWT_TTL_SECONDS / 60} minutes. 400 when the cluster is not an EKS Anywhere one (no eks_anywhere_parameters in its ` +
          'infrastructure_charts_parameters). Needs the admin permission: the token speaks for the cluster.',
        tags: TAGS,
        params: OrganizationClusterParams,
        response: { 200: EksAnywhereClusterJwtResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:operator-bootstrap', target: 'organization' } },
    },
    async (request) => settings.getEksAnywhereClusterJwt(request.params.organizationId, request.params.clusterId),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/eks-anywhere/commits',
    {
      schema: {
        operationId: 'listEksAnywhereCommits',
        summary: 'List the commits of an EKS Anywhere cluster definition',
        description:
          `The last ${EKS_ANYWHERE_COMMITS} commits, newest first, of the branch of the cluster’s EKS Anywhere git repository, read with its git ` +
          'token; empty when no repository is configured. 400 when the cluster is not an EKS Anywhere one or the host refuses the token or cannot be reached.',
        tags: TAGS,
        params: OrganizationClusterParams,
        response: { 200: CommitResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => settings.listEksAnywhereCommits(request.params.organizationId, request.params.clusterId),
  );

  app.put(
    '/organization/:organizationId/cluster/:clusterId/eks-anywhere/commit',
    {
      schema: {
        operationId: 'updateEksAnywhereCommit',
        summary: 'Choose the commit of an EKS Anywhere cluster definition',
        description:
          'Selects the commit (full id or an abbreviation of 7 or more hex digits, among the listed ones) the cluster definition is applied from, ' +
          'answered in full. 400 when the cluster is not an EKS Anywhere one, has no repository, or the commit is unknown.',
        tags: TAGS,
        params: OrganizationClusterParams,
        body: EksAnywhereCommitRequest,
        response: { 200: EksAnywhereCommitResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (request) => settings.updateEksAnywhereCommit(request.params.organizationId, request.params.clusterId, request.body.commit_id),
  );

  app.put(
    '/organization/:organizationId/cluster/:clusterId/karpenterPrivateSubnetIds',
    {
      schema: {
        operationId: 'updateKarpenterPrivateFargateSubnetIds',
        summary: "Set the private subnets of a cluster's Karpenter Fargate profile",
        description:
          'Replaces the private subnet ids (subnet- and 8 or 17 hex digits) per availability zone. 400 when the cluster does not run Karpenter ' +
          '(an AWS cluster with the KARPENTER feature), for a malformed id, or for an id given twice. Answers 200 without a body.',
        tags: TAGS,
        params: OrganizationClusterParams,
        body: ClusterKarpenterPrivateSubnetIdsPutRequest,
        response: { 200: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (request, reply) => {
      await settings.updateKarpenterPrivateFargateSubnetIds(request.params.organizationId, request.params.clusterId, request.body ?? {});
      return reply.code(200).send(null);
    },
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/platformBinding/component/:componentKey/resolve',
    {
      schema: {
        operationId: 'resolvePlatformComponentConfiguration',
        summary: "Preview a component of a cluster's platform configuration",
        description:
          'Read-only preview of one component of the cluster’s template release in the cluster’s context: fields, runtime requirements, bindings ' +
          'and violations, over the values the cluster stores for the component with the request’s on top (sensitive stored values are not read ' +
          'back). 404 when the cluster has no platform configuration or the component is unknown; 400 when its layer does not apply to the cluster.',
        tags: ['Platform Configuration'],
        params: ComponentResolveParams,
        body: PlatformComponentConfigurationPreviewRequest,
        response: { 200: PlatformComponentConfigurationPreviewResponse, ...authenticatedErrors('internal', 'unavailable') },
      },
      config: { access: { permission: 'platform-templates:resolve', target: 'organization' } },
    },
    async (request) =>
      settings.resolvePlatformComponentConfiguration(request.params.organizationId, request.params.clusterId, request.params.componentKey, request.body),
  );

  app.post(
    '/clusters/:clusterId/analysis',
    {
      schema: {
        operationId: 'startClusterAnalysis',
        summary: 'Start a cluster analysis',
        description:
          'Queues a diagnosis of the cluster (answered PENDING): cluster state, agent heartbeat and version, waiting and failed agent tasks, ' +
          'certificates, failed workloads, plus the Kubernetes APIs against target_kubernetes_version (DEPRECATED_API_CHECK) or capacity against use ' +
          '(COST_RECOMMENDATION); its findings become its log lines in output_format. 409 while another analysis of the cluster has not ended.',
        tags: TAGS,
        params: ClusterOnlyParams,
        body: ClusterAnalysisRequest,
        response: { 202: ClusterAnalysisResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:update', target: 'cluster' } },
    },
    async (request, reply) => {
      const triggeredBy = principalDisplayName(requirePrincipal(request));
      return reply.code(202).send(await settings.startClusterAnalysis(organizationOf(request), request.params.clusterId, request.body, triggeredBy));
    },
  );

  app.get(
    '/clusters/:clusterId/analysis',
    {
      schema: {
        operationId: 'listClusterAnalyses',
        summary: "List a cluster's analyses",
        description: `The cluster’s last ${ANALYSES_LISTED} analyses, newest first, with their status.`,
        tags: TAGS,
        params: ClusterOnlyParams,
        response: { 200: ClusterAnalysisResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => settings.listClusterAnalyses(organizationOf(request), request.params.clusterId),
  );

  app.get(
    '/clusters/:clusterId/analysis/:analysisId',
    {
      schema: {
        operationId: 'getClusterAnalysis',
        summary: 'Get a cluster analysis',
        description: 'One analysis and its status (PENDING, RUNNING, SUCCEEDED, FAILED with error_message, TERMINATED). 404 for an analysis of another cluster.',
        tags: TAGS,
        params: AnalysisParams,
        response: { 200: ClusterAnalysisResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => settings.getClusterAnalysis(organizationOf(request), request.params.clusterId, request.params.analysisId),
  );

  app.get(
    '/clusters/:clusterId/analysis/:analysisId/logs',
    {
      schema: {
        operationId: 'listClusterAnalysisLogs',
        summary: "List a cluster analysis's log lines",
        description: 'The lines the analysis wrote, in order (line_order from 1), each with its level (INFO, WARNING, ERROR); none until it has run.',
        tags: TAGS,
        params: AnalysisParams,
        response: { 200: ClusterAnalysisLogResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'cluster' } },
    },
    async (request) => settings.listClusterAnalysisLogs(organizationOf(request), request.params.clusterId, request.params.analysisId),
  );
}
