import { expect, it } from 'vitest';
import { readListRevision } from '../src/db/db.list-revisions.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The variable listings and resolutions are answered from their last serialization while the organization's
 * `variables` revision is unchanged (src/http/list-answers.ts, migrations/0060_list_revisions.ts). What they show
 * comes from the variable rows, the rows of the environment's services (their built-ins) and the environment's name,
 * mode and cluster: each kind of change must show in the next answer, whether the API or anything else wrote it.
 * The project holds enough long variables that every answer here is kept (over SMALLEST_KEPT_BYTES), so a stale
 * kept answer would be what the test reads.
 */

interface ResolvedView {
  key: string;
  value?: string;
  hidden: boolean;
  scope: string;
}

interface VariableView {
  id: string;
  key: string;
  value?: string;
  scope: string;
}

const PROJECT_VARIABLES = 40;
const LONG_VALUE = 'v'.repeat(200);

describeEachDatabase('variable answers kept under their revision', (ctx) => {
  async function call(auth: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created<T>(auth: string, url: string, payload: Record<string, unknown>): Promise<T> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<T>();
  }

  async function world(): Promise<{ owner: TestUser; organizationId: string; projectId: string; environmentId: string; applicationId: string }> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const projectResponse = await call(owner.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('project') });
    expect(projectResponse.statusCode, projectResponse.body).toBe(200);
    const projectId = projectResponse.json<{ id: string }>().id;
    const cluster = await created<{ id: string }>(owner.auth, `/organization/${organizationId}/cluster`, {
      name: uniqueName('cluster'),
      region: 'eu-west-3',
      cloud_provider: 'AWS',
      kubernetes: 'MANAGED',
    });
    const environment = await created<{ id: string }>(owner.auth, `/project/${projectId}/environment`, { name: 'staging', mode: 'STAGING', cluster: cluster.id });
    for (let index = 0; index < PROJECT_VARIABLES; index += 1) {
      await created(owner.auth, `/project/${projectId}/environmentVariable`, { key: `SETTING_${index}`, value: LONG_VALUE });
    }
    const application = await created<{ id: string }>(owner.auth, `/environment/${environment.id}/application`, {
      name: 'shop-front',
      git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    return { owner, organizationId, projectId, environmentId: environment.id, applicationId: application.id };
  }

  async function resolvedOf(auth: string, url: string): Promise<Map<string, ResolvedView>> {
    const response = await call(auth, 'GET', url);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body.length).toBeGreaterThan(8 * 1024);
    return new Map(response.json<{ results: ResolvedView[] }>().results.map((entry) => [entry.key, entry]));
  }

  async function listedOf(auth: string, url: string): Promise<Map<string, VariableView>> {
    const response = await call(auth, 'GET', url);
    expect(response.statusCode, response.body).toBe(200);
    return new Map(response.json<{ results: VariableView[] }>().results.map((entry) => [entry.key, entry]));
  }

  it("shows each write through the API in the service's and the environment's answers at once", async () => {
    const { owner, projectId, environmentId, applicationId } = await world();
    const serviceResolved = `/application/${applicationId}/resolvedVariables`;
    const environmentResolved = `/environment/${environmentId}/resolvedVariables`;
    const serviceListed = `/application/${applicationId}/environmentVariable`;
    const first = await resolvedOf(owner.auth, serviceResolved);
    expect(first.get('SETTING_0')).toMatchObject({ value: LONG_VALUE, scope: 'PROJECT' });
    await resolvedOf(owner.auth, environmentResolved);
    await listedOf(owner.auth, serviceListed);

    await created(owner.auth, `/project/${projectId}/environmentVariable`, { key: 'ADDED_LATER', value: 'one' });
    expect((await resolvedOf(owner.auth, serviceResolved)).get('ADDED_LATER')).toMatchObject({ value: 'one', scope: 'PROJECT' });
    expect((await resolvedOf(owner.auth, environmentResolved)).get('ADDED_LATER')).toMatchObject({ value: 'one' });
    expect((await listedOf(owner.auth, serviceListed)).get('ADDED_LATER')).toMatchObject({ value: 'one' });

    const onEnvironment = await created<VariableView>(owner.auth, `/environment/${environmentId}/environmentVariable`, { key: 'ADDED_LATER', value: 'two' });
    expect((await resolvedOf(owner.auth, serviceResolved)).get('ADDED_LATER')).toMatchObject({ value: 'two', scope: 'ENVIRONMENT' });

    const onService = await created<VariableView>(owner.auth, `/application/${applicationId}/environmentVariable`, { key: 'ADDED_LATER', value: 'three' });
    expect((await resolvedOf(owner.auth, serviceResolved)).get('ADDED_LATER')).toMatchObject({ value: 'three', scope: 'APPLICATION' });
    // The environment does not see the service's own.
    expect((await resolvedOf(owner.auth, environmentResolved)).get('ADDED_LATER')).toMatchObject({ value: 'two', scope: 'ENVIRONMENT' });

    const removed = await call(owner.auth, 'DELETE', `/application/${applicationId}/environmentVariable/${onService.id}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await resolvedOf(owner.auth, serviceResolved)).get('ADDED_LATER')).toMatchObject({ value: 'two' });

    const edited = await call(owner.auth, 'PUT', `/environment/${environmentId}/environmentVariable/${onEnvironment.id}`, { key: 'ADDED_LATER', value: 'four' });
    expect(edited.statusCode, edited.body).toBe(200);
    expect((await resolvedOf(owner.auth, serviceResolved)).get('ADDED_LATER')).toMatchObject({ value: 'four' });
    expect((await listedOf(owner.auth, serviceListed)).get('ADDED_LATER')).toMatchObject({ value: 'four' });

    // A second service's built-in appears in the first one's answer.
    const worker = await created<{ id: string }>(owner.auth, `/environment/${environmentId}/application`, {
      name: 'billing-worker',
      git_repository: { url: 'https://github.com/acme/billing', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    expect((await resolvedOf(owner.auth, serviceResolved)).has('PLATFORM_APPLICATION_BILLING_WORKER_HOSTNAME')).toBe(true);
    const deleted = await call(owner.auth, 'DELETE', `/application/${worker.id}`);
    expect([200, 202, 204]).toContain(deleted.statusCode);
  });

  it('shows what else writes: a value changed in the database, a service or an environment renamed; not a status change', async () => {
    const { owner, projectId, environmentId, applicationId } = await world();
    const { db } = ctx().database;
    const serviceResolved = `/application/${applicationId}/resolvedVariables`;
    const environmentResolved = `/environment/${environmentId}/resolvedVariables`;
    expect((await resolvedOf(owner.auth, serviceResolved)).has('PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME')).toBe(true);
    expect((await resolvedOf(owner.auth, environmentResolved)).get('PLATFORM_BRANCH_NAME')).toMatchObject({ value: 'staging' });

    await db.updateTable('variables').set({ value: 'changed in the database' }).where('project_id', '=', projectId).where('key', '=', 'SETTING_1').execute();
    expect((await resolvedOf(owner.auth, serviceResolved)).get('SETTING_1')).toMatchObject({ value: 'changed in the database' });

    await db.updateTable('services').set({ name: 'shop-back', name_key: 'shop-back' }).where('id', '=', applicationId).execute();
    const afterRename = await resolvedOf(owner.auth, serviceResolved);
    expect(afterRename.has('PLATFORM_APPLICATION_SHOP_BACK_HOSTNAME')).toBe(true);
    expect(afterRename.has('PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME')).toBe(false);

    await db.updateTable('environments').set({ name: 'preview', name_key: 'preview' }).where('id', '=', environmentId).execute();
    expect((await resolvedOf(owner.auth, environmentResolved)).get('PLATFORM_BRANCH_NAME')).toMatchObject({ value: 'preview' });
    await db.updateTable('environments').set({ mode: 'PRODUCTION' }).where('id', '=', environmentId).execute();
    expect((await resolvedOf(owner.auth, environmentResolved)).get('PLATFORM_IS_PRODUCTION')).toMatchObject({ value: 'true' });

    const before = await readListRevision(db, projectId, 'variables');
    await db.updateTable('environments').set({ status: 'DEPLOYING', updated_at: new Date().toISOString() }).where('id', '=', environmentId).execute();
    expect(await readListRevision(db, projectId, 'variables')).toBe(before);
  });

  it('never keeps a revealed answer: reveal=true reads everything again and is not stored for others', async () => {
    const { owner, applicationId } = await world();
    const url = `/application/${applicationId}/resolvedVariables`;
    const masked = await resolvedOf(owner.auth, url);
    expect(masked.get('PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME')).toMatchObject({ hidden: true });
    expect(masked.get('PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME')).not.toHaveProperty('value');
    const revealed = await call(owner.auth, 'GET', `${url}?reveal=true`);
    expect(revealed.statusCode, revealed.body).toBe(200);
    expect(revealed.headers['cache-control']).toBe('no-store');
    const hostname = revealed.json<{ results: ResolvedView[] }>().results.find((entry) => entry.key === 'PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME');
    expect(hostname?.value).toEqual(expect.any(String));
    // The masked answer is still masked afterwards: the revealed one was not kept in its place.
    expect((await resolvedOf(owner.auth, url)).get('PLATFORM_APPLICATION_SHOP_FRONT_HOSTNAME')).not.toHaveProperty('value');
  });

  it("counts each project on its own, and keeps no counter once the project is deleted", async () => {
    const { owner, organizationId, projectId } = await world();
    const { db } = ctx().database;
    const before = await readListRevision(db, projectId, 'variables');
    const sibling = await call(owner.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('sibling') });
    expect(sibling.statusCode, sibling.body).toBe(200);
    const siblingId = sibling.json<{ id: string }>().id;
    await created(owner.auth, `/project/${siblingId}/environmentVariable`, { key: 'IN_THE_SIBLING', value: 'x' });
    expect(await readListRevision(db, projectId, 'variables')).toBe(before);
    expect(await readListRevision(db, siblingId, 'variables')).not.toBe('0');

    const deleted = await call(owner.auth, 'DELETE', `/project/${siblingId}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    const counters = await db.selectFrom('list_revisions').select('list').where('scope_id', '=', siblingId).execute();
    expect(counters).toEqual([]);
  });

  it("keeps one organization's answers to itself: another's member is refused and writes elsewhere leave its revision", async () => {
    const one = await world();
    const other = await world();
    await resolvedOf(one.owner.auth, `/application/${one.applicationId}/resolvedVariables`);
    const refused = await call(other.owner.auth, 'GET', `/application/${one.applicationId}/resolvedVariables`);
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain(LONG_VALUE);
    const before = await readListRevision(ctx().database.db, one.projectId, 'variables');
    await created(other.owner.auth, `/project/${other.projectId}/environmentVariable`, { key: 'ELSEWHERE', value: 'x' });
    expect(await readListRevision(ctx().database.db, one.projectId, 'variables')).toBe(before);
  });
});
