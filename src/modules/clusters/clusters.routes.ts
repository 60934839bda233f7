import { Type } from 'typebox';
import { authenticatedErrors, errorResponses, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OPERATOR_SECURITY } from '../../http/openapi.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { authenticatedClusterId, bodyCredentialHooks, clusterCredentialHook } from '../../http/authenticate.ts';
import {
  BareClusterParams,
  ClusterLock,
  ClusterLockList,
  ClusterLockRequest,
  ClusterOperatorBootstrapResponse,
  ClusterParams,
  ClusterRequest,
  ClusterResponse,
  ClusterResponseList,
  ClusterStatus,
  ClusterStatusResponseList,
  DeleteClusterQuery,
  DeployClusterQuery,
  OperatorEnrollRequest,
  OperatorEnrollResponse,
  OperatorReportRequest,
} from './clusters.schemas.ts';
import type { ClustersService } from './clusters.service.ts';

const TAGS = ['Clusters'];
const LOCK_TAGS = ['Cluster Locks'];
const OPERATOR_TAGS = ['Cluster Operator'];

export function registerClusterRoutes(app: FastifyTypeBox, clusters: ClustersService): void {
  app.get(
    '/organization/:organizationId/cluster',
    {
      schema: {
        operationId: 'listOrganizationCluster',
        summary: "List the organization's clusters",
        description:
          'Every cluster of the organization, LOCAL, managed and self-managed, with its settings and current status. 404 for an organization the caller is not a member of.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: ClusterResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => ({ results: await clusters.listOrganizationCluster(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/cluster',
    {
      schema: {
        operationId: 'createCluster',
        summary: 'Create a cluster',
        description:
          'Creates a cluster in READY, never deployed: deployCluster starts it. The name is unique in the organization (409 otherwise). Self-managed clusters are created with createSelfManagedCluster (400 here). A LOCAL cluster runs on the server\'s host: its cloud_provider is ON_PREMISE, and the installation must allow LOCAL clusters for the organization (refused otherwise).',
        tags: TAGS,
        params: OrganizationParams,
        body: ClusterRequest,
        response: { 201: ClusterResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await clusters.createCluster(requireAccess(request), request.body)),
  );

  app.get(
    '/organization/:organizationId/cluster/status',
    {
      schema: {
        operationId: 'getOrganizationClusterStatus',
        summary: 'Get the status of every cluster',
        description:
          'Each cluster\'s deployment status, whether it is deployed, the last and next Kubernetes versions, and its lock if any: what a dashboard polls.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: ClusterStatusResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => ({ results: await clusters.getOrganizationClusterStatus(request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/lock',
    {
      schema: {
        operationId: 'list-cluster-lock',
        summary: 'List the cluster locks',
        description:
          'The live locks of the organization\'s clusters, with who locked each, why and until when (expired locks are not listed).',
        tags: LOCK_TAGS,
        params: OrganizationParams,
        response: { 200: ClusterLockList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => ({ results: await clusters.listClusterLocks(request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId',
    {
      schema: {
        operationId: 'getCluster',
        summary: 'Get a cluster',
        description:
          'The cluster with its settings, its Kubernetes version and its deployment status. 404 when the organization has no such cluster.',
        tags: TAGS,
        params: ClusterParams,
        response: { 200: ClusterResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => clusters.getCluster(request.params.organizationId, request.params.clusterId),
  );

  app.put(
    '/organization/:organizationId/cluster/:clusterId',
    {
      schema: {
        operationId: 'editCluster',
        summary: 'Edit a cluster',
        description:
          'Replaces the cluster\'s editable settings. A deployed cluster shows deployment_status OUT_OF_DATE until its next deploy. A locked cluster answers 409 naming the lock; a name taken in the organization answers 409.',
        tags: TAGS,
        params: ClusterParams,
        body: ClusterRequest,
        response: { 200: ClusterResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (request) => clusters.editCluster(request.params.organizationId, request.params.clusterId, request.body),
  );

  app.delete(
    '/organization/:organizationId/cluster/:clusterId',
    {
      schema: {
        operationId: 'deleteCluster',
        summary: 'Delete a cluster',
        description:
          'DEFAULT and DELETE_CLUSTER_AND_PLATFORM_CONFIG queue the teardown (the cluster goes DELETE_QUEUED → DELETING → DELETED); DELETE_PLATFORM_CONFIG removes only the platform configuration. skipReconcile skips the pre-destroy apply and is refused with DELETE_PLATFORM_CONFIG. A locked cluster answers 409.',
        tags: TAGS,
        params: ClusterParams,
        querystring: DeleteClusterQuery,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await clusters.deleteCluster(
        request.params.organizationId,
        request.params.clusterId,
        request.query.deleteMode ?? 'DEFAULT',
        request.query.skipReconcile ?? false,
      );
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/status',
    {
      schema: {
        operationId: 'getClusterStatus',
        summary: "Get a cluster's status",
        description:
          'The cluster\'s deployment status (a state of the cluster\'s state machine, docs/clusters.md), whether it is deployed, its last deployment\'s message and the next Kubernetes version it can be upgraded to.',
        tags: TAGS,
        params: ClusterParams,
        response: { 200: ClusterStatus, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (request) => clusters.getClusterStatus(request.params.organizationId, request.params.clusterId),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/deploy',
    {
      schema: {
        operationId: 'deployCluster',
        summary: 'Deploy a cluster',
        description:
          'Queues a deploy of the cluster\'s current settings; the agent carries it out and the status goes DEPLOYING → DEPLOYED (or DEPLOYMENT_ERROR with the reason). dry_run validates and renders only, ending in DRY_RUN. 409 while another action runs or the cluster is locked; 402 when the organization\'s billing is not valid.',
        tags: TAGS,
        params: ClusterParams,
        querystring: DeployClusterQuery,
        response: { 201: ClusterStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'clusters:deploy', target: 'organization' } },
    },
    async (request, reply) =>
      reply
        .code(HTTP_STATUS.created)
        .send(await clusters.deployCluster(request.params.organizationId, request.params.clusterId, request.query.dry_run ?? false)),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/stop',
    {
      schema: {
        operationId: 'StopCluster',
        summary: 'Stop a cluster',
        description:
          'Queues a stop of the cluster\'s workloads; the status goes STOP_QUEUED → STOPPING → STOPPED. 409 while another action runs or the cluster is locked.',
        tags: TAGS,
        params: ClusterParams,
        response: { 202: ClusterStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:deploy', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await clusters.stopCluster(request.params.organizationId, request.params.clusterId)),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/restart',
    {
      schema: {
        operationId: 'restartCluster',
        summary: 'Restart a cluster',
        description:
          'Queues a restart of the cluster\'s agent and infrastructure; the status goes RESTART_QUEUED → RESTARTING → RESTARTED. 409 while another action runs or the cluster is locked; 402 when the organization\'s billing is not valid.',
        tags: TAGS,
        params: ClusterParams,
        response: { 202: ClusterStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'clusters:deploy', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await clusters.restartCluster(request.params.organizationId, request.params.clusterId)),
  );

  app.post(
    '/organization/:organizationId/cluster/:clusterId/cancel',
    {
      schema: {
        operationId: 'cancelClusterDeployment',
        summary: "Cancel a cluster's action",
        description:
          'Cancels the queued action, or a deploy under way at its next step. 409 when nothing is under way.',
        tags: TAGS,
        params: ClusterParams,
        response: { 202: ClusterStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:deploy', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await clusters.cancelClusterAction(request.params.organizationId, request.params.clusterId)),
  );

  app.post(
    '/cluster/:clusterId/upgrade',
    {
      schema: {
        operationId: 'upgradeCluster',
        summary: "Upgrade a cluster's Kubernetes",
        description:
          'Upgrades Kubernetes by one minor version (next_k8s_available_version). 409 when the cluster runs the newest version Slipway supports, or when it is locked (naming the lock).',
        tags: TAGS,
        params: BareClusterParams,
        response: { 200: ClusterStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'clusters:deploy', target: 'cluster' } },
    },
    async (request) => clusters.upgradeCluster(request.params.clusterId),
  );

  app.post(
    '/cluster/:clusterId/lock',
    {
      schema: {
        operationId: 'lockCluster',
        summary: 'Lock a cluster',
        description:
          'Locks a cluster: no deploy, upgrade, edit, stop, restart or delete until it is unlocked or ttl_in_days pass. The reason is shown to whoever is refused. 409 when it is locked already.',
        tags: LOCK_TAGS,
        params: BareClusterParams,
        body: ClusterLockRequest,
        response: { 200: ClusterLock, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:lock', target: 'cluster' } },
    },
    async (request) => clusters.lockCluster(requirePrincipal(request), request.params.clusterId, request.body),
  );

  // The reference's own operation id (kebab-case here): clients generated from it name the method after it.
  app.delete(
    '/cluster/:clusterId/lock',
    {
      schema: {
        operationId: 'unlock-cluster',
        summary: 'Unlock a cluster',
        description:
          'Removes the cluster\'s lock at once, whatever its time to live. 404 when the cluster is not locked.',
        tags: LOCK_TAGS,
        params: BareClusterParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:lock', target: 'cluster' } },
    },
    async (request, reply) => {
      await clusters.unlockCluster(request.params.clusterId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  // A GET that mints a token, as the reference defines it: each read is a new one-time token, so it is never cached.
  app.get(
    '/organization/:organizationId/cluster/:clusterId/operator/bootstrap',
    {
      schema: {
        operationId: 'getClusterOperatorBootstrap',
        summary: "Get the commands that install a self-managed cluster's agent",
        description:
          'Mints a one-time enrollment token (valid 24 hours) and answers the Helm chart, its values and the command ' +
          'that install the Slipway agent (the cluster operator) with it. Every call mints a new token; an unused one ' +
          'expires. 400 for a cluster that is not self-managed.',
        tags: OPERATOR_TAGS,
        params: ClusterParams,
        response: { 200: ClusterOperatorBootstrapResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:operator-bootstrap', target: 'organization' } },
    },
    async (request, reply) => {
      const bootstrap = await clusters.getClusterOperatorBootstrap(request.params.organizationId, request.params.clusterId);
      return reply.header('cache-control', 'no-store').send(bootstrap);
    },
  );

  // The agent's install (docs/kubernetes.md, "Installing the agent"): YAML text with a new one-time enrollment token,
  // never cached. getInstallationHelmValues is the reference's; getInstallationManifests is Slipway's own.
  const yamlAnswer = (description: string) => ({ description, content: { 'application/x-yaml': { schema: Type.String() } } });
  app.get(
    '/organization/:organizationId/cluster/:clusterId/installationHelmValues',
    {
      schema: {
        operationId: 'getInstallationHelmValues',
        summary: 'Get the Helm values that install the agent',
        description:
          "Mints a one-time enrollment token (24 hours) and answers the values of the charts/slipway-agent Helm chart that install the cluster's Kubernetes agent with it. Self-managed clusters only (400 otherwise).",
        tags: TAGS,
        params: ClusterParams,
        response: { 200: yamlAnswer('The chart values (YAML)'), ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:operator-bootstrap', target: 'organization' } },
    },
    async (request, reply) => {
      const values = await clusters.getInstallationHelmValues(request.params.organizationId, request.params.clusterId);
      return reply.header('cache-control', 'no-store').type('application/x-yaml').send(values);
    },
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/installationManifests',
    {
      schema: {
        operationId: 'getInstallationManifests',
        summary: 'Get the manifests that install the agent',
        description:
          "Slipway's own: mints a one-time enrollment token (24 hours) and answers the Kubernetes objects that install the cluster's agent with it, as one multi-document YAML for kubectl apply. Self-managed clusters only (400 otherwise).",
        tags: TAGS,
        params: ClusterParams,
        response: { 200: yamlAnswer('The install manifests (multi-document YAML)'), ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:operator-bootstrap', target: 'organization' } },
    },
    async (request, reply) => {
      const manifests = await clusters.getInstallationManifests(request.params.organizationId, request.params.clusterId);
      return reply.header('cache-control', 'no-store').type('application/x-yaml').send(manifests);
    },
  );

  // The operator's side: authenticated by its enrollment token, then by its own credential, not by a user's — in
  // both cases before its request is validated (http/authenticate.ts).
  app.post(
    '/operator/v1/enroll',
    {
      schema: {
        operationId: 'enrollClusterOperator',
        summary: 'Enroll an agent with its one-time token',
        description:
          'Called by a self-managed cluster\'s agent (the operator) once: it trades the one-time enrollment token of getClusterOperatorBootstrap for its own long-lived credential, answered once and stored hashed. 401 for a token that is unknown, used or expired. No user authentication.',
        tags: OPERATOR_TAGS,
        security: [],
        body: OperatorEnrollRequest,
        response: { 200: OperatorEnrollResponse, ...errorResponses('bad_request', 'unauthenticated') },
      },
      config: { access: { public: true } },
      ...bodyCredentialHooks({ field: 'enrollment_token', what: 'an operator enrollment token', check: clusters.checkEnrollmentToken }),
    },
    async (request) => clusters.enrollOperator(request.body.enrollment_token),
  );

  app.post(
    '/operator/v1/report',
    {
      schema: {
        operationId: 'reportClusterOperatorStatus',
        summary: "Report an agent's status",
        description:
          'Called by an enrolled agent with its credential: whether the cluster is READY and the Kubernetes version it runs, shown on the cluster. 401 without a valid agent credential.',
        tags: OPERATOR_TAGS,
        security: OPERATOR_SECURITY,
        body: OperatorReportRequest,
        response: { 204: NoContent, ...errorResponses('bad_request', 'unauthenticated') },
      },
      config: { access: { public: true } },
      onRequest: clusterCredentialHook(clusters.authenticateOperator, 'an operator credential'),
    },
    async (request, reply) => {
      await clusters.recordOperatorReport(authenticatedClusterId(request), request.body);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}

