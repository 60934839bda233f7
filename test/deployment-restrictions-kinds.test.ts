import { beforeAll, expect, it } from 'vitest';
import { createDeploymentRestrictionsService } from '../src/modules/deployment-restrictions/deployment-restrictions.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Deployment restrictions of jobs, Helm charts and Terraform modules (issue 24 part 3): the reference's Job, Helm and
 * Terraform Deployment Restriction operations, served by the same generic routes as the application's, on both
 * databases; a push to such a service is decided with its own restrictions.
 */

const git = { url: 'https://github.com/acme/mono', provider: 'GITHUB' };

describeEachDatabase('deployment restrictions of jobs, Helm charts and Terraform modules', (ctx) => {
  let owner: TestUser;
  let environmentId: string;
  const services: Record<'job' | 'helm' | 'terraform', string> = { job: '', helm: '', terraform: '' };

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
    const response = await call(method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  beforeAll(async () => {
    let organizationId: string;
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId }, 201)).id;
    services.job = (
      await ok<{ id: string }>('POST', `/environment/${environmentId}/job`, {
        name: uniqueName('migrate'),
        source: { docker: { git_repository: git, dockerfile_path: 'jobs/Dockerfile' } },
        schedule: { on_start: {} },
        healthchecks: {},
      }, 201)
    ).id;
    services.helm = (await ok<{ id: string }>('POST', `/environment/${environmentId}/helm`, { name: uniqueName('chart'), source: { git_repository: { ...git, root_path: '/charts/app' } } }, 201)).id;
    services.terraform = (
      await ok<{ id: string }>('POST', `/environment/${environmentId}/terraform`, { name: uniqueName('infra'), terraform_files_source: { git_repository: { ...git, root_path: '/infra' } } }, 201)
    ).id;
  });

  it('creates (201), lists, edits and deletes (204) the restrictions of each kind', async () => {
    for (const [item, serviceId] of Object.entries(services)) {
      const base = `/${item}/${serviceId}/deploymentRestriction`;
      const created = await ok<{ id: string }>('POST', base, { mode: 'MATCH', type: 'PATH', value: ` ${item}/** ` }, 201);
      expect(created).toMatchObject({ mode: 'MATCH', type: 'PATH', value: `${item}/**` });
      expect((await ok<{ results: { id: string }[] }>('GET', base, undefined, 200)).results.map((entry) => entry.id)).toEqual([created.id]);
      expect(await ok('PUT', `${base}/${created.id}`, { mode: 'EXCLUDE', type: 'PATH', value: '**/*.md' }, 200)).toMatchObject({ id: created.id, mode: 'EXCLUDE', value: '**/*.md' });
      const removed = await call('DELETE', `${base}/${created.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expect((await ok<{ results: unknown[] }>('GET', base, undefined, 200)).results).toEqual([]);
      expectErrorBody(await call('DELETE', `${base}/${created.id}`), 404);
      expectErrorBody(await call('PUT', `${base}/${created.id}`, { mode: 'MATCH', type: 'PATH', value: 'x' }), 404);
    }
  });

  it('refuses bad globs (400), duplicates (409, one winner when racing), other kinds and other organizations (404)', async () => {
    const base = `/helm/${services.helm}/deploymentRestriction`;
    for (const body of [{ mode: 'MATCH', type: 'PATH', value: '/abs/**' }, { mode: 'MATCH', type: 'PATH', value: 'a/../b' }, { mode: 'MATCH', type: 'BRANCH', value: 'x' }, { mode: 'MATCH', type: 'PATH' }]) {
      expectErrorBody(await call('POST', base, body), 400);
    }
    const body = { mode: 'EXCLUDE', type: 'PATH', value: `${uniqueName('docs')}/**` };
    const answers = await Promise.all([1, 2, 3].map(() => call('POST', `/terraform/${services.terraform}/deploymentRestriction`, body)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    for (const answer of answers.filter((item) => item.statusCode === 409)) expectErrorBody(answer, 409);

    // Each path answers for its own kind only.
    expectErrorBody(await call('GET', `/job/${services.helm}/deploymentRestriction`), 404);
    expectErrorBody(await call('POST', `/helm/${services.terraform}/deploymentRestriction`, body), 404);
    expectErrorBody(await call('GET', `/terraform/${crypto.randomUUID()}/deploymentRestriction`), 404);
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await call('GET', `/job/${services.job}/deploymentRestriction`, undefined, stranger.owner.auth), 404);
    expectErrorBody(await call('POST', `/job/${services.job}/deploymentRestriction`, body, stranger.owner.auth), 404);
  });

  it("decides a push to a Helm chart, a job or a Terraform module with that service's restrictions", async () => {
    const decide = createDeploymentRestrictionsService({ db: ctx().database.db, clock: ctx().clock, services: { findService: async () => undefined } });
    for (const [item, serviceId] of Object.entries(services)) {
      await ok('POST', `/${item}/${serviceId}/deploymentRestriction`, { mode: 'MATCH', type: 'PATH', value: `${item}/**` }, 201);
      expect(await decide.pushDeploysService(serviceId, [`${item}/values.yaml`]), item).toBe(true);
      expect(await decide.pushDeploysService(serviceId, ['web/index.ts']), item).toBe(false);
      // A push whose changed paths are unknown deploys (deployment-restrictions.rules.ts).
      expect(await decide.pushDeploysService(serviceId, []), item).toBe(true);
    }
  });
});
