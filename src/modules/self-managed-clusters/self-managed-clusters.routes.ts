import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import { SelfManagedClusterRequest, SelfManagedClusterResponse } from './self-managed-clusters.schemas.ts';
import type { SelfManagedClustersService } from './self-managed-clusters.service.ts';

export function registerSelfManagedClusterRoutes(app: FastifyTypeBox, selfManagedClusters: SelfManagedClustersService): void {
  app.post(
    '/v1/organization/:organizationId/selfManagedCluster',
    {
      schema: {
        operationId: 'createSelfManagedCluster',
        summary: 'Create a self-managed cluster',
        description:
          'Creates a self-managed AWS cluster on an AWS credential of the organization, after checking the credential ' +
          '(STS caller identity; ECR DescribeRepositories in us-east-1 and in the cluster region) and the platform ' +
          'configuration; then writes the cluster, its default ECR registry, its platform configuration and its operator ' +
          'enrollment in one transaction. The answer carries a one-time operator enrollment token. 400 for a provider ' +
          'other than AWS, an unknown region, credentials of another provider or region, or an invalid platform ' +
          'configuration; 403 when the plan does not include self-managed clusters; 404 for unknown credentials; 409 when ' +
          'a cluster of that name exists; 503 when AWS cannot be reached.',
        tags: ['Clusters'],
        params: OrganizationParams,
        body: SelfManagedClusterRequest,
        response: { 201: SelfManagedClusterResponse, ...authenticatedErrors('conflict', 'internal', 'unavailable') },
      },
      config: { access: { permission: 'self-managed-clusters:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await selfManagedClusters.createSelfManagedCluster(requirePrincipal(request), requireAccess(request), request.body);
      // The answer holds a one-time enrollment token: never cached, never replayed by Idempotency-Key.
      return reply.code(HTTP_STATUS.created).header('cache-control', 'no-store').send(created);
    },
  );
}
