import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { startGitProviderServer, type TestGitProviderServer, type TestRepository } from './support/git-provider-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Git provider listings and the GitHub App record (issue 23, docs/git-providers.md): repositories and branches read
 * from GitHub's, GitLab's and Bitbucket's REST APIs (a test git provider server on loopback) with the organization's
 * git tokens, across pages and up to a bound; refusals, rate limits and failures of the provider mapped to answers;
 * tokens of other organizations or providers refused; the GitHub App connection stored and removed; the deprecated
 * /account/… operations.
 */

let providers: TestGitProviderServer;
beforeAll(async () => {
  providers = await startGitProviderServer({ pageSize: 2 });
});
afterAll(async () => {
  await providers.close();
});

function repositories(owner: string, count: number, branches: string[] = ['main']): TestRepository[] {
  return Array.from({ length: count }, (_, index) => ({
    fullName: `${owner}/repo-${index}`,
    isPrivate: index % 2 === 0,
    defaultBranch: 'main',
    branches,
  }));
}

const NO_REPOSITORIES = { results: [] };

describeEachDatabase(
  'Git provider listings',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let githubOwner: string;
    const tokens: Record<'github' | 'gitlab' | 'bitbucket', { id: string; value: string }> = {
      github: { id: '', value: '' },
      gitlab: { id: '', value: '' },
      bitbucket: { id: '', value: '' },
    };
    const listing = (provider: string, query = '') => `/organization/${organizationId}/account/${provider}/repository${query}`;
    const branches = (provider: string, query: string) => `/organization/${organizationId}/account/${provider}/repository/branch${query}`;

    async function createToken(auth: string, organization: string, body: Record<string, unknown>): Promise<string> {
      const created = await ctx().call(auth, { method: 'POST', url: `/organization/${organization}/gitToken`, payload: { name: uniqueName('token'), ...body } });
      expect(created.statusCode, created.body).toBe(201);
      return created.json<{ id: string }>().id;
    }

    function requestsWith(value: string) {
      return providers.requests.filter((request) => request.authorization === `Bearer ${value}`);
    }

    it('sets up an organization with a token of each provider', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const owners = { github: uniqueName('gh'), gitlab: uniqueName('gl'), bitbucket: uniqueName('bb') };
      githubOwner = owners.github;
      tokens.github.value = `ghp_${uniqueName('v').replace(/-/g, '')}`;
      providers.addAccount(tokens.github.value, {
        repositories: [...repositories(owners.github, 5, ['main', 'develop', 'feature-x']), { fullName: `${owners.github}/endless`, isPrivate: false, defaultBranch: 'main', branches: [], endlessBranches: true }],
      });
      tokens.github.id = await createToken(owner.auth, organizationId, { type: 'GITHUB', token: tokens.github.value, git_api_url: providers.githubApiUrl });

      tokens.gitlab.value = `glpat-${uniqueName('v')}`;
      providers.addAccount(tokens.gitlab.value, { repositories: [{ fullName: `${owners.gitlab}/platform/api`, isPrivate: true, defaultBranch: 'trunk', branches: ['trunk', 'release-1', 'release-2'] }, ...repositories(owners.gitlab, 2)] });
      tokens.gitlab.id = await createToken(owner.auth, organizationId, { type: 'GITLAB', token: tokens.gitlab.value, git_api_url: providers.gitlabApiUrl });

      tokens.bitbucket.value = `ATCTT${uniqueName('v').replace(/-/g, '')}`;
      providers.addAccount(tokens.bitbucket.value, { repositories: repositories(owners.bitbucket, 3, ['main', 'hotfix']) });
      tokens.bitbucket.id = await createToken(owner.auth, organizationId, {
        type: 'BITBUCKET',
        token: tokens.bitbucket.value,
        workspace: owners.bitbucket,
        git_api_url: providers.bitbucketApiUrl,
      });
    });

    it('lists GitHub repositories across Link-header pages, and the branches of one', async () => {
      const before = requestsWith(tokens.github.value).length;
      const listed = await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${tokens.github.id}`) });
      expect(listed.statusCode, listed.body).toBe(200);
      const results = listed.json<{ results: Array<{ id: string; name: string; url: string; default_branch: string; is_private: boolean }> }>().results;
      expect(results).toHaveLength(6);
      // Six repositories, two a page: three requests, each with the token as a bearer token.
      expect(requestsWith(tokens.github.value).length - before).toBe(3);
      const first = results.find((repository) => repository.name.endsWith('/repo-0'));
      expect(first).toEqual({ id: expect.stringMatching(/^[0-9]+$/), name: first?.name, url: `https://github.example/${first?.name}.git`, default_branch: 'main', is_private: true });
      expect(listed.body).not.toContain(tokens.github.value);

      const name = first?.name ?? '';
      const listedBranches = await ctx().call(owner.auth, { method: 'GET', url: branches('github', `?gitTokenId=${tokens.github.id}&name=${encodeURIComponent(name)}`) });
      expect(listedBranches.statusCode, listedBranches.body).toBe(200);
      expect(listedBranches.json()).toEqual({ results: [{ name: 'main' }, { name: 'develop' }, { name: 'feature-x' }] });
    });

    it('lists GitLab projects by X-Next-Page and branches of a project in a subgroup, and Bitbucket repositories by `next`', async () => {
      const gitlab = await ctx().call(owner.auth, { method: 'GET', url: listing('gitlab', `?gitTokenId=${tokens.gitlab.id}`) });
      expect(gitlab.statusCode, gitlab.body).toBe(200);
      const projects = gitlab.json<{ results: Array<{ name: string; url: string; default_branch: string; is_private: boolean }> }>().results;
      expect(projects).toHaveLength(3);
      const api = projects.find((project) => project.name.endsWith('/platform/api'));
      expect(api).toMatchObject({ url: `https://gitlab.example/${api?.name}.git`, default_branch: 'trunk', is_private: true });
      const gitlabBranches = await ctx().call(owner.auth, { method: 'GET', url: branches('gitlab', `?gitTokenId=${tokens.gitlab.id}&name=${encodeURIComponent(api?.name ?? '')}`) });
      expect(gitlabBranches.json()).toEqual({ results: [{ name: 'trunk' }, { name: 'release-1' }, { name: 'release-2' }] });

      // The organization's only Bitbucket token is used without naming it.
      const bitbucket = await ctx().call(owner.auth, { method: 'GET', url: listing('bitbucket') });
      expect(bitbucket.statusCode, bitbucket.body).toBe(200);
      const found = bitbucket.json<{ results: Array<{ id: string; name: string; url: string }> }>().results;
      expect(found).toHaveLength(3);
      // Bitbucket's clone links carry a user name; the listing answers the URL without it.
      for (const repository of found) expect(repository.url).toBe(`https://bitbucket.example/${repository.name}.git`);
      const slug = (found[0]?.name ?? '').split('/')[1] ?? '';
      for (const name of [found[0]?.name ?? '', slug]) {
        const listedBranches = await ctx().call(owner.auth, { method: 'GET', url: branches('bitbucket', `?name=${encodeURIComponent(name)}`) });
        expect(listedBranches.json(), name).toEqual({ results: [{ name: 'main' }, { name: 'hotfix' }] });
      }
    });

    it('stops following pages at its bound (10 pages)', async () => {
      const before = requestsWith(tokens.github.value).length;
      const listed = await ctx().call(owner.auth, { method: 'GET', url: branches('github', `?gitTokenId=${tokens.github.id}&name=${encodeURIComponent(`${githubOwner}/endless`)}`) });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json<{ results: unknown[] }>().results).toHaveLength(10);
      expect(requestsWith(tokens.github.value).length - before).toBe(10);
    });

    it('answers 404 for a repository the token cannot see, 400 with the reason for a token the provider refuses', async () => {
      const missing = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: branches('github', `?gitTokenId=${tokens.github.id}&name=nobody/nothing`) }), 404);
      expect(missing.message).toContain('nobody/nothing');

      const revokedValue = `ghp_${uniqueName('revoked').replace(/-/g, '')}`;
      const revoked = await createToken(owner.auth, organizationId, { type: 'GITLAB', token: revokedValue, git_api_url: providers.gitlabApiUrl });
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('gitlab', `?gitTokenId=${revoked}`) }), 400);
      expect(refused.message).toMatch(/refused git token .* invalid, expired or revoked/);
      expect(refused.details).toEqual([{ field: '/gitTokenId', message: 'refused by the provider' }]);
      expect(JSON.stringify(refused)).not.toContain(revokedValue);

      // Two GitLab tokens now: the listing needs to be told which.
      const ambiguous = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('gitlab') }), 400);
      expect(ambiguous.details?.[0]?.field).toBe('/gitTokenId');
    });

    it('refuses with 429 and the reset time when the rate limit is used up, without asking for pages it cannot get', async () => {
      const resetAt = Math.floor(Date.now() / 1000) + 120;
      const exhausted = `ghp_${uniqueName('limited').replace(/-/g, '')}`;
      providers.addAccount(exhausted, { repositories: repositories('limited', 1), remaining: 0, resetAt });
      const exhaustedId = await createToken(owner.auth, organizationId, { type: 'GITHUB', token: exhausted, git_api_url: providers.githubApiUrl });
      const limited = await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${exhaustedId}`) });
      const body = expectErrorBody(limited, 429);
      expect(body.message).toContain(new Date(resetAt * 1000).toISOString());
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(100);
      expect(retryAfter).toBeLessThanOrEqual(121);

      // One request left and three pages to read: the first page says the quota is gone, so no second is asked for.
      const lastOne = `ghp_${uniqueName('last').replace(/-/g, '')}`;
      providers.addAccount(lastOne, { repositories: repositories('last', 5), remaining: 1, resetAt });
      const lastOneId = await createToken(owner.auth, organizationId, { type: 'GITHUB', token: lastOne, git_api_url: providers.githubApiUrl });
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${lastOneId}`) }), 429);
      expect(requestsWith(lastOne)).toHaveLength(1);

      // GitLab says so with 429 and Retry-After.
      const gitlabLimited = `glpat-${uniqueName('limited')}`;
      providers.addAccount(gitlabLimited, { repositories: [], remaining: 0, resetAt });
      const gitlabLimitedId = await createToken(owner.auth, organizationId, { type: 'GITLAB', token: gitlabLimited, git_api_url: providers.gitlabApiUrl });
      const gitlab = await ctx().call(owner.auth, { method: 'GET', url: listing('gitlab', `?gitTokenId=${gitlabLimitedId}`) });
      expectErrorBody(gitlab, 429);
      expect(Number(gitlab.headers['retry-after'])).toBeGreaterThan(100);
    });

    it('answers 503 when the provider fails', async () => {
      const failing = `ghp_${uniqueName('failing').replace(/-/g, '')}`;
      providers.addAccount(failing, { repositories: [], failWith: 502 });
      const failingId = await createToken(owner.auth, organizationId, { type: 'GITHUB', token: failing, git_api_url: providers.githubApiUrl });
      const failed = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${failingId}`) }), 503);
      expect(failed.message).toContain('502');
    });

    it('refuses bad input: a malformed token id or repository name, no name, unknown parameters, a token of another provider', async () => {
      const cases: Array<[string, string]> = [
        [listing('github', '?gitTokenId=not-a-uuid'), 'gitTokenId'],
        [listing('github', `?gitTokenId=${tokens.github.id}&page=2`), 'page'],
        [branches('github', `?gitTokenId=${tokens.github.id}`), 'name'],
        [branches('github', `?gitTokenId=${tokens.github.id}&name=${encodeURIComponent('../../user')}`), 'name'],
        [branches('github', `?gitTokenId=${tokens.github.id}&name=${encodeURIComponent('a b/c')}`), 'name'],
        [branches('github', `?gitTokenId=${tokens.github.id}&name=only-one-part`), 'name'],
        [branches('github', `?gitTokenId=${tokens.github.id}&name=${encodeURIComponent('owner/..')}`), 'name'],
        [branches('gitlab', `?gitTokenId=${tokens.gitlab.id}&name=${encodeURIComponent('./a')}`), 'name'],
        [listing('gitlab', `?gitTokenId=${tokens.github.id}`), 'gitTokenId'],
      ];
      const before = providers.requests.length;
      for (const [url, field] of cases) {
        const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url }), 400);
        expect(JSON.stringify(refused), url).toContain(field);
      }
      expect(providers.requests.length).toBe(before);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${crypto.randomUUID()}`) }), 404);
    });

    it("keeps organizations apart: another organization's token id is not found, and its members cannot list here", async () => {
      const stranger = await ctx().signUpWithOrganization();
      const theirs = await createToken(stranger.owner.auth, stranger.organizationId, { type: 'GITHUB', token: tokens.github.value, git_api_url: providers.githubApiUrl });
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${theirs}`) }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/account/github/repository?gitTokenId=${tokens.github.id}` }), 404);
      // Another organization's member naming this organization: not theirs, so not found.
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: listing('github', `?gitTokenId=${tokens.github.id}`) }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${organizationId}/account/gitAuthProvider` }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'POST', url: `/organization/${organizationId}/github/connect`, payload: { installation_id: '1', code: 'c' } }), 404);
      // An organization without a token of the provider has nothing to list.
      expect((await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/account/gitlab/repository` })).json()).toEqual(NO_REPOSITORIES);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/account/gitlab/repository/branch?name=a/b` }), 400);
    });

    it('lets a viewer see the provider accounts but not list through the tokens', async () => {
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: listing('github', `?gitTokenId=${tokens.github.id}`) }), 403);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: branches('github', `?gitTokenId=${tokens.github.id}&name=a/b`) }), 403);
      const accounts = await ctx().call(viewer.auth, { method: 'GET', url: `/organization/${organizationId}/account/gitAuthProvider` });
      expect(accounts.statusCode, accounts.body).toBe(200);
      expect(accounts.json<{ results: unknown[] }>().results).toContainEqual({ id: tokens.bitbucket.id, name: 'BITBUCKET', owner: expect.stringMatching(/^bb-/), use_bot: false });
      expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: `/organization/${organizationId}/github/connect`, payload: { installation_id: '1', code: 'c' } }), 403);
    });

    it('connects the GitHub App (stored without the code), reconnects, lists it, and disconnects', async () => {
      const connect = (installation_id: string, code = 'a1b2c3d4e5') =>
        ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/github/connect`, payload: { installation_id, code } });
      const connected = await connect('41234567', 'setup-code-secret');
      expect(connected.statusCode, connected.body).toBe(200);
      expect(connected.body).toBe('');
      const row = await ctx().database.db.selectFrom('github_app_connections').selectAll().where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ installation_id: '41234567', connected_by_user_id: owner.id });
      expect(JSON.stringify(row)).not.toContain('setup-code-secret');

      // Two connects at once: both answered, one row, one of the two installations.
      const [one, two] = await Promise.all([connect('51234567'), connect('61234567')]);
      expect([one.statusCode, two.statusCode]).toEqual([200, 200]);
      const rows = await ctx().database.db.selectFrom('github_app_connections').selectAll().where('organization_id', '=', organizationId).execute();
      expect(rows).toHaveLength(1);
      expect(['51234567', '61234567']).toContain(rows[0]?.installation_id);

      const accounts = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/account/gitAuthProvider` })).json<{ results: unknown[] }>().results;
      expect(accounts).toContainEqual({ id: rows[0]?.installation_id, name: 'GITHUB', owner: rows[0]?.installation_id, use_bot: true });
      expect(accounts).toContainEqual({ id: tokens.github.id, name: 'GITHUB', owner: expect.any(String), use_bot: false });

      for (const payload of [{ installation_id: '123' }, { installation_id: 'abc', code: 'x' }, { installation_id: '1', code: '' }, { installation_id: '1', code: 'x', extra: true }]) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/github/connect`, payload }), 400);
      }
      expect((await ctx().database.db.selectFrom('github_app_connections').select('installation_id').where('organization_id', '=', organizationId).executeTakeFirst())?.installation_id).toBe(rows[0]?.installation_id);

      const disconnected = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/github/disconnect?force=true` });
      expect(disconnected.statusCode, disconnected.body).toBe(204);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/github/disconnect` }), 404);
      expect(await ctx().database.db.selectFrom('github_app_connections').select('installation_id').where('organization_id', '=', organizationId).executeTakeFirst()).toBeUndefined();
    });

    it('answers the deprecated /account/… operations with empty lists for a person, 403 for an API token', async () => {
      for (const url of ['/account/gitAuthProvider', '/account/github/repository', '/account/gitlab/repository', '/account/bitbucket/repository', '/account/github/repository/branch?name=a/b', '/account/gitlab/repository/branch', '/account/bitbucket/repository/branch?name=x']) {
        const answered = await ctx().call(owner.auth, { method: 'GET', url });
        expect(answered.statusCode, `${url}: ${answered.body}`).toBe(200);
        expect(answered.json(), url).toEqual({ results: [] });
      }
      const apiToken = await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('api'), scope: 'ADMIN' });
      expectErrorBody(await ctx().call(`Bearer ${apiToken}`, { method: 'GET', url: '/account/github/repository' }), 403);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: '/account/github/repository/branch?bogus=1' }), 400);
    });
  },
  { gitAllowPrivateHosts: true },
);
