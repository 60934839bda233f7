import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  ApiTokenListQuery,
  ApiTokenParams,
  OrganizationApiTokenCreate,
  OrganizationApiTokenCreateRequest,
  OrganizationApiTokenResponseList,
} from './api-tokens.schemas.ts';
import type { ApiTokensService } from './api-tokens.service.ts';

const TAGS = ['Organization Api Token'];

export function registerApiTokenRoutes(app: FastifyTypeBox, tokens: ApiTokensService): void {
  app.get(
    '/organization/:organizationId/apiToken',
    {
      schema: {
        operationId: 'listOrganizationApiTokens',
        tags: TAGS,
        params: OrganizationParams,
        querystring: ApiTokenListQuery,
        response: { 200: OrganizationApiTokenResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'api-tokens:read', target: 'organization' } },
    },
    async (request) => ({
      results: await tokens.listOrganizationApiTokens(request.params.organizationId, request.query),
    }),
  );

  app.post(
    '/organization/:organizationId/apiToken',
    {
      schema: {
        operationId: 'createOrganizationApiToken',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationApiTokenCreateRequest,
        response: { 201: OrganizationApiTokenCreate, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'api-tokens:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await tokens.createApiToken(requirePrincipal(request), requireAccess(request), request.body);
      return reply.code(HTTP_STATUS.created).header('cache-control', 'no-store').send(created);
    },
  );

  app.delete(
    '/organization/:organizationId/apiToken/:apiTokenId',
    {
      schema: {
        operationId: 'deleteOrganizationApiToken',
        tags: TAGS,
        params: ApiTokenParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'api-tokens:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await tokens.revokeApiToken(request.params.organizationId, request.params.apiTokenId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
