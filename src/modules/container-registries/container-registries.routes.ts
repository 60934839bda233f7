import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  ContainerRegistryParams,
  ContainerRegistryRequest,
  ContainerRegistryResponse,
  ContainerRegistryResponseList,
  ContainerVersionResponseList,
  ContainerVersionsQuery,
  RegistryCheckResponse,
} from './container-registries.schemas.ts';
import type { ContainerRegistriesService } from './container-registries.service.ts';

const TAGS = ['Container Registries'];
const COLLECTION = '/organization/:organizationId/containerRegistry';
const ITEM = `${COLLECTION}/:containerRegistryId`;

export function registerContainerRegistryRoutes(app: FastifyTypeBox, registries: ContainerRegistriesService): void {
  app.get(
    COLLECTION,
    {
      schema: {
        operationId: 'listContainerRegistry',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: ContainerRegistryResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'container-registries:read', target: 'organization' } },
    },
    async (request) => ({ results: await registries.listContainerRegistry(request.params.organizationId) }),
  );

  app.post(
    COLLECTION,
    {
      schema: {
        operationId: 'createContainerRegistry',
        description: 'Registers a container registry. Secrets in `config` are stored encrypted and never returned.',
        tags: TAGS,
        params: OrganizationParams,
        body: ContainerRegistryRequest,
        response: { 201: ContainerRegistryResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'container-registries:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await registries.createContainerRegistry(request.params.organizationId, request.body)),
  );

  app.get(
    ITEM,
    {
      schema: {
        operationId: 'getContainerRegistry',
        tags: TAGS,
        params: ContainerRegistryParams,
        response: { 200: ContainerRegistryResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'container-registries:read', target: 'organization' } },
    },
    async (request) => registries.getContainerRegistry(request.params.organizationId, request.params.containerRegistryId),
  );

  app.put(
    ITEM,
    {
      schema: {
        operationId: 'editContainerRegistry',
        description: 'Replaces a container registry; a secret config field left out keeps its stored value.',
        tags: TAGS,
        params: ContainerRegistryParams,
        body: ContainerRegistryRequest,
        response: { 200: ContainerRegistryResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'container-registries:update', target: 'organization' } },
    },
    async (request) => registries.editContainerRegistry(request.params.organizationId, request.params.containerRegistryId, request.body),
  );

  app.delete(
    ITEM,
    {
      schema: {
        operationId: 'deleteContainerRegistry',
        description: 'Deletes a container registry; 409 while services still use it.',
        tags: TAGS,
        params: ContainerRegistryParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'container-registries:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await registries.removeContainerRegistry(request.params.organizationId, request.params.containerRegistryId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    `${ITEM}/check`,
    {
      schema: {
        operationId: 'checkContainerRegistry',
        description:
          'Calls the registry (OCI distribution API `GET /v2/`, answering its Basic or bearer-token challenge with the stored ' +
          'credentials) and reports whether it is reachable and lets the credentials in. A registry that cannot be reached ' +
          'or refuses is a 200 saying so; an address this installation may not reach is a 400.',
        tags: TAGS,
        params: ContainerRegistryParams,
        response: { 200: RegistryCheckResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'container-registries:check', target: 'organization' } },
    },
    async (request) => registries.checkContainerRegistry(request.params.organizationId, request.params.containerRegistryId),
  );

  app.get(
    `${ITEM}/images`,
    {
      schema: {
        operationId: 'getContainerVersions',
        description:
          'The tags of `image_name` (`GET /v2/<name>/tags/list`), or without it the repositories of the registry catalog ' +
          '(`GET /v2/_catalog`, those containing `search`, at most 50) with their tags. 400 saying why when the registry ' +
          'cannot be read.',
        tags: TAGS,
        params: ContainerRegistryParams,
        querystring: ContainerVersionsQuery,
        response: { 200: ContainerVersionResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'container-registries:read', target: 'organization' } },
    },
    async (request) => ({
      results: await registries.getContainerVersions(request.params.organizationId, request.params.containerRegistryId, request.query),
    }),
  );
}
