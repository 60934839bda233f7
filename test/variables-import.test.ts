import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * .env imports into a service (importEnvironmentVariable, importContainerEnvironmentVariable,
 * importJobEnvironmentVariable and the unified importEnvironmentVariables; docs/variables.md, "Importing a .env
 * file"): each row at its own scope (the service's, its environment's or its project's) as a variable or a secret;
 * existing names skipped or overwritten per `overwrite`; a bad row is a 400 naming it and nothing is written.
 */

interface ImportAnswer {
  total_variables_to_import: number;
  successful_imported_variables: Array<{ name: string; value?: string; scope: string; is_secret: boolean }>;
  overwritten_variables: Array<{ name: string }>;
  skipped_variables: Array<{ name: string }>;
}

interface Row {
  name: string;
  value: string;
  scope: string;
  is_secret: boolean;
}

describeEachDatabase('variable imports', (ctx) => {
  let owner: TestUser;
  let outsider: TestUser;
  let viewer: TestUser;
  let organizationId: string;
  let projectId: string;
  let environmentId: string;

  async function call(method: 'GET' | 'POST', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await call(method, url, payload, auth);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function createApplication(): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, body, 201)).id;
  }

  async function registryId(): Promise<string> {
    return (await ok<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' }, 201)).id;
  }

  /** Every stored row of the project: what "nothing written" compares. */
  function projectRows() {
    return ctx().database.db.selectFrom('variables').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  }

  async function stored(ownerId: string, key: string) {
    return ctx().database.db.selectFrom('variables').selectAll().where('owner_id', '=', ownerId).where('key', '=', key).executeTakeFirst();
  }

  function importInto(applicationId: string, vars: Row[], overwrite = false, auth = owner.auth) {
    return call('POST', `/application/${applicationId}/environmentVariable/import`, { overwrite, vars }, auth);
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    outsider = (await ctx().signUpWithOrganization()).owner;
    viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
  });

  it('writes each row at its own scope, secrets sealed and never answered, an alias of a row of the same import included', async () => {
    const applicationId = await createApplication();
    const answer = await ok<ImportAnswer>(
      'POST',
      `/application/${applicationId}/environmentVariable/import`,
      {
        overwrite: false,
        vars: [
          { name: 'I_PORT', value: '8080', scope: 'APPLICATION', is_secret: false },
          { name: 'I_LEVEL', value: 'info', scope: 'ENVIRONMENT', is_secret: false },
          { name: 'I_REGION', value: 'eu', scope: 'PROJECT', is_secret: false },
          { name: 'I_PASSWORD', value: 'hunter2-import', scope: 'APPLICATION', is_secret: true },
          { name: 'I_REGION_ALIAS', value: '$I_REGION', scope: 'APPLICATION', is_secret: false },
        ],
      },
      201,
    );
    expect(answer.total_variables_to_import).toBe(5);
    expect(answer.successful_imported_variables).toEqual([
      { name: 'I_PORT', value: '8080', scope: 'APPLICATION', is_secret: false },
      { name: 'I_LEVEL', value: 'info', scope: 'ENVIRONMENT', is_secret: false },
      { name: 'I_REGION', value: 'eu', scope: 'PROJECT', is_secret: false },
      { name: 'I_PASSWORD', scope: 'APPLICATION', is_secret: true },
      { name: 'I_REGION_ALIAS', value: '$I_REGION', scope: 'APPLICATION', is_secret: false },
    ]);
    expect(answer.skipped_variables).toEqual([]);
    expect(JSON.stringify(answer)).not.toContain('hunter2-import');

    expect(await stored(applicationId, 'I_PORT')).toMatchObject({ scope: 'APPLICATION', value: '8080', is_secret: 0 });
    expect(await stored(environmentId, 'I_LEVEL')).toMatchObject({ scope: 'ENVIRONMENT', value: 'info' });
    expect(await stored(projectId, 'I_REGION')).toMatchObject({ scope: 'PROJECT', value: 'eu' });
    const secret = await stored(applicationId, 'I_PASSWORD');
    expect(secret).toMatchObject({ is_secret: 1, value: null });
    expect(secret?.value_envelope).not.toContain('hunter2-import');
    expect(await stored(applicationId, 'I_REGION_ALIAS')).toMatchObject({ variable_type: 'ALIAS', alias_of: 'I_REGION' });

    // What the service resolves: the alias follows the project's value.
    const resolved = await ok<{ results: Array<{ key: string; value?: string }> }>('GET', `/application/${applicationId}/resolvedVariables`, undefined, 200);
    expect(resolved.results.find((variable) => variable.key === 'I_REGION_ALIAS')?.value).toBe('eu');
  });

  it('skips existing names without overwrite and overwrites them in place with it', async () => {
    const applicationId = await createApplication();
    const first = await ok<ImportAnswer>('POST', `/application/${applicationId}/environmentVariable/import`, {
      overwrite: false,
      vars: [
        { name: 'O_MODE', value: 'one', scope: 'APPLICATION', is_secret: false },
        { name: 'O_KEY', value: 'key-one', scope: 'APPLICATION', is_secret: true },
      ],
    }, 201);
    expect(first.successful_imported_variables.map((row) => row.name)).toEqual(['O_MODE', 'O_KEY']);
    const mode = await stored(applicationId, 'O_MODE');
    const key = await stored(applicationId, 'O_KEY');

    const vars: Row[] = [
      { name: 'O_MODE', value: 'two', scope: 'APPLICATION', is_secret: false },
      { name: 'O_KEY', value: 'key-two', scope: 'APPLICATION', is_secret: true },
      { name: 'O_NEW', value: 'new', scope: 'APPLICATION', is_secret: false },
    ];
    const skipped = await importInto(applicationId, vars, false);
    expect(skipped.statusCode, skipped.body).toBe(201);
    expect(skipped.json<ImportAnswer>()).toMatchObject({
      total_variables_to_import: 3,
      successful_imported_variables: [{ name: 'O_NEW' }],
      overwritten_variables: [],
      skipped_variables: [{ name: 'O_MODE' }, { name: 'O_KEY' }],
    });
    expect((await stored(applicationId, 'O_MODE'))?.value).toBe('one');
    expect((await stored(applicationId, 'O_KEY'))?.value_envelope).toBe(key?.value_envelope);

    const overwritten = await importInto(applicationId, vars, true);
    expect(overwritten.statusCode, overwritten.body).toBe(201);
    expect(overwritten.json<ImportAnswer>()).toMatchObject({
      successful_imported_variables: [{ name: 'O_MODE', value: 'two' }, { name: 'O_KEY' }, { name: 'O_NEW', value: 'new' }],
      overwritten_variables: [{ name: 'O_MODE' }, { name: 'O_KEY' }, { name: 'O_NEW' }],
      skipped_variables: [],
    });
    expect(await stored(applicationId, 'O_MODE')).toMatchObject({ id: mode?.id, value: 'two' });
    const rekeyed = await stored(applicationId, 'O_KEY');
    expect(rekeyed?.id).toBe(key?.id);
    expect(rekeyed?.value_envelope).not.toBe(key?.value_envelope);
  });

  it('serialises concurrent imports of the same names: each name is created once, the other import skips it', async () => {
    const applicationId = await createApplication();
    const vars: Row[] = Array.from({ length: 8 }, (_, index) => ({ name: `R_${index}`, value: String(index), scope: index % 2 === 0 ? 'APPLICATION' : 'ENVIRONMENT', is_secret: false }));
    const answers = await Promise.all([importInto(applicationId, vars), importInto(applicationId, vars), importInto(applicationId, vars)]);
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(201);
    const created = answers.flatMap((answer) => answer.json<ImportAnswer>().successful_imported_variables.map((row) => row.name)).sort();
    expect(created).toEqual(vars.map((row) => row.name).sort());
    const rows = await ctx().database.db.selectFrom('variables').select('key').where('key', 'in', vars.map((row) => row.name)).where('owner_id', 'in', [applicationId, environmentId]).execute();
    expect(rows).toHaveLength(vars.length);
  });

  it('refuses a bad row with a 400 naming it, and writes none of the others', async () => {
    const applicationId = await createApplication();
    await ok('POST', `/application/${applicationId}/environmentVariable/import`, { overwrite: false, vars: [{ name: 'B_HELD', value: 'plain', scope: 'APPLICATION', is_secret: false }] }, 201);
    const good: Row[] = [
      { name: 'B_FIRST', value: '1', scope: 'APPLICATION', is_secret: false },
      { name: 'B_SECOND', value: '2', scope: 'PROJECT', is_secret: false },
    ];
    const before = await projectRows();
    const bad: Array<[Row, string]> = [
      [{ name: 'B-DASHED', value: 'x', scope: 'APPLICATION', is_secret: false }, '/vars/2/name'],
      [{ name: '9LIVES', value: 'x', scope: 'ENVIRONMENT', is_secret: false }, '/vars/2/name'],
      [{ name: 'PLATFORM_OWN', value: 'x', scope: 'APPLICATION', is_secret: false }, '/vars/2/name'],
      [{ name: 'B_BUILT', value: 'x', scope: 'BUILT_IN', is_secret: false }, '/vars/2/scope'],
      [{ name: 'B_CONTAINER', value: 'x', scope: 'CONTAINER', is_secret: false }, '/vars/2/scope'],
      [{ name: 'B_FIRST', value: 'again', scope: 'APPLICATION', is_secret: false }, '/vars/2/name'],
      [{ name: 'B_DANGLING', value: '$B_NOWHERE', scope: 'APPLICATION', is_secret: false }, '/vars/2/value'],
      [{ name: 'B_NUL', value: 'a\u0000b', scope: 'APPLICATION', is_secret: false }, '/vars/2/value'],
    ];
    for (const [row, field] of bad) {
      const refused = expectErrorBody(await importInto(applicationId, [...good, row]), 400);
      expect(JSON.stringify(refused.details), `${row.name}: ${refused.message}`).toContain(field);
      // The schema's own refusals (a NUL in a value) name the field in their details; the import's name the row too.
      if (refused.message !== 'invalid request body') expect(refused.message).toContain('vars[2]');
    }
    // A plain variable may not be overwritten by a secret of its name, nor the reverse: 409, nothing written.
    expectErrorBody(await importInto(applicationId, [...good, { name: 'B_HELD', value: 'now-secret', scope: 'APPLICATION', is_secret: true }], true), 409);
    expectErrorBody(await call('POST', `/application/${applicationId}/environmentVariable/import`, { overwrite: false }), 400);
    expectErrorBody(await call('POST', `/application/${applicationId}/environmentVariable/import`, { overwrite: false, vars: good, extra: 1 }), 400);
    expect(await projectRows()).toEqual(before);
  });

  it('imports into containers and jobs, and through the unified operation by service id and type', async () => {
    const registry = await registryId();
    const container = await ok<{ id: string }>('POST', `/environment/${environmentId}/container`, { name: uniqueName('box'), registry_id: registry, image_name: 'library/nginx', tag: '1.27-alpine', healthchecks: {} }, 201);
    const job = await ok<{ id: string }>('POST', `/environment/${environmentId}/job`, {
      name: uniqueName('nightly'),
      source: { image: { image_name: 'busybox', tag: '1', registry_id: registry } },
      schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
      healthchecks: {},
    }, 201);
    const intoContainer = await ok<ImportAnswer>('POST', `/container/${container.id}/environmentVariable/import`, { overwrite: false, vars: [{ name: 'C_ONE', value: '1', scope: 'CONTAINER', is_secret: false }] }, 201);
    expect(intoContainer.successful_imported_variables).toEqual([{ name: 'C_ONE', value: '1', scope: 'CONTAINER', is_secret: false }]);
    const intoJob = await ok<ImportAnswer>('POST', `/job/${job.id}/environmentVariable/import`, { overwrite: false, vars: [{ name: 'J_ONE', value: '1', scope: 'JOB', is_secret: false }] }, 201);
    expect(intoJob.successful_imported_variables).toEqual([{ name: 'J_ONE', value: '1', scope: 'JOB', is_secret: false }]);
    expectErrorBody(await call('POST', `/job/${job.id}/environmentVariable/import`, { overwrite: false, vars: [{ name: 'J_TWO', value: '1', scope: 'APPLICATION', is_secret: false }] }), 400);

    const unified = await ok<ImportAnswer>('POST', `/variable/import?service_id=${job.id}&service_type=JOB`, { overwrite: false, vars: [{ name: 'J_UNIFIED', value: 'u', scope: 'JOB', is_secret: true }] }, 201);
    expect(unified.successful_imported_variables).toEqual([{ name: 'J_UNIFIED', scope: 'JOB', is_secret: true }]);
    expect(await stored(job.id, 'J_UNIFIED')).toMatchObject({ is_secret: 1 });
    // The type must be the service's own.
    expectErrorBody(await call('POST', `/variable/import?service_id=${job.id}&service_type=CONTAINER`, { overwrite: false, vars: [] }), 404);
    expectErrorBody(await call('POST', `/variable/import?service_id=${job.id}&service_type=DATABASE`, { overwrite: false, vars: [] }), 400);
    expectErrorBody(await call('POST', `/variable/import?service_id=${randomUUID()}&service_type=JOB`, { overwrite: false, vars: [] }), 404);
  });

  it('keeps other organizations out (404) and read-only members from importing (403)', async () => {
    const applicationId = await createApplication();
    const vars: Row[] = [{ name: 'G_ONE', value: '1', scope: 'PROJECT', is_secret: false }];
    const before = await projectRows();
    expectErrorBody(await importInto(applicationId, vars, false, outsider.auth), 404);
    expectErrorBody(await call('POST', `/variable/import?service_id=${applicationId}&service_type=APPLICATION`, { overwrite: false, vars }, outsider.auth), 404);
    expectErrorBody(await importInto(applicationId, vars, false, viewer.auth), 403);
    expectErrorBody(await call('POST', `/variable/import?service_id=${applicationId}&service_type=APPLICATION`, { overwrite: false, vars }, viewer.auth), 403);
    expect(await projectRows()).toEqual(before);
  });
});
