import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readJson, writeJson } from '../src/db/db.json.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { AppError } from '../src/lib/errors.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * A git source is held to the build's URL rules when it is written (issue 21, item 6a): an http:// repository URL is
 * refused at creation and on edit, by the same function (git/git-urls.ts) and with the same words as the build, the
 * message naming SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS; an installation that sets it accepts the URL. The repositories are
 * real ones on the test git server (http://127.0.0.1).
 */

const HTTP_REFUSAL =
  'url must use https:// (got "http://"); plain http:// is allowed only when the installation sets SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true';

let gitRoot = '';
let gitServer: TestGitServer;

beforeAll(async () => {
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-git-sources-'));
  await createBareRepository(gitRoot, 'shop', { main: ['Dockerfile', 'infra/main.tf', 'chart/Chart.yaml'] });
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
});

afterAll(async () => {
  await gitServer.close();
  await rm(gitRoot, { recursive: true, force: true });
});

interface Place {
  owner: TestUser;
  environmentId: string;
}

async function placeIn(app: TestApp): Promise<Place> {
  const { owner, organizationId } = await app.signUpWithOrganization();
  const project = await app.call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
  expect(project.statusCode, project.body).toBe(200);
  const cluster = await app.call(owner.auth, {
    method: 'POST',
    url: `/organization/${organizationId}/cluster`,
    payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
  });
  expect(cluster.statusCode, cluster.body).toBe(201);
  const environment = await app.call(owner.auth, {
    method: 'POST',
    url: `/project/${project.json<{ id: string }>().id}/environment`,
    payload: { name: uniqueName('env'), cluster: cluster.json<{ id: string }>().id },
  });
  expect(environment.statusCode, environment.body).toBe(201);
  return { owner, environmentId: environment.json<{ id: string }>().id };
}

/** One body per kind built from git, with the field that carries its git source. */
function gitBodies(url: string): Array<{ collection: string; body: Record<string, unknown>; field: string }> {
  const git = { url, provider: 'GITHUB', branch: 'main' };
  return [
    { collection: 'application', body: { name: 'web', git_repository: git, healthchecks: {} }, field: '/git_repository/url' },
    {
      collection: 'job',
      body: { name: 'migrate', source: { docker: { git_repository: git } }, schedule: { on_start: { arguments: ['migrate'] } }, healthchecks: {} },
      field: '/source/docker/git_repository/url',
    },
    { collection: 'helm', body: { name: 'charts', source: { git_repository: { ...git, root_path: '/chart' } } }, field: '/source/git_repository/url' },
    { collection: 'terraform', body: { name: 'infra', terraform_files_source: { git_repository: { ...git, root_path: '/infra' } } }, field: '/terraform_files_source/git_repository/url' },
  ];
}

describeEachDatabase('git sources under the default rules (https:// only)', (ctx) => {
  it('refuses an http:// repository at creation for every kind built from git, naming the setting, and writes nothing', async () => {
    const { owner, environmentId } = await placeIn(ctx());
    for (const { collection, body, field } of gitBodies(gitServer.urlOf('shop'))) {
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/environment/${environmentId}/${collection}`, payload: body }), 400);
      expect(refused.message, collection).toBe(HTTP_REFUSAL);
      expect(refused.details, collection).toEqual([{ field, message: 'must be an https:// URL' }]);
      const listed = await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}/${collection}` });
      expect(listed.json<{ results: unknown[] }>().results, collection).toEqual([]);
    }
    expect(await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', environmentId).execute()).toEqual([]);
  });

  it('refuses it with the words of the build: the git access the agent checks out with says the same', async () => {
    const url = gitServer.urlOf('shop');
    const build = createSystemGitAccess({ allowPrivateHosts: false });
    const destination = await mkdtemp(path.join(tmpdir(), 'slipway-git-sources-checkout-'));
    try {
      const atBuild = await build.checkout({ url, destination }).catch((error: unknown) => error);
      expect(atBuild).toBeInstanceOf(AppError);
      expect((atBuild as AppError).message).toBe(HTTP_REFUSAL);
    } finally {
      await rm(destination, { recursive: true, force: true });
    }
    expect(() => build.checkUrl(url)).toThrow(HTTP_REFUSAL);
  });

  it('refuses an edit to an http:// URL and keeps the stored source; an edit that keeps the URL is not checked again', async () => {
    const { owner, environmentId } = await placeIn(ctx());
    const httpsUrl = 'https://git.example.com/acme/shop.git';
    const created = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/environment/${environmentId}/application`,
      payload: { name: 'web', git_repository: { url: httpsUrl, provider: 'GITHUB', branch: 'main' }, healthchecks: {} },
    });
    expect(created.statusCode, created.body).toBe(201);
    const applicationId = created.json<{ id: string }>().id;

    const edit = (payload: Record<string, unknown>) => ctx().call(owner.auth, { method: 'PUT', url: `/application/${applicationId}`, payload: { healthchecks: {}, ...payload } });
    const refused = expectErrorBody(await edit({ git_repository: { url: gitServer.urlOf('shop'), provider: 'GITHUB', branch: 'main' } }), 400);
    expect(refused.message).toBe(HTTP_REFUSAL);
    expect(refused.details).toEqual([{ field: '/git_repository/url', message: 'must be an https:// URL' }]);
    const stored = await ctx().call(owner.auth, { method: 'GET', url: `/application/${applicationId}` });
    expect(stored.json<{ git_repository: { url: string } }>().git_repository.url).toBe(httpsUrl);

    // A source stored before the rule (or under another setting) is not checked again while an edit leaves it alone.
    const row = await ctx().database.db.selectFrom('services').select('settings').where('id', '=', applicationId).executeTakeFirstOrThrow();
    const settings = readJson<{ git_repository: { url: string } }>(row.settings);
    settings.git_repository.url = gitServer.urlOf('shop');
    await ctx().database.db.updateTable('services').set({ settings: writeJson(settings) }).where('id', '=', applicationId).execute();
    const renamed = await edit({ name: 'storefront' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json<{ name: string; git_repository: { url: string } }>()).toMatchObject({ name: 'storefront', git_repository: { url: gitServer.urlOf('shop') } });
  });
});

describeEachDatabase(
  'git sources where SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true',
  (ctx) => {
    it('accepts an http:// repository for every kind built from git', async () => {
      const { owner, environmentId } = await placeIn(ctx());
      for (const { collection, body } of gitBodies(gitServer.urlOf('shop'))) {
        const created = await ctx().call(owner.auth, { method: 'POST', url: `/environment/${environmentId}/${collection}`, payload: body });
        expect(created.statusCode, `${collection}: ${created.body}`).toBe(201);
      }
    });
  },
  { gitAllowPrivateHosts: true },
);
