import { beforeAll, describe, expect, it } from 'vitest';
import { globProblem, pushDeploys, type PathRestriction } from '../src/modules/deployment-restrictions/deployment-restrictions.rules.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Deployment restrictions (issue 8 part 3): include/exclude path globs deciding whether a git push deploys an
 * application — the rule itself, then the reference's four operations on both databases.
 */

const match = (value: string): PathRestriction => ({ mode: 'MATCH', value });
const exclude = (value: string): PathRestriction => ({ mode: 'EXCLUDE', value });

describe('pushDeploys', () => {
  it('deploys every push when there is no restriction, and when the changed paths are unknown', () => {
    expect(pushDeploys([], ['README.md'])).toBe(true);
    expect(pushDeploys([exclude('**')], [])).toBe(true);
  });

  it('MATCH: deploys only when a changed path matches', () => {
    const restrictions = [match('services/api/**'), match('package.json')];
    expect(pushDeploys(restrictions, ['services/api/src/index.ts'])).toBe(true);
    expect(pushDeploys(restrictions, ['package.json'])).toBe(true);
    expect(pushDeploys(restrictions, ['services/web/index.ts', 'docs/a.md'])).toBe(false);
    expect(pushDeploys(restrictions, ['/services/api/x.ts'])).toBe(true);
  });

  it('EXCLUDE: skips pushes that change nothing but excluded paths', () => {
    const restrictions = [exclude('docs/**'), exclude('**/*.md')];
    expect(pushDeploys(restrictions, ['docs/guide/intro.txt', 'README.md', 'src/README.md'])).toBe(false);
    expect(pushDeploys(restrictions, ['docs/a.txt', 'src/index.ts'])).toBe(true);
    expect(pushDeploys([exclude('.github/**')], ['.github/workflows/ci.yml'])).toBe(false);
  });

  it('both: a path counts when it matches an include and no exclude', () => {
    const restrictions = [match('src/**'), exclude('src/**/*.test.ts')];
    expect(pushDeploys(restrictions, ['src/a.test.ts', 'src/lib/b.test.ts'])).toBe(false);
    expect(pushDeploys(restrictions, ['src/a.test.ts', 'src/a.ts'])).toBe(true);
    expect(pushDeploys(restrictions, ['lib/a.ts'])).toBe(false);
    expect(pushDeploys([match('src/{api,web}/*.ts')], ['src/web/x.ts'])).toBe(true);
  });

  it('refuses globs that cannot be restrictions', () => {
    expect(globProblem('src/**')).toBeUndefined();
    for (const bad of ['/src/**', '../x/**', 'a/./b', 'src/[abc', 'a(b']) expect(globProblem(bad), bad).toBeDefined();
  });
});

describeEachDatabase('deployment restrictions', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let environmentId: string;
  let applicationId: string;

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
    const response = await call(method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  const rows = () => ctx().database.db.selectFrom('service_deployment_restrictions').selectAll().orderBy('id').execute();

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId }, 201)).id;
    applicationId = (
      await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, { name: uniqueName('api'), git_repository: { url: 'https://github.com/acme/mono', provider: 'GITHUB' }, healthchecks: {} }, 201)
    ).id;
  });

  it('creates (201), lists, edits and deletes (204) restrictions', async () => {
    const created = await ok<{ id: string; mode: string; type: string; value: string; created_at: string }>(
      'POST',
      `/application/${applicationId}/deploymentRestriction`,
      { mode: 'EXCLUDE', type: 'PATH', value: ' docs/** ' },
      201,
    );
    expect(created).toMatchObject({ mode: 'EXCLUDE', type: 'PATH', value: 'docs/**' });
    const listed = await ok<{ results: { id: string }[] }>('GET', `/application/${applicationId}/deploymentRestriction`, undefined, 200);
    expect(listed.results.map((item) => item.id)).toEqual([created.id]);
    const edited = await ok('PUT', `/application/${applicationId}/deploymentRestriction/${created.id}`, { mode: 'MATCH', type: 'PATH', value: 'services/api/**' }, 200);
    expect(edited).toMatchObject({ id: created.id, mode: 'MATCH', value: 'services/api/**' });
    const removed = await call('DELETE', `/application/${applicationId}/deploymentRestriction/${created.id}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expectErrorBody(await call('DELETE', `/application/${applicationId}/deploymentRestriction/${created.id}`), 404);
    expectErrorBody(await call('PUT', `/application/${applicationId}/deploymentRestriction/${created.id}`, { mode: 'MATCH', type: 'PATH', value: 'x' }), 404);
  });

  it('refuses bad globs, modes and types (400), duplicates (409, one winner when racing), and other kinds (404)', async () => {
    const before = await rows();
    for (const body of [
      { mode: 'EXCLUDE', type: 'PATH', value: '/abs/**' },
      { mode: 'EXCLUDE', type: 'PATH', value: 'src/[oops' },
      { mode: 'EXCLUDE', type: 'PATH', value: '   ' },
      { mode: 'EXCLUDE', type: 'PATH', value: '' },
      { mode: 'IGNORE', type: 'PATH', value: 'x' },
      { mode: 'MATCH', type: 'BRANCH', value: 'x' },
      { mode: 'MATCH', type: 'PATH', value: 'a\nb' },
      { mode: 'MATCH', type: 'PATH', value: 'x'.repeat(513) },
      { mode: 'MATCH', type: 'PATH' },
    ]) {
      expectErrorBody(await call('POST', `/application/${applicationId}/deploymentRestriction`, body), 400);
    }
    expect(await rows()).toEqual(before);

    const body = { mode: 'MATCH', type: 'PATH', value: `${uniqueName('dir')}/**` };
    const answers = await Promise.all([1, 2, 3].map(() => call('POST', `/application/${applicationId}/deploymentRestriction`, body)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    for (const answer of answers.filter((item) => item.statusCode === 409)) expectErrorBody(answer, 409);
    const other = await ok<{ id: string }>('POST', `/application/${applicationId}/deploymentRestriction`, { ...body, mode: 'EXCLUDE' }, 201);
    expectErrorBody(await call('PUT', `/application/${applicationId}/deploymentRestriction/${other.id}`, body), 409);

    const database = await ok<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: uniqueName('db'), type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' }, 201);
    expectErrorBody(await call('GET', `/application/${database.id}/deploymentRestriction`), 404);
    expectErrorBody(await call('POST', `/application/${crypto.randomUUID()}/deploymentRestriction`, body), 404);
  });

  it("decides a push with the application's stored restrictions, and removes them with the application", async () => {
    const app = await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/mono', provider: 'GITHUB' }, healthchecks: {} }, 201);
    await ok('POST', `/application/${app.id}/deploymentRestriction`, { mode: 'MATCH', type: 'PATH', value: 'web/**' }, 201);
    await ok('POST', `/application/${app.id}/deploymentRestriction`, { mode: 'EXCLUDE', type: 'PATH', value: '**/*.md' }, 201);
    const stored = (await rows()).filter((row) => row.service_id === app.id).map((row) => ({ mode: row.mode as 'MATCH' | 'EXCLUDE', value: row.value }));
    expect(pushDeploys(stored, ['web/README.md'])).toBe(false);
    expect(pushDeploys(stored, ['web/src/main.ts'])).toBe(true);
    expect(pushDeploys(stored, ['api/src/main.ts'])).toBe(false);
    const removed = await call('DELETE', `/application/${app.id}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await rows()).filter((row) => row.service_id === app.id)).toEqual([]);
  });
});
