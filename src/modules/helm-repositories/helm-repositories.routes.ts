import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { RegistryCheckResponse } from '../container-registries/container-registries.schemas.ts';
import {
  HelmChartsQuery,
  HelmRepositoryParams,
  HelmRepositoryRequest,
  HelmRepositoryResponse,
  HelmRepositoryResponseList,
  HelmVersionResponseList,
} from './helm-repositories.schemas.ts';
import type { HelmRepositoriesService } from './helm-repositories.service.ts';

const TAGS = ['Helm Repositories'];
const COLLECTION = '/organization/:organizationId/helmRepository';
const ITEM = `${COLLECTION}/:helmRepositoryId`;

export function registerHelmRepositoryRoutes(app: FastifyTypeBox, repositories: HelmRepositoriesService): void {
  app.get(
    COLLECTION,
    {
      schema: {
        operationId: 'listHelmRepository',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: HelmRepositoryResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:read', target: 'organization' } },
    },
    async (request) => ({ results: await repositories.listHelmRepository(request.params.organizationId) }),
  );

  app.post(
    COLLECTION,
    {
      schema: {
        operationId: 'createHelmRepository',
        description: 'Registers a Helm repository (`https://` chart repository or `oci://` registry). Secrets in `config` are stored encrypted and never returned.',
        tags: TAGS,
        params: OrganizationParams,
        body: HelmRepositoryRequest,
        response: { 201: HelmRepositoryResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'helm-repositories:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await repositories.createHelmRepository(request.params.organizationId, request.body)),
  );

  app.get(
    ITEM,
    {
      schema: {
        operationId: 'getHelmRepository',
        tags: TAGS,
        params: HelmRepositoryParams,
        response: { 200: HelmRepositoryResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:read', target: 'organization' } },
    },
    async (request) => repositories.getHelmRepository(request.params.organizationId, request.params.helmRepositoryId),
  );

  app.put(
    ITEM,
    {
      schema: {
        operationId: 'editHelmRepository',
        description: 'Replaces a Helm repository; a secret config field left out keeps its stored value.',
        tags: TAGS,
        params: HelmRepositoryParams,
        body: HelmRepositoryRequest,
        response: { 200: HelmRepositoryResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'helm-repositories:update', target: 'organization' } },
    },
    async (request) => repositories.editHelmRepository(request.params.organizationId, request.params.helmRepositoryId, request.body),
  );

  app.delete(
    ITEM,
    {
      schema: {
        operationId: 'deleteHelmRepository',
        description: 'Deletes a Helm repository; 409 while services still use it.',
        tags: TAGS,
        params: HelmRepositoryParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'helm-repositories:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await repositories.removeHelmRepository(request.params.organizationId, request.params.helmRepositoryId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    `${ITEM}/charts`,
    {
      schema: {
        operationId: 'getHelmCharts',
        description:
          'The charts of the repository with their versions, read from its index.yaml (HTTPS) or its registry (OCI: catalog and ' +
          'tags, at most 50 charts); `chart_name` narrows to one chart. 400 saying why when the repository cannot be read.',
        tags: TAGS,
        params: HelmRepositoryParams,
        querystring: HelmChartsQuery,
        response: { 200: HelmVersionResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:read', target: 'organization' } },
    },
    async (request) => ({
      results: await repositories.getHelmCharts(request.params.organizationId, request.params.helmRepositoryId, request.query.chart_name),
    }),
  );

  app.post(
    `${ITEM}/check`,
    {
      schema: {
        operationId: 'checkHelmRepository',
        description: 'Reads the repository once with the stored credentials and reports whether it is reachable and lets them in.',
        tags: TAGS,
        params: HelmRepositoryParams,
        response: { 200: RegistryCheckResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:check', target: 'organization' } },
    },
    async (request) => repositories.checkHelmRepository(request.params.organizationId, request.params.helmRepositoryId),
  );
}
