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
        summary: 'List Helm repositories',
        description:
          "The organization's Helm repositories (HTTPS chart repositories and OCI registries) with their kind, URL and " +
          'non-secret settings. 404 when the caller is not a member.',
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
        summary: 'Add a Helm repository',
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
        summary: 'Get a Helm repository',
        description: 'One Helm repository with its non-secret settings. 404 when there is no such repository in the organization.',
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
        summary: 'Edit a Helm repository',
        description:
          "Replaces a Helm repository's settings; a secret config field left out keeps its stored value. 400 naming " +
          'invalid fields; 404 for an unknown repository; 409 when the name is taken.',
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
        summary: 'Delete a Helm repository',
        description: 'Deletes a Helm repository. 404 for an unknown repository; 409 while Helm services still install charts from it.',
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
        summary: 'List charts and versions',
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
        operationId: 'checkOrganizationHelmRepository',
        summary: "Check a Helm repository's access",
        description:
          'Reads the repository once with the stored credentials and reports whether it is reachable and lets them in; a ' +
          'repository that cannot be reached or refuses is a 200 saying so. 400 when it names cloud credentials this ' +
          'installation cannot use; 404 for an unknown repository.',
        tags: TAGS,
        params: HelmRepositoryParams,
        response: { 200: RegistryCheckResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'helm-repositories:check', target: 'organization' } },
    },
    async (request) => repositories.checkHelmRepository(request.params.organizationId, request.params.helmRepositoryId),
  );
}
