import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { clusterAdvancedSettingsSchema, defaultClusterAdvancedSettings, type ClusterAdvancedSettings } from './clusters.advanced-settings.ts';
import { ClusterParams } from './clusters.schemas.ts';

const TAGS = ['Clusters'];

/** The reference's three cluster advanced-settings operations (clusters.advanced-settings.ts). */
export function registerClusterAdvancedSettingsRoutes(app: FastifyTypeBox, clusters: ClusterAdvancedSettings): void {
  const request = clusterAdvancedSettingsSchema('request');
  const response = clusterAdvancedSettingsSchema('response');

  app.get(
    '/defaultClusterAdvancedSettings',
    {
      schema: {
        operationId: 'getDefaultClusterAdvancedSettings',
        summary: 'Get the default cluster advanced settings',
        description: 'Every cluster advanced setting with the value a cluster has until it sets its own (docs/clusters.md, "Advanced settings").',
        tags: TAGS,
        response: { 200: response, ...authenticatedErrors() },
      },
      config: { access: { permission: 'catalogs:read', target: 'none' } },
    },
    async () => defaultClusterAdvancedSettings(),
  );

  app.get(
    '/organization/:organizationId/cluster/:clusterId/advancedSettings',
    {
      schema: {
        operationId: 'getClusterAdvancedSettings',
        summary: "Get a cluster's advanced settings",
        description: "Every key: the cluster's own value or the default. 404 when the cluster is not the organization's.",
        tags: TAGS,
        params: ClusterParams,
        response: { 200: response, ...authenticatedErrors() },
      },
      config: { access: { permission: 'clusters:read', target: 'organization' } },
    },
    async (req) => clusters.getClusterAdvancedSettings(req.params.organizationId, req.params.clusterId),
  );

  app.put(
    '/organization/:organizationId/cluster/:clusterId/advancedSettings',
    {
      schema: {
        operationId: 'editClusterAdvancedSettings',
        summary: "Replace a cluster's advanced settings",
        description:
          'A key left out goes back to its default. An unknown key, a value of the wrong type or out of bounds, or a request above its limit (nginx, Loki) answers 400 naming the key, and nothing is written. ' +
          'A deployed cluster reads OUT_OF_DATE until its next deploy; a locked cluster answers 409. Slipway stores these settings; its drivers provision none of the infrastructure they describe (docs/clusters.md).',
        tags: TAGS,
        params: ClusterParams,
        body: request,
        response: { 201: response, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'clusters:update', target: 'organization' } },
    },
    async (req, reply) =>
      reply.code(HTTP_STATUS.created).send(await clusters.editClusterAdvancedSettings(req.params.organizationId, req.params.clusterId, req.body as Record<string, unknown>)),
  );
}
