import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dockerfileSummary } from '../src/modules/environments/environments.checks.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { startOciRegistry, type TestOciRegistry } from './support/oci-registry-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The checks a form makes before creating a service in an environment (docs/service-extras.md "Environment checks"):
 * an image tag in a registry, a Dockerfile, files and a Helm chart on a branch of a repository — each read as a
 * deployment reads it (the registry's stored login, the git token), with bad input, unreadable sources and other
 * organizations' ids refused.
 */

const TOKEN = 'ghp_checks_token';
const PASSWORD = 'registry-secret';
const DOCKERFILE = [
  '# syntax=docker/dockerfile:1',
  'ARG NODE_VERSION=24',
  'FROM --platform=$BUILDPLATFORM node:${NODE_VERSION} AS build',
  'ARG NPM_TOKEN \\',
  '    BUILD_ENV=production',
  'RUN npm ci',
  'FROM build AS test',
  'FROM gcr.io/distroless/nodejs24',
  'COPY --from=build /app /app',
  '',
].join('\n');
const CHART = 'apiVersion: v2\nname: webapp\nversion: 1.2.3\nappVersion: "4.5"\n';

/** A bare repository `<root>/<name>.git` whose `main` holds exactly these files. */
function createRepository(root: string, name: string, files: Record<string, string>, work: string): void {
  const env = { ...process.env, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'F', GIT_AUTHOR_EMAIL: 'f@example.com', GIT_COMMITTER_NAME: 'F', GIT_COMMITTER_EMAIL: 'f@example.com' };
  const tree = path.join(work, name);
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', tree], { env });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
    writeFileSync(path.join(tree, file), content);
  }
  execFileSync('git', ['add', '-A'], { cwd: tree, env });
  execFileSync('git', ['commit', '--quiet', '-m', 'fixture'], { cwd: tree, env });
  execFileSync('git', ['clone', '--quiet', '--bare', tree, path.join(root, `${name}.git`)], { env });
}

let work: string;
let gitServer: TestGitServer;
let registry: TestOciRegistry;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'slipway-checks-'));
  const root = path.join(work, 'repositories');
  await mkdir(root);
  await writeFile(path.join(work, 'outside.txt'), 'not in any repository');
  createRepository(root, 'shop', { Dockerfile: DOCKERFILE, 'docker/api.Dockerfile': 'FROM alpine:3.20\n', 'charts/webapp/Chart.yaml': CHART, 'charts/webapp/values.yaml': 'replicas: 2\n', 'charts/broken/Chart.yaml': 'name: [\n', 'README.md': '# shop\n' }, work);
  createRepository(root, 'private', { Dockerfile: 'FROM scratch\n' }, work);
  gitServer = await startGitServer({ root, privateRepositories: { private: TOKEN } });
  registry = await startOciRegistry({ mode: 'basic', username: 'robot', password: PASSWORD, repositories: { 'acme/api': ['1.0.0', '1.1.0'] } });
});

afterAll(async () => {
  await gitServer?.close();
  await registry?.close();
  await rm(work, { recursive: true, force: true });
});

it('reads the build arguments and base images of a Dockerfile', () => {
  expect(dockerfileSummary(DOCKERFILE)).toEqual({ args: ['NODE_VERSION', 'NPM_TOKEN', 'BUILD_ENV'], images: ['node:${NODE_VERSION}', 'gcr.io/distroless/nodejs24'] });
  expect(dockerfileSummary('FROM scratch\n')).toEqual({ args: [], images: [] });
});

describeEachDatabase(
  'environment checks',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let environmentId: string;
    let registryId: string;
    let gitTokenId: string;

    async function check(operation: string, payload: Record<string, unknown>, auth = owner.auth, environment = environmentId) {
      return ctx().call(auth, { method: 'POST', url: `/environment/${environment}/${operation}`, payload });
    }

    async function ok<T>(operation: string, payload: Record<string, unknown>): Promise<T> {
      const response = await check(operation, payload);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<T>();
    }

    const shop = (extra: Record<string, unknown> = {}) => ({ url: gitServer.urlOf('shop'), provider: 'GITHUB', branch: 'main', ...extra });

    beforeAll(async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const created = async (url: string, payload: Record<string, unknown>, status = 201) => {
        const response = await ctx().call(owner.auth, { method: 'POST', url, payload });
        expect(response.statusCode, response.body).toBe(status);
        return response.json<{ id: string }>().id;
      };
      const projectId = await created(`/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
      const clusterId = await created(`/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      environmentId = await created(`/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId });
      registryId = await created(`/organization/${organizationId}/containerRegistry`, { name: uniqueName('registry'), kind: 'GENERIC_CR', url: registry.url, config: { username: 'robot', password: PASSWORD } });
      gitTokenId = await created(`/organization/${organizationId}/gitToken`, { name: uniqueName('token'), type: 'GITHUB', token: TOKEN });
    });

    it('says whether an image tag is in the registry', async () => {
      expect(await ok('checkContainerImage', { registry_id: registryId, image_name: 'acme/api', tag: '1.1.0' })).toEqual({ registry_id: registryId, image_name: 'acme/api', tag: '1.1.0', exists: true });
      expect(await ok('checkContainerImage', { registry_id: registryId, image_name: 'acme/api', tag: '9.9.9' })).toMatchObject({ exists: false });
      expectErrorBody(await check('checkContainerImage', { registry_id: registryId, image_name: 'Acme/API', tag: '1.0.0' }), 400);
      expectErrorBody(await check('checkContainerImage', { registry_id: registryId, image_name: 'acme/api' }), 400);
      expectErrorBody(await check('checkContainerImage', { registry_id: crypto.randomUUID(), image_name: 'acme/api', tag: '1.0.0' }), 404);
    });

    it('reads a Dockerfile of a branch, with the git token for a private repository', async () => {
      const answer = await ok<Record<string, unknown>>('checkDockerfile', { git_repository: shop(), dockerfile_path: 'Dockerfile' });
      expect(answer).toMatchObject({ dockerfile_path: 'Dockerfile', arg: ['NODE_VERSION', 'NPM_TOKEN', 'BUILD_ENV'], repositories: ['node:${NODE_VERSION}', 'gcr.io/distroless/nodejs24'] });
      expect(answer.git_repository).toMatchObject({ url: gitServer.urlOf('shop'), branch: 'main', root_path: '/' });
      expect(await ok('checkDockerfile', { git_repository: shop({ root_path: '/docker' }), dockerfile_path: 'api.Dockerfile' })).toMatchObject({ repositories: ['alpine:3.20'] });

      const missing = expectErrorBody(await check('checkDockerfile', { git_repository: shop(), dockerfile_path: 'nope/Dockerfile' }), 400);
      expect(missing.details).toEqual([{ field: '/dockerfile_path', message: expect.any(String) }]);
      expectErrorBody(await check('checkDockerfile', { git_repository: shop(), dockerfile_path: '../outside.txt' }), 400);
      expectErrorBody(await check('checkDockerfile', { git_repository: shop({ branch: 'no-such-branch' }), dockerfile_path: 'Dockerfile' }), 400);

      const privateSource = { url: gitServer.urlOf('private'), provider: 'GITHUB', branch: 'main' };
      expectErrorBody(await check('checkDockerfile', { git_repository: privateSource, dockerfile_path: 'Dockerfile' }), 400);
      expect(await ok('checkDockerfile', { git_repository: { ...privateSource, git_token_id: gitTokenId }, dockerfile_path: 'Dockerfile' })).toMatchObject({ arg: [], repositories: [] });
      expectErrorBody(await check('checkDockerfile', { git_repository: { ...privateSource, git_token_id: crypto.randomUUID() }, dockerfile_path: 'Dockerfile' }), 404);
    });

    it('says which files exist on a branch', async () => {
      const answer = await ok<{ files: unknown[] }>('checkGitFile', { git_repository: shop(), files: ['README.md', 'docker/api.Dockerfile', 'missing.txt', 'docker', 'charts/webapp/Chart.yaml'] });
      expect(answer.files).toEqual([
        { path: 'README.md', exists: true },
        { path: 'docker/api.Dockerfile', exists: true },
        { path: 'missing.txt', exists: false },
        { path: 'docker', exists: false },
        { path: 'charts/webapp/Chart.yaml', exists: true },
      ]);
      expect((await ok<{ files: unknown[] }>('checkGitFile', { git_repository: shop({ root_path: '/charts/webapp' }), files: ['values.yaml'] })).files).toEqual([{ path: 'values.yaml', exists: true }]);
      const dotted = expectErrorBody(await check('checkGitFile', { git_repository: shop(), files: ['README.md', 'a/../../outside.txt'] }), 400);
      expect(dotted.details?.[0]?.field).toBe('/files/1');
      expectErrorBody(await check('checkGitFile', { git_repository: shop(), files: [] }), 400);
      expectErrorBody(await check('checkGitFile', { git_repository: { ...shop(), url: 'ftp://example.com/shop.git' }, files: ['README.md'] }), 400);
    });

    it('reads the Helm chart at a path of a branch', async () => {
      const answer = await ok<Record<string, unknown>>('checkHelmRepository', { git_repository: shop({ root_path: '/charts/webapp' }) });
      expect(answer).toMatchObject({ chart_name: 'webapp', chart_version: '1.2.3', app_version: '4.5', has_default_values: true });
      const none = expectErrorBody(await check('checkHelmRepository', { git_repository: shop({ root_path: '/docker' }) }), 400);
      expect(none.details?.[0]?.field).toBe('/git_repository/root_path');
      expectErrorBody(await check('checkHelmRepository', { git_repository: shop({ root_path: '/charts/broken' }) }), 400);
      expectErrorBody(await check('checkHelmRepository', { git_repository: shop({ root_path: '/../etc' }) }), 400);
    });

    it("refuses callers who may not create services, and other organizations' environments", async () => {
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      expectErrorBody(await check('checkGitFile', { git_repository: shop(), files: ['README.md'] }, viewer.auth), 403);
      const outsider = await ctx().signUpWithOrganization();
      for (const operation of ['checkContainerImage', 'checkDockerfile', 'checkGitFile', 'checkHelmRepository']) {
        const response = await check(operation, { git_repository: shop(), files: ['README.md'], dockerfile_path: 'Dockerfile', registry_id: registryId, image_name: 'acme/api', tag: '1.0.0' }, outsider.owner.auth);
        expect([403, 404], operation).toContain(response.statusCode);
      }
      expectErrorBody(await check('checkGitFile', { git_repository: shop(), files: ['README.md'] }, owner.auth, crypto.randomUUID()), 404);
    });
  },
  { gitAllowPrivateHosts: true },
);
