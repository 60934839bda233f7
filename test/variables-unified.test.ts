import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The unified /variable API (the reference's "Variable Main Calls"; docs/variables.md, "The unified /variable API"):
 * variables and secrets addressed by scope and owner id, or by their own id, over the same model as the per-scope
 * routes. Access is decided on the owner the scope names (another organization's ids answer 404, a VIEWER's writes
 * 403); secret values never appear. Every answer is checked against the reference's schema by the test app.
 */

interface VariableView {
  id: string;
  key: string;
  value: string | null;
  scope: string;
  variable_type: string;
  is_secret: boolean;
  description?: string;
  aliased_variable?: { id: string; key: string; scope: string };
  overridden_variable?: { id: string; key: string; scope: string };
  service_id?: string;
}

describeEachDatabase('unified variables API', (ctx) => {
  let owner: TestUser;
  let outsider: TestUser;
  let viewer: TestUser;
  let organizationId: string;
  let projectId: string;
  let environmentId: string;
  let applicationId: string;

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await call(method, url, payload, auth);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function list(scope: string, parentId: string, extra = '', auth = owner.auth): Promise<VariableView[]> {
    return (await ok<{ results: VariableView[] }>('GET', `/variable?scope=${scope}&parent_id=${parentId}${extra}`, undefined, 200, auth)).results;
  }

  function create(body: Record<string, unknown>, auth = owner.auth) {
    return call('POST', '/variable', { is_secret: false, ...body }, auth);
  }

  async function created(body: Record<string, unknown>): Promise<VariableView> {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<VariableView>();
  }

  async function createApplication(): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, body, 201)).id;
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    outsider = (await ctx().signUpWithOrganization()).owner;
    viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
    applicationId = await createApplication();
  });

  it('creates variables and secrets at every stored scope and lists what each scope sees, secrets without values', async () => {
    const project = await created({ key: 'U_REGION', value: 'eu', variable_scope: 'PROJECT', variable_parent_id: projectId, description: 'where' });
    expect(project).toMatchObject({ key: 'U_REGION', value: 'eu', scope: 'PROJECT', variable_type: 'VALUE', is_secret: false, description: 'where' });
    const environment = await created({ key: 'U_LEVEL', value: 'debug', variable_scope: 'ENVIRONMENT', variable_parent_id: environmentId });
    expect(environment).toMatchObject({ scope: 'ENVIRONMENT', is_secret: false });
    const service = await created({ key: 'U_PORT', value: '8080', variable_scope: 'APPLICATION', variable_parent_id: applicationId });
    expect(service).toMatchObject({ scope: 'APPLICATION', service_id: applicationId });
    const secret = await created({ key: 'U_TOKEN', value: 's3cret-value', is_secret: true, variable_scope: 'ENVIRONMENT', variable_parent_id: environmentId });
    expect(secret).toMatchObject({ key: 'U_TOKEN', value: null, scope: 'ENVIRONMENT', is_secret: true });

    const seen = await list('APPLICATION', applicationId);
    const keys = seen.map((variable) => variable.key);
    expect(keys).toEqual(expect.arrayContaining(['U_REGION', 'U_LEVEL', 'U_PORT', 'U_TOKEN', 'PLATFORM_IS_PRODUCTION']));
    expect(seen.find((variable) => variable.key === 'U_TOKEN')).toMatchObject({ value: null, is_secret: true });
    expect(JSON.stringify(seen)).not.toContain('s3cret-value');
    expect(seen.find((variable) => variable.key === 'PLATFORM_IS_PRODUCTION')).toMatchObject({ scope: 'BUILT_IN', variable_type: 'BUILT_IN' });

    expect((await list('APPLICATION', applicationId, '&is_secret=true')).map((variable) => variable.key)).toEqual(['U_TOKEN']);
    expect((await list('APPLICATION', applicationId, '&is_secret=false')).map((variable) => variable.key)).not.toContain('U_TOKEN');
    // A project sees its own rows only: no environment's, no built-ins.
    const atProject = (await list('PROJECT', projectId)).map((variable) => variable.key);
    expect(atProject).toContain('U_REGION');
    expect(atProject).not.toContain('U_LEVEL');
    expect(atProject).not.toContain('PLATFORM_IS_PRODUCTION');

    // The same model as the per-scope routes: what one door writes, the other shows.
    const perScope = await ok<{ results: Array<{ id: string; key: string }> }>('GET', `/project/${projectId}/environmentVariable`, undefined, 200);
    expect(perScope.results.find((variable) => variable.key === 'U_REGION')?.id).toBe(project.id);
    const viaPerScope = await ok<{ id: string }>('POST', `/environment/${environmentId}/environmentVariable`, { key: 'U_FROM_SCOPE', value: 'x' }, 201);
    expect((await list('ENVIRONMENT', environmentId)).find((variable) => variable.key === 'U_FROM_SCOPE')?.id).toBe(viaPerScope.id);
  });

  it('edits and deletes by id: a variable’s value, a secret keeping its sealed value without one', async () => {
    const variable = await created({ key: 'U_EDIT', value: 'one', variable_scope: 'ENVIRONMENT', variable_parent_id: environmentId });
    const edited = await ok<VariableView>('PUT', `/variable/${variable.id}`, { key: 'U_EDITED', value: 'two', description: 'renamed' }, 200);
    expect(edited).toMatchObject({ id: variable.id, key: 'U_EDITED', value: 'two', description: 'renamed', scope: 'ENVIRONMENT' });

    const secret = await created({ key: 'U_SEALED', value: 'first-secret', is_secret: true, variable_scope: 'APPLICATION', variable_parent_id: applicationId });
    const before = await ctx().database.db.selectFrom('variables').select('value_envelope').where('id', '=', secret.id).executeTakeFirstOrThrow();
    const kept = await ok<VariableView>('PUT', `/variable/${secret.id}`, { key: 'U_SEALED', value: null, description: 'same value' }, 200);
    expect(kept).toMatchObject({ id: secret.id, value: null, is_secret: true, description: 'same value' });
    const after = await ctx().database.db.selectFrom('variables').select('value_envelope').where('id', '=', secret.id).executeTakeFirstOrThrow();
    expect(after.value_envelope).toBe(before.value_envelope);
    await ok('PUT', `/variable/${secret.id}`, { key: 'U_SEALED', value: 'second-secret' }, 200);
    const resealed = await ctx().database.db.selectFrom('variables').select('value_envelope').where('id', '=', secret.id).executeTakeFirstOrThrow();
    expect(resealed.value_envelope).not.toBe(before.value_envelope);

    expect((await call('DELETE', `/variable/${variable.id}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/variable/${secret.id}`)).statusCode).toBe(204);
    expectErrorBody(await call('DELETE', `/variable/${variable.id}`), 404);
    expectErrorBody(await call('PUT', `/variable/${secret.id}`, { key: 'U_SEALED' }), 404);
    expect((await list('APPLICATION', applicationId)).map((entry) => entry.key)).not.toEqual(expect.arrayContaining(['U_EDITED']));
  });

  it('creates aliases and overrides of variables, secrets and built-ins at a narrower scope', async () => {
    const base = await created({ key: 'U_DB_HOST', value: 'db.internal', variable_scope: 'PROJECT', variable_parent_id: projectId });
    const alias = await ok<VariableView>('POST', `/variable/${base.id}/alias`, { key: 'U_HOST_ALIAS', alias_scope: 'APPLICATION', alias_parent_id: applicationId }, 201);
    expect(alias).toMatchObject({ key: 'U_HOST_ALIAS', scope: 'APPLICATION', variable_type: 'ALIAS', aliased_variable: { id: base.id, key: 'U_DB_HOST' } });
    const override = await ok<VariableView>('POST', `/variable/${base.id}/override`, { value: 'db.prod', override_scope: 'ENVIRONMENT', override_parent_id: environmentId }, 201);
    expect(override).toMatchObject({ key: 'U_DB_HOST', value: 'db.prod', scope: 'ENVIRONMENT', variable_type: 'OVERRIDE', overridden_variable: { id: base.id } });

    const builtIn = (await list('ENVIRONMENT', environmentId)).find((variable) => variable.key === 'PLATFORM_IS_PRODUCTION');
    expect(builtIn).toBeDefined();
    const builtInOverride = await ok<VariableView>('POST', `/variable/${builtIn?.id}/override`, { value: 'yes', override_scope: 'APPLICATION', override_parent_id: applicationId }, 201);
    expect(builtInOverride).toMatchObject({ key: 'PLATFORM_IS_PRODUCTION', value: 'yes', scope: 'APPLICATION', variable_type: 'OVERRIDE' });

    const secret = await created({ key: 'U_API_KEY', value: 'key-value', is_secret: true, variable_scope: 'PROJECT', variable_parent_id: projectId });
    const secretAlias = await ok<VariableView>('POST', `/variable/${secret.id}/alias`, { key: 'U_API_KEY_ALIAS', alias_scope: 'ENVIRONMENT', alias_parent_id: environmentId }, 201);
    expect(secretAlias).toMatchObject({ is_secret: true, value: null, variable_type: 'ALIAS', aliased_variable: { id: secret.id } });
    const secretOverride = await ok<VariableView>('POST', `/variable/${secret.id}/override`, { value: 'env-key', override_scope: 'ENVIRONMENT', override_parent_id: environmentId }, 201);
    expect(secretOverride).toMatchObject({ is_secret: true, value: null, variable_type: 'OVERRIDE' });
    expect(JSON.stringify(secretOverride)).not.toContain('env-key');

    // An override must be narrower than what it overrides; a built-in is edited by override, never by id.
    expectErrorBody(await call('POST', `/variable/${override.id}/override`, { value: 'x', override_scope: 'PROJECT', override_parent_id: projectId }), 404);
    expectErrorBody(await call('POST', `/variable/${base.id}/override`, { value: 'x', override_scope: 'PROJECT', override_parent_id: projectId }), 400);
    expectErrorBody(await call('PUT', `/variable/${builtIn?.id}`, { key: 'PLATFORM_IS_PRODUCTION', value: 'x' }), 404);
    expectErrorBody(await call('POST', `/variable/${randomUUID()}/alias`, { key: 'U_NOTHING', alias_scope: 'ENVIRONMENT', alias_parent_id: environmentId }), 404);
  });

  it('refuses bad input with 400 and the error body, and a name held by the other kind with 409', async () => {
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ key: 'U_BUILT', value: 'x', variable_scope: 'BUILT_IN', variable_parent_id: environmentId }, 'BUILT_IN'],
      [{ key: '1BAD', value: 'x', variable_scope: 'PROJECT', variable_parent_id: projectId }, 'key'],
      [{ key: 'PLATFORM_MINE', value: 'x', variable_scope: 'PROJECT', variable_parent_id: projectId }, 'PLATFORM_'],
      [{ key: 'U_EXTERNAL', value: 'x', variable_scope: 'PROJECT', variable_parent_id: projectId, secret_manager_access_id: randomUUID() }, 'secret_manager_access_id'],
      [{ key: 'U_ALIAS_NOWHERE', value: '$U_DOES_NOT_EXIST', variable_scope: 'PROJECT', variable_parent_id: projectId }, 'U_DOES_NOT_EXIST'],
      [{ key: 'U_NO_SCOPE', value: 'x', variable_scope: 'GALAXY', variable_parent_id: projectId }, 'variable_scope'],
    ];
    for (const [body, mentioned] of refusals) {
      const refused = expectErrorBody(await create(body), 400);
      expect(JSON.stringify(refused), JSON.stringify(body)).toContain(mentioned);
    }
    expectErrorBody(await call('GET', `/variable?scope=BUILT_IN&parent_id=${environmentId}`), 400);
    expectErrorBody(await call('GET', `/variable?scope=PROJECT`), 400);
    // The owner is found before the body is validated, as for path targets: an unknown id is 404 whatever the body.
    expectErrorBody(await call('PUT', `/variable/${randomUUID()}`, {}), 404);
    const existing = await created({ key: 'U_VALIDATED', value: 'x', variable_scope: 'PROJECT', variable_parent_id: projectId });
    expectErrorBody(await call('PUT', `/variable/${existing.id}`, {}), 400);
    expectErrorBody(await call('PUT', `/variable/${existing.id}`, { key: 'U_VALIDATED', unknown: true }), 400);
    expectErrorBody(await call('POST', `/variable/${existing.id}/alias`, { key: 'U_ALIAS_NO_SCOPE' }), 400);
    expectErrorBody(await call('POST', `/variable/${existing.id}/alias`, { key: 'bad-name', alias_scope: 'ENVIRONMENT', alias_parent_id: environmentId }), 400);
    // A parent of another kind than the scope says, or of nothing: 404.
    expectErrorBody(await create({ key: 'U_WRONG_KIND', value: 'x', variable_scope: 'CONTAINER', variable_parent_id: applicationId }), 404);
    expectErrorBody(await create({ key: 'U_WRONG_KIND', value: 'x', variable_scope: 'ENVIRONMENT', variable_parent_id: projectId }), 404);
    expectErrorBody(await call('GET', `/variable?scope=APPLICATION&parent_id=${environmentId}`), 404);

    // Creating a name again replaces it (rule 3); the other kind under that name is a conflict.
    const first = await created({ key: 'U_TWICE', value: 'a', variable_scope: 'PROJECT', variable_parent_id: projectId });
    const second = await created({ key: 'U_TWICE', value: 'b', variable_scope: 'PROJECT', variable_parent_id: projectId });
    expect(second.id).not.toBe(first.id);
    expect((await list('PROJECT', projectId)).filter((variable) => variable.key === 'U_TWICE').map((variable) => variable.value)).toEqual(['b']);
    expectErrorBody(await create({ key: 'U_TWICE', value: 'c', is_secret: true, variable_scope: 'PROJECT', variable_parent_id: projectId }), 409);
    const other = await created({ key: 'U_OTHER', value: 'x', variable_scope: 'PROJECT', variable_parent_id: projectId });
    expectErrorBody(await call('PUT', `/variable/${other.id}`, { key: 'U_TWICE' }), 409);
  });

  it('answers another organization’s ids with 404 and a VIEWER’s writes with 403, changing nothing', async () => {
    const variable = await created({ key: 'U_GUARDED', value: 'mine', variable_scope: 'ENVIRONMENT', variable_parent_id: environmentId });
    const secret = await created({ key: 'U_GUARDED_SECRET', value: 'mine', is_secret: true, variable_scope: 'PROJECT', variable_parent_id: projectId });
    const rowsBefore = await ctx().database.db.selectFrom('variables').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

    const intrusions: Array<[string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown]> = [
      ['list a project', 'GET', `/variable?scope=PROJECT&parent_id=${projectId}`, undefined],
      ['list an environment', 'GET', `/variable?scope=ENVIRONMENT&parent_id=${environmentId}`, undefined],
      ['list a service', 'GET', `/variable?scope=APPLICATION&parent_id=${applicationId}&is_secret=true`, undefined],
      ['create', 'POST', '/variable', { key: 'U_INTRUDER', value: 'x', is_secret: false, variable_scope: 'PROJECT', variable_parent_id: projectId }],
      ['edit', 'PUT', `/variable/${variable.id}`, { key: 'U_GUARDED', value: 'theirs' }],
      ['edit a secret', 'PUT', `/variable/${secret.id}`, { key: 'U_GUARDED_SECRET', value: 'theirs' }],
      ['delete', 'DELETE', `/variable/${variable.id}`, undefined],
      ['alias', 'POST', `/variable/${variable.id}/alias`, { key: 'U_INTRUDER', alias_scope: 'APPLICATION', alias_parent_id: applicationId }],
      ['override', 'POST', `/variable/${variable.id}/override`, { value: 'x', override_scope: 'APPLICATION', override_parent_id: applicationId }],
    ];
    for (const [what, method, url, payload] of intrusions) {
      const refused = expectErrorBody(await call(method, url, payload, outsider.auth), 404);
      expect(refused.message, what).not.toContain('mine');
    }
    // Before validation: a malformed body does not turn the outsider's 404 into a 400 that would confirm the id.
    expectErrorBody(await call('PUT', `/variable/${variable.id}`, { key: 'not a name' }, outsider.auth), 404);
    expectErrorBody(await call('POST', `/variable/${variable.id}/alias`, { key: 'not a name', alias_scope: 'ENVIRONMENT', alias_parent_id: environmentId }, outsider.auth), 404);
    expectErrorBody(await call('POST', '/variable', { key: 'not a name', is_secret: false, variable_scope: 'PROJECT', variable_parent_id: projectId }, outsider.auth), 404);
    // The outsider's own project cannot reach into this one either: an alias of this organization's variable is 404.
    const outsiderOrganization = (await ok<{ results: Array<{ id: string }> }>('GET', '/organization', undefined, 200, outsider.auth)).results[0]?.id ?? '';
    const outsiderProject = (await ok<{ id: string }>('POST', `/organization/${outsiderOrganization}/project`, { name: uniqueName('elsewhere') }, 200, outsider.auth)).id;
    expectErrorBody(await call('POST', `/variable/${variable.id}/alias`, { key: 'U_STOLEN', alias_scope: 'PROJECT', alias_parent_id: outsiderProject }, outsider.auth), 404);

    // A VIEWER reads (secrets without values) but writes nothing.
    const seen = await list('APPLICATION', applicationId, '', viewer.auth);
    expect(seen.map((entry) => entry.key)).toEqual(expect.arrayContaining(['U_GUARDED', 'U_GUARDED_SECRET']));
    expect(seen.find((entry) => entry.key === 'U_GUARDED_SECRET')?.value).toBeNull();
    for (const [what, method, url, payload] of intrusions.filter(([, method]) => method !== 'GET')) {
      const refused = expectErrorBody(await call(method, url, payload, viewer.auth), 403);
      expect(refused.message, what).toMatch(/permission/);
    }
    const rowsAfter = await ctx().database.db.selectFrom('variables').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
    expect(rowsAfter).toEqual(rowsBefore);
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: `/variable?scope=PROJECT&parent_id=${projectId}` }), 401);
  });
});
