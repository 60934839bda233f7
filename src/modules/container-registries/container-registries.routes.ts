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
        summary: 'List container registries',
        description:
          "The organization's container registries (ECR, Docker Hub, GitHub, GitLab, Scaleway, DigitalOcean, Google " +
          'Artifact Registry, Azure or any OCI registry), with their kind, URL and non-secret settings. 404 when the ' +
          'caller is not a member.',
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
        summary: 'Add a container registry',
        description:
          'Registers a container registry that containers pull their images from. Which `config` fields are needed ' +
          'depends on the kind (a URL, a username and password, or cloud credentials); secrets in `config` are stored ' +
          'encrypted and never answered. 400 naming the missing or invalid fields; 409 when a registry of that name ' +
          'exists.',
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
        summary: 'Get a container registry',
        description: 'One container registry with its non-secret settings. 404 when there is no such registry in the organization.',
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
        summary: 'Edit a container registry',
        description:
          "Replaces a container registry's settings; a secret config field left out keeps its stored value. 400 naming " +
          'invalid fields; 404 for an unknown registry; 409 when the name is taken.',
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
        summary: 'Delete a container registry',
        description: 'Deletes a container registry. 404 for an unknown registry; 409 while services still pull from it.',
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
        summary: "Check a container registry's access",
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
        summary: 'List images and tags',
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
