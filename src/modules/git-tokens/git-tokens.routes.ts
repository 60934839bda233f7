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
        summary: 'List git tokens',
        description:
          "The organization's git tokens (GitHub, GitLab, Bitbucket) with their provider, expiry and how many services " +
          'use each; never their value. 404 when the caller is not a member.',
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
        summary: 'Create a git token',
        description:
          'Registers a token for a git host, which services then clone private repositories with. The value is stored ' +
          'encrypted and never answered. 400 for an invalid body; 409 when a git token of that name exists in the ' +
          'organization.',
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
        summary: 'Get a git token',
        description: 'One git token, without its value. 404 when there is no such token in the organization.',
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
        summary: 'Edit a git token',
        description:
          "Updates a git token's name, description, provider, workspace and API URL; without `token` the stored value is " +
          'kept. 404 for an unknown token; 409 when the name is taken.',
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
        summary: 'Delete a git token',
        description:
          'Deletes a git token nobody uses. 404 for an unknown token; 409 naming the services that still use it (point ' +
          'them at another token first).',
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
        summary: 'List the services using a git token',
        description:
          'Every service of the organization that clones its repository with this token, with its project and ' +
          'environment. 404 for an unknown token.',
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
        summary: "List a repository's directories",
        description:
          'The immediate subdirectories at root_path on a branch of a repository, sorted, read over the git protocol with ' +
          'the given git token (used to choose the root path of a Terraform service). 400 when the repository or branch ' +
          'cannot be read, the token is unknown or can no longer be decrypted, or the address may not be reached from ' +
          'this installation.',
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
