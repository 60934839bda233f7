import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import type { CloudCredentialsService } from '../cloud-credentials/cloud-credentials.service.ts';
import { OrganizationEventTargetQuery, OrganizationEventTargetResponseList } from '../organization-events/organization-events.schemas.ts';
import type { OrganizationEventsService } from '../organization-events/organization-events.service.ts';
import { WebhookParams } from '../webhooks/webhooks.schemas.ts';
import type { WebhooksService } from '../webhooks/webhooks.service.ts';
import {
  ContainerRegistryAssociatedParams,
  ContainerRegistryAssociatedServicesResponseList,
  HelmRepositoryAssociatedParams,
  HelmRepositoryAssociatedServicesResponseList,
  OrganizationCredentialsResponseList,
  OrganizationEnvironmentResponseList,
  OrganizationServicesQuery,
  ServiceLightResponseList,
  WebhookEventResponseList,
} from './organization-listings.schemas.ts';
import type { OrganizationListingsService } from './organization-listings.service.ts';

const ORGANIZATION_TAGS = ['Organization Main Calls'];

export interface OrganizationListingsRouteDeps {
  listings: OrganizationListingsService;
  credentials: Pick<CloudCredentialsService, 'listOrganizationCredentials'>;
  events: Pick<OrganizationEventsService, 'listEventTargets'>;
  webhooks: Pick<WebhooksService, 'listWebhookEvents'>;
}

/** The organization-wide listings (docs/organization-listings.md). */
export function registerOrganizationListingsRoutes(app: FastifyTypeBox, deps: OrganizationListingsRouteDeps): void {
  const { listings } = deps;

  app.get(
    '/organization/:organizationId/environments',
    {
      schema: {
        operationId: 'listEnvironmentsByOrganizationId',
        summary: 'List the environments of every project',
        description:
          'Every environment of the organization the caller may read, by project then name. A custom role sees the ' +
          'environments of the projects and environment types it is given. 404 for an organization the caller is not in.',
        tags: ORGANIZATION_TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationEnvironmentResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'organization' } },
    },
    async (request) => ({ results: await listings.listEnvironments(requirePrincipal(request), request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/services',
    {
      schema: {
        operationId: 'listServicesByOrganizationId',
        summary: 'List the services of every environment',
        description:
          'Every service of the organization the caller may read (all seven kinds), with its project, environment and ' +
          'cluster, optionally only those of one project, environment or cluster (ids that name nothing of the ' +
          'organization match nothing). 400 for a filter that is not a uuid.',
        tags: ORGANIZATION_TAGS,
        params: OrganizationParams,
        querystring: OrganizationServicesQuery,
        response: { 200: ServiceLightResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'organization' } },
    },
    async (request) => ({ results: await listings.listServices(requirePrincipal(request), request.params.organizationId, request.query) }),
  );

  app.get(
    '/organization/:organizationId/credentials',
    {
      schema: {
        operationId: 'listOrganizationCredentials',
        summary: 'List the cloud credentials of every provider',
        description: 'Every cloud provider credential of the organization (secrets never shown), each with the clusters created on it.',
        tags: ORGANIZATION_TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationCredentialsResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'cloud-credentials:read', target: 'organization' } },
    },
    async (request) => ({ results: await deps.credentials.listOrganizationCredentials(request.params.organizationId) }),
  );

  app.get(
    '/organization/:organizationId/containerRegistry/:containerRegistryId/associatedServices',
    {
      schema: {
        operationId: 'getContainerRegistryAssociatedServices',
        summary: 'List the services that pull from a container registry',
        description:
          'The containers and jobs (CRON or LIFECYCLE) whose image comes from the registry, among those the caller may ' +
          'read. 404 when the registry is not one of the organization.',
        tags: ORGANIZATION_TAGS,
        params: ContainerRegistryAssociatedParams,
        response: { 200: ContainerRegistryAssociatedServicesResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'container-registries:read', target: 'organization' } },
    },
    async (request) => ({
      results: await listings.servicesUsingContainerRegistry(requirePrincipal(request), request.params.organizationId, request.params.containerRegistryId),
    }),
  );

  app.get(
    '/organization/:organizationId/helmRepository/:helmRepositoryId/associatedServices',
    {
      schema: {
        operationId: 'getHelmRepositoryAssociatedServices',
        summary: 'List the Helm services that install from a repository',
        description: 'The Helm services whose chart comes from the repository, among those the caller may read. 404 when the repository is not one of the organization.',
        tags: ORGANIZATION_TAGS,
        params: HelmRepositoryAssociatedParams,
        response: { 200: HelmRepositoryAssociatedServicesResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:read', target: 'organization' } },
    },
    async (request) => ({
      results: await listings.servicesUsingHelmRepository(requirePrincipal(request), request.params.organizationId, request.params.helmRepositoryId),
    }),
  );

  app.get(
    '/organization/:organizationId/targets',
    {
      schema: {
        operationId: 'getOrganizationEventTargets',
        summary: 'List what the audit log has events about',
        description:
          'The distinct targets (id and name) of the audit log\'s events matching the filters, newest first; with ' +
          'targetLevelToFetch PROJECT or ENVIRONMENT, the projects or environments the events happened in, under ' +
          'their current names. Needs the audit log\'s permission (admin). 400 for an invalid filter.',
        tags: ['Organization Event'],
        params: OrganizationParams,
        querystring: OrganizationEventTargetQuery,
        response: { 200: OrganizationEventTargetResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'organization-events:read', target: 'organization' } },
    },
    async (request) => ({ targets: await deps.events.listEventTargets(request.params.organizationId, request.query) }),
  );

  app.get(
    '/organization/:organizationId/webhook/:webhookId/event',
    {
      schema: {
        operationId: 'listWebhookEvent',
        summary: 'List the deployment events sent to a webhook',
        description:
          'The newest 100 attempts at delivering deployment events to the webhook, each with the body sent and the ' +
          'receiver\'s status code (0 when it did not answer) and error. listWebhookDeliveries lists every attempt, ' +
          'audit-log events included. 404 for another organization\'s webhook.',
        tags: ['Organization Webhook'],
        params: WebhookParams,
        response: { 200: WebhookEventResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:read', target: 'organization' } },
    },
    async (request) => ({ results: await deps.webhooks.listWebhookEvents(request.params.organizationId, request.params.webhookId) }),
  );
}
