import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import {
  ClusterParams,
  ClusterPlatformBindingRequest,
  ClusterPlatformBindingResponse,
  PlatformComponentConfigurationPreviewRequest,
  PlatformComponentConfigurationResolutionResponse,
  PlatformTemplateCatalogResponse,
  PlatformTemplateListQuery,
  ResolveParams,
  ResolveQuery,
} from './platform-templates.schemas.ts';
import type { PlatformTemplatesService } from './platform-templates.service.ts';

const TAGS = ['Platform Configuration'];
const CATALOG_ERRORS = ['internal', 'unavailable'] as const;

/** The catalog operations and the platform configuration of a cluster, under its replacement and deprecated paths. */
export function registerPlatformTemplateRoutes(app: FastifyTypeBox, platformTemplates: PlatformTemplatesService): void {
  app.get(
    '/organization/:organizationId/platformTemplate',
    {
      schema: {
        operationId: 'listPlatformTemplates',
        summary: 'List platform templates',
        description:
          'The published template releases (deprecated ones included, drafts never) with their layers, components and ' +
          'configuration fields. clusterMode and cloudProvider go together: with both, only the templates, layers and ' +
          'fields that apply to that cluster context are listed, with their constraints narrowed to it. 400 when only one ' +
          'of clusterMode and cloudProvider is given.',
        tags: TAGS,
        params: OrganizationParams,
        querystring: PlatformTemplateListQuery,
        response: { 200: PlatformTemplateCatalogResponse, ...authenticatedErrors(...CATALOG_ERRORS) },
      },
      config: { access: { permission: 'platform-templates:read', target: 'organization' } },
    },
    async (request) => ({ results: await platformTemplates.listPlatformTemplates(request.query) }),
  );

  app.post(
    '/organization/:organizationId/platformTemplate/:templateKey/:templateVersion/component/:componentKey/resolve',
    {
      schema: {
        operationId: 'resolvePlatformTemplateComponentConfiguration',
        summary: "Preview a component's configuration",
        description:
          'Read-only preview of one component in a cluster context: its fields, its runtime requirements (MISSING or ' +
          'READY for the given profile values, cluster inputs and component outputs), the bindings to other ' +
          'components’ outputs, and the violations of the given values. Needs no cluster. 400 when the template or the ' +
          'component’s layer is not made for the given context; 404 for an unknown template release or component.',
        tags: TAGS,
        params: ResolveParams,
        querystring: ResolveQuery,
        body: PlatformComponentConfigurationPreviewRequest,
        response: { 200: PlatformComponentConfigurationResolutionResponse, ...authenticatedErrors(...CATALOG_ERRORS) },
      },
      config: { access: { permission: 'platform-templates:resolve', target: 'organization' } },
    },
    async (request) =>
      platformTemplates.resolvePlatformTemplateComponentConfiguration(
        request.params,
        { mode: request.query.clusterMode, provider: request.query.cloudProvider },
        request.body,
      ),
  );

  const paths = [
    {
      url: '/organization/:organizationId/cluster/:clusterId/platformConfiguration',
      get: 'getClusterPlatformConfiguration',
      put: 'updateClusterPlatformConfiguration',
      summary: { get: 'Get a cluster’s platform configuration', put: 'Set a cluster’s platform configuration' },
      deprecation: undefined,
    },
    {
      url: '/organization/:organizationId/cluster/:clusterId/platformBinding',
      get: 'getClusterPlatformBinding',
      put: 'updateClusterPlatformBinding',
      summary: { get: 'Get a cluster’s platform configuration (deprecated path)', put: 'Set a cluster’s platform configuration (deprecated path)' },
      deprecation: {
        get: 'Deprecated: use getClusterPlatformConfiguration (GET /organization/{organizationId}/cluster/{clusterId}/platformConfiguration), which answers the same. ',
        put: 'Deprecated: use updateClusterPlatformConfiguration (PUT /organization/{organizationId}/cluster/{clusterId}/platformConfiguration), which behaves the same. ',
      },
    },
  ] as const;

  for (const path of paths) {
    app.get(
      path.url,
      {
        schema: {
          operationId: path.get,
          summary: path.summary.get,
          ...(path.deprecation === undefined ? {} : { deprecated: true }),
          description:
            (path.deprecation?.get ?? '') +
            'The cluster’s platform configuration: its template release, layer selections, profile values and ' +
            'customer-provided inputs (sensitive values are never answered), and how each layer resolves for the cluster. ' +
            '404 when the cluster has none; 500 when its template release is no longer in the catalog.',
          tags: TAGS,
          params: ClusterParams,
          response: { 200: ClusterPlatformBindingResponse, ...authenticatedErrors(...CATALOG_ERRORS) },
        },
        config: { access: { permission: 'cluster-platform-configuration:read', target: 'organization' } },
      },
      async (request) => platformTemplates.getClusterPlatformConfiguration(request.params.organizationId, request.params.clusterId),
    );

    app.put(
      path.url,
      {
        schema: {
          operationId: path.put,
          summary: path.summary.put,
          ...(path.deprecation === undefined ? {} : { deprecated: true }),
          description:
            (path.deprecation?.put ?? '') +
            'Selects a template release for the cluster and stores its layer selections, profile values and ' +
            'customer-provided runtime inputs, replacing the previous configuration once it is valid for the cluster’s ' +
            'context. A sensitive value left out is kept from the stored configuration of the same template. 400 naming ' +
            'the invalid values, or for a deprecated template release; 404 for an unknown cluster or template release.',
          tags: TAGS,
          params: ClusterParams,
          body: ClusterPlatformBindingRequest,
          response: { 200: ClusterPlatformBindingResponse, ...authenticatedErrors(...CATALOG_ERRORS) },
        },
        config: { access: { permission: 'cluster-platform-configuration:update', target: 'organization' } },
      },
      async (request) =>
        platformTemplates.updateClusterPlatformConfiguration(request.params.organizationId, request.params.clusterId, request.body),
    );
  }
}
