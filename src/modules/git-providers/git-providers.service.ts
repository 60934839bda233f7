import type { Kysely } from 'kysely';
import { actingUserId, type Principal } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import type { GitCredentials, GitProvider } from '../../git/git-access.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { deleteGithubAppConnection, findGithubAppConnection, upsertGithubAppConnection } from './git-providers.repo.ts';
import type { GitProviderRest, ProviderAccount, ProviderRepository } from './git-providers.rest.ts';

/** What this module needs of a git token: the git-tokens module's views and its opening of the sealed value. */
export interface GitTokenView {
  id: string;
  name: string;
  type: GitProvider;
  workspace?: string;
  git_api_url: string;
}

export interface GitTokenSource {
  listOrganizationGitTokens(organizationId: string): Promise<GitTokenView[]>;
  /** 404 (an AppError) when the organization has no such token. */
  getGitToken(organizationId: string, gitTokenId: string): Promise<GitTokenView>;
  credentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
}

export interface GitProvidersDeps {
  db: Kysely<DB>;
  clock: Clock;
  rest: GitProviderRest;
  gitTokens: GitTokenSource;
}

export interface GitAuthProviderView {
  id: string;
  name: GitProvider;
  owner: string;
  use_bot: boolean;
}

const PROVIDER_NAME: Record<GitProvider, string> = { GITHUB: 'GitHub', GITLAB: 'GitLab', BITBUCKET: 'Bitbucket' };

/**
 * Git provider listings and the GitHub App connection (docs/git-providers.md). Listings read the provider's REST API
 * with one of the organization's git tokens, chosen by `gitTokenId` or, when the organization has exactly one token
 * of the provider, that one; nothing is cached or stored. The GitHub App connection is a record of which
 * installation the organization connected.
 */
export function createGitProvidersService(deps: GitProvidersDeps) {
  const { db, clock, rest, gitTokens } = deps;

  async function opened(organizationId: string, view: GitTokenView): Promise<ProviderAccount> {
    const credentials = await gitTokens.credentialsOf(organizationId, view.id);
    if (credentials === undefined) throw notFound(`git token ${view.id} not found`);
    return { provider: view.type, gitTokenId: view.id, apiUrl: view.git_api_url, token: credentials.token, workspace: view.workspace ?? null };
  }

  /**
   * The token a listing reads with, or undefined when none was named and the organization has no token of the
   * provider (nothing to list). A named token must be the organization's (404 otherwise, as for any of its ids) and
   * of the listing's provider.
   */
  async function accountFor(organizationId: string, provider: GitProvider, gitTokenId: string | undefined): Promise<ProviderAccount | undefined> {
    if (gitTokenId !== undefined) {
      const view = await gitTokens.getGitToken(organizationId, gitTokenId);
      if (view.type !== provider) {
        throw badRequest(`git token ${gitTokenId} is a ${view.type} token; this listing reads ${PROVIDER_NAME[provider]}`, [
          { field: '/gitTokenId', message: `must be a ${provider} token` },
        ]);
      }
      return opened(organizationId, view);
    }
    const candidates = (await gitTokens.listOrganizationGitTokens(organizationId)).filter((view) => view.type === provider);
    const [only] = candidates;
    if (only === undefined) return undefined;
    if (candidates.length > 1) {
      throw badRequest(`the organization has ${candidates.length} ${PROVIDER_NAME[provider]} git tokens; name the one to list with in gitTokenId`, [
        { field: '/gitTokenId', message: 'is required when several tokens of the provider exist' },
      ]);
    }
    return opened(organizationId, only);
  }

  async function listRepositories(organizationId: string, provider: GitProvider, gitTokenId: string | undefined): Promise<ProviderRepository[]> {
    const account = await accountFor(organizationId, provider, gitTokenId);
    return account === undefined ? [] : rest.listRepositories(account);
  }

  async function listBranches(organizationId: string, provider: GitProvider, gitTokenId: string | undefined, repositoryName: string): Promise<{ name: string }[]> {
    const account = await accountFor(organizationId, provider, gitTokenId);
    if (account === undefined) {
      throw badRequest(`the organization has no ${PROVIDER_NAME[provider]} git token to read repository ${repositoryName} with`, [
        { field: '/gitTokenId', message: `no ${provider} token in the organization` },
      ]);
    }
    return (await rest.listBranches(account, repositoryName)).map((name) => ({ name }));
  }

  /** Every way the organization reaches a provider: its git tokens, then the GitHub App when connected. */
  async function listProviderAccounts(organizationId: string): Promise<GitAuthProviderView[]> {
    const tokens = await gitTokens.listOrganizationGitTokens(organizationId);
    const accounts: GitAuthProviderView[] = tokens.map((view) => ({ id: view.id, name: view.type, owner: view.workspace ?? view.name, use_bot: false }));
    const app = await findGithubAppConnection(db, organizationId);
    if (app !== undefined) accounts.push({ id: app.installation_id, name: 'GITHUB', owner: app.installation_id, use_bot: true });
    return accounts;
  }

  /** Connects (or, connected already, switches to) an installation of the GitHub App. The code is not stored. */
  async function connectGithubApp(principal: Principal, organizationId: string, input: { installation_id: string; code: string }): Promise<void> {
    const now = isoTimestamp(clock);
    await upsertGithubAppConnection(db, {
      organization_id: organizationId,
      installation_id: input.installation_id,
      connected_by_user_id: actingUserId(principal) ?? null,
      created_at: now,
      updated_at: now,
    });
  }

  async function disconnectGithubApp(organizationId: string): Promise<void> {
    if (!(await deleteGithubAppConnection(db, organizationId))) throw notFound('the organization has no GitHub App connected');
  }

  return { listRepositories, listBranches, listProviderAccounts, connectGithubApp, disconnectGithubApp };
}

export type GitProvidersService = ReturnType<typeof createGitProvidersService>;
