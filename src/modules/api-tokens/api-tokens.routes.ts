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
        summary: 'List API tokens',
        description:
          "The organization's API tokens, with their role or scope, creator and expiry; never their value (token_start " +
          'identifies one). name and creatorName filter by a part of the name. 404 when the caller is not a member.',
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
        summary: 'Create an API token',
        description:
          'Creates a token for scripts and CI, sent as `Authorization: Token <value>`. It carries a role (role_id, any ' +
          'but OWNER), a scope (ADMIN, WRITE, DEPLOY, READ), or both, and may do only what both allow, never more than ' +
          'its creator. The value is answered here once and never again. 400 without a role_id or a scope, or with an ' +
          'unknown role or the OWNER role; 403 when the token would have rights its creator lacks, or outlive the token ' +
          'creating it; 409 when a token of that name exists.',
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
        summary: 'Revoke an API token',
        description: 'Deletes the token; requests made with it answer 401 from then on. 404 when there is no such token in the organization.',
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
