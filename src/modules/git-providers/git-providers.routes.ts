import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import type { GitProvider } from '../../git/git-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  AccountBranchListQuery,
  BranchListQuery,
  GitAuthProviderResponseList,
  GithubAppDisconnectQuery,
  GitRepositoryBranchResponseList,
  GitRepositoryResponseList,
  OrganizationGithubAppConnectRequest,
  RepositoryListQuery,
} from './git-providers.schemas.ts';
import { ProviderRateLimited } from './git-providers.rest.ts';
import type { GitProvidersService } from './git-providers.service.ts';

/** The reference's organizationGithubAppConnect answers 200 with no body. */
const EmptyOk = Type.Unsafe<undefined>({ description: 'No body' });

const ORGANIZATION_TAGS = ['Organization Account Git Repositories'];
const ACCOUNT_TAGS = ['Git repositories'];
const GITHUB_APP_TAGS = ['Github App'];

/** How each provider appears in paths (`/github/`), operation ids (`Github`) and prose. */
const PROVIDERS: ReadonlyArray<{ provider: GitProvider; path: string; operation: string; prose: string }> = [
  { provider: 'GITHUB', path: 'github', operation: 'Github', prose: 'GitHub' },
  { provider: 'GITLAB', path: 'gitlab', operation: 'Gitlab', prose: 'GitLab' },
  { provider: 'BITBUCKET', path: 'bitbucket', operation: 'Bitbucket', prose: 'Bitbucket' },
];

const TOKEN_CHOICE =
  'The token is `gitTokenId`, which must be one of the organization\'s git tokens of this provider (404 for an id the ' +
  'organization does not have, 400 for a token of another provider); without it, the organization\'s only token of ' +
  'the provider (400 when it has several).';

const PROVIDER_ERRORS =
  'A token the provider refuses (invalid, expired, revoked, or lacking the scope) answers 400 saying so; the provider\'s ' +
  'rate limit used up answers 429 with `retry-after` and when it resets; a provider that fails or cannot be reached ' +
  'answers 503.';

const NO_PERSONAL_ACCOUNT =
  'Slipway has no per-person login to git providers: git access belongs to organizations, through their git tokens ' +
  '(use the organization\'s twin of this operation), so this answers an empty list. Deprecated, as in the reference. ' +
  '403 for an API token, which belongs to an organization, not to a person.';

/** A provider's rate limit says when to come back: the answer carries it as `retry-after`, as Slipway's own 429 does. */
async function withRetryAfter<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProviderRateLimited) void reply.header('retry-after', String(error.retryAfterSeconds));
    throw error;
  }
}

/** Repositories and branches through the organization's git tokens, the GitHub App record, and the deprecated /account twins. */
export function registerGitProviderRoutes(app: FastifyTypeBox, providers: GitProvidersService): void {
  app.get(
    '/organization/:organizationId/account/gitAuthProvider',
    {
      schema: {
        operationId: 'getOrganizationGitProviderAccount',
        summary: "List the organization's git provider accounts",
        description:
          'One entry per git token of the organization (`id` the token, `name` its provider, `owner` its workspace or ' +
          'else its name, `use_bot` false), then the GitHub App when one is connected (`id` and `owner` its ' +
          'installation id, `use_bot` true). Nothing is asked of the providers. 404 when the caller is not a member.',
        tags: ORGANIZATION_TAGS,
        params: OrganizationParams,
        response: { 200: GitAuthProviderResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'git-tokens:read', target: 'organization' } },
    },
    async (request) => ({ results: await providers.listProviderAccounts(request.params.organizationId) }),
  );

  for (const { provider, path, operation, prose } of PROVIDERS) {
    app.get(
      `/organization/:organizationId/account/${path}/repository`,
      {
        schema: {
          operationId: `getOrganization${operation}Repositories`,
          summary: `List the ${prose} repositories a git token can see`,
          description:
            `The repositories the organization's ${prose} git token can see, read from ${prose}'s API at the token's ` +
            '`git_api_url` (following its pages, up to 1,000 repositories), with their HTTPS clone URL to build a service ' +
            `from. An empty list when no token is named and the organization has no ${prose} token. ${TOKEN_CHOICE} ${PROVIDER_ERRORS}`,
          tags: ORGANIZATION_TAGS,
          params: OrganizationParams,
          querystring: RepositoryListQuery,
          response: { 200: GitRepositoryResponseList, ...authenticatedErrors('rate_limited', 'unavailable') },
        },
        config: { access: { permission: 'git-provider-repositories:list', target: 'organization' } },
      },
      async (request, reply) =>
        withRetryAfter(reply, async () => ({
          results: await providers.listRepositories(request.params.organizationId, provider, request.query.gitTokenId),
        })),
    );

    app.get(
      `/organization/:organizationId/account/${path}/repository/branch`,
      {
        schema: {
          operationId: `getOrganization${operation}RepositoryBranches`,
          summary: `List the branches of a ${prose} repository`,
          description:
            `The branches of the repository \`name\` (as the repository listing names it) read from ${prose}'s API with ` +
            'the organization\'s git token, up to 1,000. 400 without `name` or for a malformed one; 404 when the repository ' +
            `does not exist or the token cannot see it; 400 when the organization has no ${prose} token. ${TOKEN_CHOICE} ${PROVIDER_ERRORS}`,
          tags: ORGANIZATION_TAGS,
          params: OrganizationParams,
          querystring: BranchListQuery,
          response: { 200: GitRepositoryBranchResponseList, ...authenticatedErrors('rate_limited', 'unavailable') },
        },
        config: { access: { permission: 'git-provider-repositories:list', target: 'organization' } },
      },
      async (request, reply) =>
        withRetryAfter(reply, async () => ({
          results: await providers.listBranches(request.params.organizationId, provider, request.query.gitTokenId, request.query.name),
        })),
    );

    app.get(
      `/account/${path}/repository`,
      {
        schema: {
          operationId: `get${operation}Repositories`,
          summary: `List your own ${prose} repositories`,
          description: `The ${prose} repositories of the signed-in person's own ${prose} account. ${NO_PERSONAL_ACCOUNT}`,
          tags: ACCOUNT_TAGS,
          deprecated: true,
          response: { 200: GitRepositoryResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'account:read', target: 'none' } },
      },
      async () => ({ results: [] }),
    );

    app.get(
      `/account/${path}/repository/branch`,
      {
        schema: {
          operationId: `get${operation}RepositoryBranches`,
          summary: `List the branches of your own ${prose} repository`,
          description: `The branches of a repository of the signed-in person's own ${prose} account. ${NO_PERSONAL_ACCOUNT}`,
          tags: ACCOUNT_TAGS,
          deprecated: true,
          querystring: AccountBranchListQuery,
          response: { 200: GitRepositoryBranchResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'account:read', target: 'none' } },
      },
      async () => ({ results: [] }),
    );
  }

  app.get(
    '/account/gitAuthProvider',
    {
      schema: {
        operationId: 'getGitProviderAccount',
        summary: 'List your own git provider accounts',
        description: `The git provider accounts the signed-in person connected. ${NO_PERSONAL_ACCOUNT}`,
        tags: ACCOUNT_TAGS,
        deprecated: true,
        response: { 200: GitAuthProviderResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'account:read', target: 'none' } },
    },
    async () => ({ results: [] }),
  );

  app.post(
    '/organization/:organizationId/github/connect',
    {
      schema: {
        operationId: 'organizationGithubAppConnect',
        summary: 'Connect the GitHub App',
        description:
          'Records which installation of the GitHub App the organization connected (`installation_id`, digits, from ' +
          "the App's setup redirect); connecting again switches to the new installation. `code` is checked for its " +
          'form and not stored with the connection: Slipway does not act as the App, and lists repositories with git tokens. 400 for a ' +
          'malformed body. Answers 200 with no body.',
        tags: GITHUB_APP_TAGS,
        params: OrganizationParams,
        body: OrganizationGithubAppConnectRequest,
        response: { 200: EmptyOk, ...authenticatedErrors() },
      },
      config: { access: { permission: 'github-app:update', target: 'organization' } },
    },
    async (request, reply) => {
      await providers.connectGithubApp(requirePrincipal(request), request.params.organizationId, request.body);
      return reply.code(HTTP_STATUS.ok).send(undefined);
    },
  );

  app.delete(
    '/organization/:organizationId/github/disconnect',
    {
      schema: {
        operationId: 'organizationGithubAppDisconnect',
        summary: 'Disconnect the GitHub App',
        description:
          "Removes the organization's GitHub App connection. `force` is accepted and changes nothing: no service builds " +
          'through the App. 404 when no App is connected.',
        tags: GITHUB_APP_TAGS,
        params: OrganizationParams,
        querystring: GithubAppDisconnectQuery,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'github-app:update', target: 'organization' } },
    },
    async (request, reply) => {
      await providers.disconnectGithubApp(request.params.organizationId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
