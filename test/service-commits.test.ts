import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gitServerEnvironment } from '../src/git/git-http-server.ts';
import { newId } from '../src/lib/ids.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The commit listings of services built from git (listApplicationCommit, listJobCommit, listHelmCommit,
 * listTerraformCommit), read from a real git server over HTTP: newest first, 20 at a time, from a commit or after
 * one; with the service's git token for a private repository (sent to the host, never answered); 400 for a service
 * not built from git, an unknown commit, a refused token, a missing repository or an unreachable host.
 */

const TOKEN = 'ghp_CommitListingToken0123456789';
const COMMITS = 25;

let gitRoot = '';
let gitServer: TestGitServer;
let deadUrl = '';
/** The ids of the shop repository's commits on main, newest first. */
let shopCommits: string[] = [];

function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
  });
}

/** Adds `count` commits to `branch` of a bare repository of the test server, by two authors; answers all ids, newest first. */
async function addCommits(repository: string, branch: string, count: number): Promise<string[]> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-commits-'));
  try {
    const base = gitServerEnvironment(work);
    await git(['clone', '--quiet', '--branch', branch, path.join(gitRoot, `${repository}.git`), 'tree'], work, base);
    const tree = path.join(work, 'tree');
    for (let index = 1; index <= count; index += 1) {
      const author = index % 2 === 0 ? 'Ada Lovelace' : 'Grace Hopper';
      const env = { ...base, GIT_AUTHOR_NAME: author, GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: author, GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_AUTHOR_DATE: `2026-01-${String(index).padStart(2, '0')}T10:00:00+02:00` };
      await writeFile(path.join(tree, 'CHANGELOG'), `change ${index}\n`);
      await git(['add', 'CHANGELOG'], tree, env);
      await git(['commit', '--quiet', '-m', `change ${index}`, '-m', `Body of change ${index}.`], tree, env);
    }
    await git(['push', '--quiet', 'origin', branch], tree, base);
    return (await git(['log', '--format=%H', branch], tree, base)).trim().split('\n');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-commits-root-'));
  await createBareRepository(gitRoot, 'shop', { main: ['Dockerfile', 'chart/Chart.yaml', 'infra/main.tf'] });
  await createBareRepository(gitRoot, 'private', { main: ['Dockerfile'] });
  shopCommits = await addCommits('shop', 'main', COMMITS);
  await addCommits('private', 'main', 2);
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: { private: TOKEN } });
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/gone.git`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

afterAll(async () => {
  await gitServer.close();
  await rm(gitRoot, { recursive: true, force: true });
});

interface CommitView {
  git_commit_id: string;
  created_at: string;
  author_name: string;
  message: string;
  tag: string;
}

describeEachDatabase(
  'service commits',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let environmentId: string;

    async function create(collection: string, payload: Record<string, unknown>): Promise<string> {
      const response = await ctx().call(owner.auth, { method: 'POST', url: `/environment/${environmentId}/${collection}`, payload });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string }>().id;
    }

    const source = (url: string, extra: Record<string, unknown> = {}) => ({ url, provider: 'GITHUB', branch: 'main', ...extra });
    const commits = (item: string, id: string, query = '') => ctx().call(owner.auth, { method: 'GET', url: `/${item}/${id}/commit${query}` });

    it('sets up an environment', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
      const cluster = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/cluster`,
        payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
      });
      const environment = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/project/${project.json<{ id: string }>().id}/environment`,
        payload: { name: uniqueName('env'), cluster: cluster.json<{ id: string }>().id },
      });
      expect(environment.statusCode, environment.body).toBe(201);
      environmentId = environment.json<{ id: string }>().id;
    });

    it('lists the last 20 commits of an application\'s branch, newest first, from a commit or after one', async () => {
      const applicationId = await create('application', { name: 'web', git_repository: source(gitServer.urlOf('shop')), healthchecks: {} });
      const first = await commits('application', applicationId);
      expect(first.statusCode, first.body).toBe(200);
      const page = first.json<{ results: CommitView[] }>().results;
      expect(page.map((commit) => commit.git_commit_id)).toEqual(shopCommits.slice(0, 20));
      expect(page[0]).toEqual({
        git_commit_id: shopCommits[0],
        created_at: '2026-01-25T10:00:00+02:00',
        author_name: 'Grace Hopper',
        message: `change ${COMMITS}\n\nBody of change ${COMMITS}.`,
        tag: '',
      });
      expect(page[1]?.author_name).toBe('Ada Lovelace');

      const next = await commits('application', applicationId, `?startId=${page[19]?.git_commit_id}`);
      expect(next.json<{ results: CommitView[] }>().results.map((commit) => commit.git_commit_id)).toEqual(shopCommits.slice(20));
      const from = await commits('application', applicationId, `?gitCommitId=${shopCommits[3]?.slice(0, 10)}`);
      expect(from.json<{ results: CommitView[] }>().results.map((commit) => commit.git_commit_id)).toEqual(shopCommits.slice(3, 23));

      expect(expectErrorBody(await commits('application', applicationId, `?gitCommitId=${'0'.repeat(40)}`), 400).details).toEqual([
        { field: '/gitCommitId', message: 'unknown commit' },
      ]);
      expectErrorBody(await commits('application', applicationId, `?gitCommitId=${shopCommits[0]}&startId=${shopCommits[1]}`), 400);
      expectErrorBody(await commits('application', applicationId, '?startId=not-a-commit'), 400);
    });

    it('serves jobs, Helm charts and Terraform modules built from git', async () => {
      const jobId = await create('job', {
        name: 'migrate',
        source: { docker: { git_repository: source(gitServer.urlOf('shop')) } },
        schedule: { on_start: { arguments: ['migrate'] } },
        healthchecks: {},
      });
      const helmId = await create('helm', { name: 'charts', source: { git_repository: source(gitServer.urlOf('shop'), { root_path: '/chart' }) } });
      const terraformId = await create('terraform', { name: 'infra', terraform_files_source: { git_repository: source(gitServer.urlOf('shop'), { root_path: '/infra' }) } });
      for (const [item, id] of [
        ['job', jobId],
        ['helm', helmId],
        ['terraform', terraformId],
      ] as const) {
        const answer = await commits(item, id);
        expect(answer.statusCode, `${item}: ${answer.body}`).toBe(200);
        expect(answer.json<{ results: CommitView[] }>().results[0]?.git_commit_id, item).toBe(shopCommits[0]);
      }
    });

    it('reads a private repository with the service\'s git token, which never appears in an answer; a refused token is a 400', async () => {
      const token = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: { name: uniqueName('gh'), type: 'GITHUB', token: TOKEN } });
      expect(token.statusCode, token.body).toBe(201);
      const applicationId = await create('application', {
        name: 'private-web',
        git_repository: source(gitServer.urlOf('private'), { git_token_id: token.json<{ id: string }>().id }),
        healthchecks: {},
      });
      const seenBefore = gitServer.seen.length;
      const answer = await commits('application', applicationId);
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json<{ results: CommitView[] }>().results).toHaveLength(3);
      expect(answer.body).not.toContain(TOKEN);
      expect(gitServer.seen.slice(seenBefore).some((request) => request.accepted && request.userName === 'x-access-token')).toBe(true);

      const wrong = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: { name: uniqueName('wrong'), type: 'GITHUB', token: 'ghp_WrongToken0000000000000000' } });
      const refusedId = await create('application', {
        name: 'refused-web',
        git_repository: source(gitServer.urlOf('private'), { git_token_id: wrong.json<{ id: string }>().id }),
        healthchecks: {},
      });
      const refused = expectErrorBody(await commits('application', refusedId), 400);
      expect(refused.message).toContain('refused the git token');
      expect(JSON.stringify(refused)).not.toContain('ghp_');

      const anonymous = await create('application', { name: 'anonymous-web', git_repository: source(gitServer.urlOf('private')), healthchecks: {} });
      expect(expectErrorBody(await commits('application', anonymous), 400).message).toContain('requires authentication');
    });

    it('answers 400 for a service not built from git, a missing repository or branch and an unreachable host; 404 elsewhere', async () => {
      const registry = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/containerRegistry`, payload: { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' } });
      const imageJob = await create('job', {
        name: 'nightly',
        source: { image: { image_name: 'busybox', tag: '1', registry_id: registry.json<{ id: string }>().id } },
        schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
        healthchecks: {},
      });
      expect(expectErrorBody(await commits('job', imageJob), 400).message).toContain('not built from a git repository');

      const missing = await create('application', { name: 'missing', git_repository: source(gitServer.urlOf('nowhere')), healthchecks: {} });
      expect(expectErrorBody(await commits('application', missing), 400).message).toContain('was not found');
      const branchless = await create('application', { name: 'branchless', git_repository: source(gitServer.urlOf('shop'), { branch: 'release' }), healthchecks: {} });
      expect(expectErrorBody(await commits('application', branchless), 400).message).toContain('branch "release" does not exist');
      const unreachable = await create('application', { name: 'unreachable', git_repository: source(deadUrl), healthchecks: {} });
      expect(expectErrorBody(await commits('application', unreachable), 400).message).toContain('unreachable');

      // A job's id is no application; another organization's service is not found.
      expectErrorBody(await commits('application', imageJob), 404);
      expectErrorBody(await commits('application', newId()), 404);
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/application/${missing}/commit` }), 404);
    });
  },
  { gitAllowPrivateHosts: true },
);
