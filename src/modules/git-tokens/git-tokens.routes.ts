import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  ApplicationGitRepositoryRequest,
  GitDirectoryList,
  GitTokenAssociatedServicesResponseList,
  GitTokenEditRequest,
  GitTokenParams,
  GitTokenRequest,
  GitTokenResponse,
  GitTokenResponseList,
} from './git-tokens.schemas.ts';
import type { GitTokensService } from './git-tokens.service.ts';

const TOKEN_TAGS = ['Organization Main Calls'];
const REPOSITORY_TAGS = ['Git repositories'];

export function registerGitTokenRoutes(app: FastifyTypeBox, gitTokens: GitTokensService): void {
  app.get(
    '/organization/:organizationId/gitToken',
    {
      schema: {
        operationId: 'listOrganizationGitTokens',
        tags: TOKEN_TAGS,
        params: OrganizationParams,
        response: { 200: GitTokenResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'git-tokens:read', target: 'organization' } },
    },
    async (request) => ({ results: await gitTokens.listOrganizationGitTokens(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/gitToken',
    {
      schema: {
        operationId: 'createGitToken',
        description: 'Registers a token for a git host. The value is stored encrypted and never returned.',
        tags: TOKEN_TAGS,
        params: OrganizationParams,
        body: GitTokenRequest,
        response: { 201: GitTokenResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'git-tokens:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await gitTokens.createGitToken(requirePrincipal(request), requireAccess(request), request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.get(
    '/organization/:organizationId/gitToken/:gitTokenId',
    {
      schema: {
        operationId: 'getOrganizationGitToken',
        tags: TOKEN_TAGS,
        params: GitTokenParams,
        response: { 200: GitTokenResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'git-tokens:read', target: 'organization' } },
    },
    async (request) => gitTokens.getGitToken(request.params.organizationId, request.params.gitTokenId),
  );

  app.put(
    '/organization/:organizationId/gitToken/:gitTokenId',
    {
      schema: {
        operationId: 'editGitToken',
        description: 'Updates a git token; without `token` the stored value is kept.',
        tags: TOKEN_TAGS,
        params: GitTokenParams,
        body: GitTokenEditRequest,
        response: { 200: GitTokenResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'git-tokens:update', target: 'organization' } },
    },
    async (request) => gitTokens.editGitToken(request.params.organizationId, request.params.gitTokenId, request.body),
  );

  app.delete(
    '/organization/:organizationId/gitToken/:gitTokenId',
    {
      schema: {
        operationId: 'deleteGitToken',
        description: 'Deletes a git token; 409 naming the services that still use it.',
        tags: TOKEN_TAGS,
        params: GitTokenParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'git-tokens:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await gitTokens.removeGitToken(request.params.organizationId, request.params.gitTokenId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/organization/:organizationId/gitToken/:gitTokenId/associatedServices',
    {
      schema: {
        operationId: 'getGitTokenAssociatedServices',
        tags: TOKEN_TAGS,
        params: GitTokenParams,
        response: { 200: GitTokenAssociatedServicesResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'git-tokens:read', target: 'organization' } },
    },
    async (request) => ({ results: await gitTokens.associatedServices(request.params.organizationId, request.params.gitTokenId) }),
  );

  app.post(
    '/organization/:organizationId/listDirectoriesFromGitRepository',
    {
      schema: {
        operationId: 'listDirectoriesFromGitRepository',
        description:
          'The immediate subdirectories at root_path on a branch of a repository, sorted, read over the git protocol ' +
          'with the given git token (used to choose the root path of a Terraform service).',
        tags: REPOSITORY_TAGS,
        params: OrganizationParams,
        body: ApplicationGitRepositoryRequest,
        response: { 200: GitDirectoryList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'git-repositories:list', target: 'organization' } },
    },
    async (request) => ({ results: await gitTokens.listDirectories(request.params.organizationId, request.body) }),
  );
}
