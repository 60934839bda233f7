import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HELM_NOT_INSTALLED_MESSAGE } from '../src/modules/services/services.helm-extras.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * A Helm chart's links and Kubernetes Services, a chart's default values before a service exists (from git, and from
 * a Helm repository through the control plane's helm — ~/.cache/slipway/helm-4.1.4/helm, scripts/helm-binary.sh — or
 * a 400 without one), and getIngressDeploymentStatus, whose path starts with a parameter, beside its neighbours
 * (docs/service-extras.md "Helm charts", "Ingress status").
 */

const HELM = process.env.SLIPWAY_HELM_BINARY ?? path.join(homedir(), '.cache/slipway/helm-4.1.4/helm');
const VALUES = '# defaults of webapp\nreplicaCount: 1\ngreeting: hello\n';
const LOGIN = { username: 'reader', password: 'chart-secret' };

let work: string;
let charts: Server;
let chartsUrl: string;
let gitServer: TestGitServer;

/** A chart repository as `helm repo index` writes it, behind Basic auth. */
async function startChartRepository(directory: string): Promise<Server> {
  const expected = `Basic ${Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString('base64')}`;
  const server = createServer((request, response) => {
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    const file = path.join(directory, path.basename(new URL(request.url ?? '/', 'http://localhost').pathname));
    stat(file).then(
      () => createReadStream(file).pipe(response.writeHead(200)),
      () => response.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'slipway-helm-extras-'));
  const chart = path.join(work, 'tree', 'charts', 'webapp');
  await mkdir(path.join(chart, 'templates'), { recursive: true });
  await writeFile(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: webapp\nversion: 0.1.0\n');
  await writeFile(path.join(chart, 'values.yaml'), VALUES);
  await writeFile(path.join(chart, 'templates', 'configmap.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n');
  await mkdir(path.join(work, 'tree', 'charts', 'bare'), { recursive: true });
  await writeFile(path.join(work, 'tree', 'charts', 'bare', 'Chart.yaml'), 'apiVersion: v2\nname: bare\nversion: 1.0.0\n');

  const repository = path.join(work, 'repository');
  await mkdir(repository);
  const helmHome = { ...process.env, HELM_CACHE_HOME: path.join(work, 'home'), HELM_CONFIG_HOME: path.join(work, 'home'), HELM_DATA_HOME: path.join(work, 'home') };
  execFileSync(HELM, ['package', chart, '--destination', repository], { env: helmHome, stdio: 'pipe' });
  execFileSync(HELM, ['repo', 'index', repository], { env: helmHome, stdio: 'pipe' });
  charts = await startChartRepository(repository);
  chartsUrl = `http://127.0.0.1:${(charts.address() as AddressInfo).port}`;

  const gitEnv = { ...process.env, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'F', GIT_AUTHOR_EMAIL: 'f@example.com', GIT_COMMITTER_NAME: 'F', GIT_COMMITTER_EMAIL: 'f@example.com' };
  const tree = path.join(work, 'tree');
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', tree], { env: gitEnv });
  execFileSync('git', ['add', '-A'], { cwd: tree, env: gitEnv });
  execFileSync('git', ['commit', '--quiet', '-m', 'charts'], { cwd: tree, env: gitEnv });
  await mkdir(path.join(work, 'git'));
  execFileSync('git', ['clone', '--quiet', '--bare', tree, path.join(work, 'git', 'charts.git')], { env: gitEnv });
  gitServer = await startGitServer({ root: path.join(work, 'git'), privateRepositories: {} });
});

afterAll(async () => {
  await gitServer?.close();
  await new Promise<void>((resolve) => (charts === undefined ? resolve() : charts.close(() => resolve())));
  await rm(work, { recursive: true, force: true });
});

interface World {
  owner: TestUser;
  organizationId: string;
  environmentId: string;
  repositoryId: string;
}

async function createWorld(testApp: TestApp): Promise<World> {
  const { owner, organizationId } = await testApp.signUpWithOrganization();
  const created = async (url: string, payload: Record<string, unknown>, status = 201) => {
    const response = await testApp.call(owner.auth, { method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  };
  const projectId = await created(`/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
  const clusterId = await created(`/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
  const environmentId = await created(`/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId });
  const repositoryId = await created(`/organization/${organizationId}/helmRepository`, { name: uniqueName('charts'), kind: 'HTTPS', url: chartsUrl, config: LOGIN });
  return { owner, organizationId, environmentId, repositoryId };
}

describeEachDatabase(
  'helm extras',
  (ctx) => {
    let world: World;

    async function ok<T>(method: 'GET' | 'POST', url: string, payload: unknown, status: number, auth = world.owner.auth): Promise<T> {
      const response = await ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
      expect(response.statusCode, response.body).toBe(status);
      return response.json<T>();
    }

    const helmBody = (ports: unknown[]) => ({
      name: uniqueName('chart'),
      source: { helm_repository: { repository: world.repositoryId, chart_name: 'webapp', chart_version: '0.1.0' } },
      ports,
    });

    beforeAll(async () => {
      world = await createWorld(ctx());
    });

    it("lists a chart's links and the Kubernetes Services its ports declare", async () => {
      const ports = [
        { service_name: 'web', internal_port: 8080, protocol: 'HTTP', name: 'http' },
        { service_name: 'web', internal_port: 9090, protocol: 'GRPC', name: 'grpc', is_default: true },
        { service_name: 'metrics', internal_port: 9100, protocol: 'HTTP', name: 'metrics' },
      ];
      const helm = await ok<{ id: string }>('POST', `/environment/${world.environmentId}/helm`, helmBody(ports), 201);
      const links = await ok<{ results: Array<Record<string, unknown>> }>('GET', `/helm/${helm.id}/link`, undefined, 200);
      expect(links.results).toHaveLength(1);
      expect(links.results[0]).toMatchObject({ service_id: helm.id, service_type: 'HELM', internal_port: 9090, is_platform_domain: true, is_default: true });
      expect(String(links.results[0]?.url)).toMatch(/^http:\/\/[a-z0-9-]+\.localhost(:\d+)?$/);

      const services = await ok<{ results: unknown[] }>('GET', `/helm/${helm.id}/listServices`, undefined, 200);
      expect(services.results).toEqual([
        { metadata: { name: 'web' }, service_spec: { ports: [{ name: 'http', port: 8080 }, { name: 'grpc', port: 9090 }], selectors: [] } },
        { metadata: { name: 'metrics' }, service_spec: { ports: [{ name: 'metrics', port: 9100 }], selectors: [] } },
      ]);

      const portless = await ok<{ id: string }>('POST', `/environment/${world.environmentId}/helm`, helmBody([]), 201);
      expect(await ok('GET', `/helm/${portless.id}/link`, undefined, 200)).toEqual({ results: [] });
      expect(await ok('GET', `/helm/${portless.id}/listServices`, undefined, 200)).toEqual({ results: [] });
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/helm/${crypto.randomUUID()}/link` }), 404);
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/helm/${world.environmentId}/listServices` }), 404);
    });

    it("answers a chart's default values from a Helm repository and from git", async () => {
      const url = `/environment/${world.environmentId}/helmDefaultValues`;
      const fromRepository = await ctx().call(world.owner.auth, {
        method: 'POST',
        url,
        payload: { source: { helm_repository: { repository: world.repositoryId, chart_name: 'webapp', chart_version: '0.1.0' } } },
      });
      expect(fromRepository.statusCode, fromRepository.body).toBe(201);
      expect(fromRepository.headers['content-type']).toMatch(/^text\/plain/);
      // helm ends what it prints with a line break of its own.
      expect(fromRepository.body.trimEnd()).toBe(VALUES.trimEnd());

      const git = { url: gitServer.urlOf('charts'), provider: 'GITHUB', branch: 'main' };
      const fromGit = await ctx().call(world.owner.auth, { method: 'POST', url, payload: { source: { git_repository: { ...git, root_path: '/charts/webapp' } } } });
      expect(fromGit.statusCode, fromGit.body).toBe(201);
      expect(fromGit.body).toBe(VALUES);
      const bare = await ctx().call(world.owner.auth, { method: 'POST', url, payload: { source: { git_repository: { ...git, root_path: '/charts/bare' } } } });
      expect(bare.statusCode, bare.body).toBe(201);
      expect(bare.body).toBe('');

      const refusals: Array<[unknown, number]> = [
        [{ source: { helm_repository: { repository: world.repositoryId, chart_name: 'webapp', chart_version: '9.9.9' } } }, 400],
        [{ source: { helm_repository: { repository: world.repositoryId, chart_name: '--debug', chart_version: '0.1.0' } } }, 400],
        [{ source: { helm_repository: { repository: crypto.randomUUID(), chart_name: 'webapp', chart_version: '0.1.0' } } }, 404],
        [{ source: { git_repository: { ...git, root_path: '/charts' } } }, 400],
        [{ source: {} }, 400],
        [{ source: { git_repository: git, helm_repository: { repository: world.repositoryId, chart_name: 'webapp', chart_version: '0.1.0' } } }, 400],
      ];
      for (const [payload, status] of refusals) {
        const body = expectErrorBody(await ctx().call(world.owner.auth, { method: 'POST', url, payload: payload as Record<string, unknown> }), status);
        expect(body.message).not.toContain(LOGIN.password);
      }
      const outsider = await ctx().signUpWithOrganization();
      const response = await ctx().call(outsider.owner.auth, { method: 'POST', url, payload: { source: { git_repository: git } } });
      expect([403, 404]).toContain(response.statusCode);
    });

    it('answers the state of a service route on a path that starts with a parameter, beside its neighbours', async () => {
      const applicationBody = (ports: unknown[]) => ({ name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports });
      const routed = await ok<{ id: string }>('POST', `/environment/${world.environmentId}/application`, applicationBody([{ internal_port: 8080, publicly_accessible: true }]), 201);
      const internal = await ok<{ id: string }>('POST', `/environment/${world.environmentId}/application`, applicationBody([{ internal_port: 8080, publicly_accessible: false }]), 201);
      const status = await ok<{ state: string }>('GET', `/application/${routed.id}/status`, undefined, 200);
      expect(await ok('GET', `/APPLICATION/${routed.id}/ingressDeploymentStatus`, undefined, 200)).toEqual({ status: status.state });
      expect(await ok('GET', `/APPLICATION/${internal.id}/ingressDeploymentStatus`, undefined, 200)).toEqual({ status: 'STOPPED' });
      const chart = await ok<{ id: string }>('POST', `/environment/${world.environmentId}/helm`, helmBody([{ service_name: 'web', internal_port: 80, protocol: 'HTTP' }]), 201);
      expect(await ok<{ status: string }>('GET', `/HELM/${chart.id}/ingressDeploymentStatus`, undefined, 200)).toHaveProperty('status');

      // A service of another type, an unknown type, an unknown id.
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/CONTAINER/${routed.id}/ingressDeploymentStatus` }), 404);
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/DATABASE/${routed.id}/ingressDeploymentStatus` }), 400);
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/APPLICATION/${crypto.randomUUID()}/ingressDeploymentStatus` }), 404);
      const outsider = await ctx().signUpWithOrganization();
      expect([403, 404]).toContain((await ctx().call(outsider.owner.auth, { method: 'GET', url: `/APPLICATION/${routed.id}/ingressDeploymentStatus` })).statusCode);

      // The neighbours still answer as before.
      expect((await ctx().call(world.owner.auth, { method: 'GET', url: `/application/${routed.id}` })).statusCode).toBe(200);
      expect((await ctx().call(world.owner.auth, { method: 'GET', url: `/application/${routed.id}/status` })).statusCode).toBe(200);
      expect((await ctx().call(world.owner.auth, { method: 'GET', url: `/helm/${chart.id}/link` })).statusCode).toBe(200);
      expect((await ctx().call(world.owner.auth, { method: 'GET', url: `/environment/${world.environmentId}/application` })).statusCode).toBe(200);
      expect((await ctx().call(world.owner.auth, { method: 'GET', url: `/organization/${world.organizationId}` })).statusCode).toBe(200);
      // The kinds' lower-case paths have no such operation: the router falls back to this route, whose types are upper case.
      expectErrorBody(await ctx().call(world.owner.auth, { method: 'GET', url: `/application/${routed.id}/ingressDeploymentStatus` }), 400);
    });
  },
  { gitAllowPrivateHosts: true, helmBinary: HELM },
);

describeEachDatabase(
  'helm default values without helm on the control plane',
  (ctx) => {
    it('answers 400 saying helm is missing, and still reads charts in git', async () => {
      const world = await createWorld(ctx());
      const url = `/environment/${world.environmentId}/helmDefaultValues`;
      const payload = { source: { helm_repository: { repository: world.repositoryId, chart_name: 'webapp', chart_version: '0.1.0' } } };
      const body = expectErrorBody(await ctx().call(world.owner.auth, { method: 'POST', url, payload }), 400);
      expect(body.message).toBe(HELM_NOT_INSTALLED_MESSAGE);
      const fromGit = await ctx().call(world.owner.auth, { method: 'POST', url, payload: { source: { git_repository: { url: gitServer.urlOf('charts'), provider: 'GITHUB', root_path: '/charts/webapp' } } } });
      expect(fromGit.statusCode, fromGit.body).toBe(201);
    });
  },
  { gitAllowPrivateHosts: true, helmBinary: '/nonexistent/slipway-test/helm' },
);
