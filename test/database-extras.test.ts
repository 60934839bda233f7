import { beforeAll, expect, it } from 'vitest';
import { builtInId } from '../src/modules/variables/variables.builtins.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * A database's day-to-day operations (docs/service-extras.md "Databases"): the applications that alias its built-ins
 * and their disconnection, the versions it may move to, the types/versions/modes of an environment, and its master
 * credentials — revealed only with secrets:reveal, and recorded in the audit log. Another organization's ids are 404.
 */
describeEachDatabase('database extras', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let environmentId: string;
  let otherEnvironmentId: string;
  let databaseId: string;
  let databaseName: string;

  async function ok<T>(method: 'GET' | 'POST' | 'DELETE', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    expect(response.statusCode, response.body).toBe(status);
    return (response.body === '' ? undefined : response.json()) as T;
  }

  async function createApplication(environment = environmentId): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {} };
    return (await ok<{ id: string }>('POST', `/environment/${environment}/application`, body, 201)).id;
  }

  /** An alias of the application, named `key`, of the database's built-in PLATFORM_DATABASE_<NAME>_<suffix>. */
  async function alias(applicationId: string, suffix: string, key: string): Promise<void> {
    const builtIn = `PLATFORM_DATABASE_${databaseName.toUpperCase().replace(/-/g, '_')}_${suffix}`;
    await ok('POST', `/application/${applicationId}/environmentVariable/${builtInId(environmentId, builtIn)}/alias`, { key }, 201);
  }

  async function applicationVariables(applicationId: string): Promise<Array<{ key: string; variable_type: string }>> {
    return (await ok<{ results: Array<{ key: string; variable_type: string }> }>('GET', `/application/${applicationId}/environmentVariable`, undefined, 200)).results;
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
    otherEnvironmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('staging'), cluster: clusterId }, 201)).id;
    databaseName = uniqueName('orders-db');
    databaseId = (await ok<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: databaseName, type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' }, 201)).id;
  });

  it('lists the applications aliasing its built-ins, and disconnects one by removing its aliases', async () => {
    const connected = await createApplication();
    const alsoConnected = await createApplication();
    const bystander = await createApplication();
    await alias(connected, 'CONNECTION_URI', 'DATABASE_URL');
    await alias(connected, 'PASSWORD', 'DB_PASSWORD');
    await alias(alsoConnected, 'HOST', 'DB_HOST');
    await ok('POST', `/application/${bystander}/environmentVariable`, { key: 'PLAIN', value: 'x' }, 201);

    const listed = await ok<{ results: Array<{ id: string }> }>('GET', `/database/${databaseId}/application`, undefined, 200);
    expect(listed.results.map((application) => application.id).sort()).toEqual([connected, alsoConnected].sort());

    await ok('DELETE', `/database/${databaseId}/application/${connected}`, undefined, 204);
    const keys = (await applicationVariables(connected)).filter((variable) => variable.variable_type === 'ALIAS').map((variable) => variable.key);
    expect(keys).toEqual([]);
    // The database's built-ins are still there for every service.
    expect((await applicationVariables(connected)).some((variable) => variable.key.endsWith('_CONNECTION_URI'))).toBe(true);
    const after = await ok<{ results: Array<{ id: string }> }>('GET', `/database/${databaseId}/application`, undefined, 200);
    expect(after.results.map((application) => application.id)).toEqual([alsoConnected]);

    // Again, or for an application that aliases nothing: nothing to remove, still 204.
    await ok('DELETE', `/database/${databaseId}/application/${connected}`, undefined, 204);
    await ok('DELETE', `/database/${databaseId}/application/${bystander}`, undefined, 204);
    expect((await applicationVariables(bystander)).some((variable) => variable.key === 'PLAIN')).toBe(true);
  });

  it('refuses an application outside the database environment and unknown ids', async () => {
    const elsewhere = await createApplication(otherEnvironmentId);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/database/${databaseId}/application/${elsewhere}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/database/${databaseId}/application/${databaseId}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/database/${databaseId}/application/not-a-uuid` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/database/${crypto.randomUUID()}/application` }), 404);
    // An application's id is no database.
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/database/${elsewhere}/version` }), 404);
  });

  it('lists the versions it may move to, and the configurations of an environment', async () => {
    const versions = await ok<{ results: Array<{ name: string }> }>('GET', `/database/${databaseId}/version`, undefined, 200);
    expect(versions.results.map((version) => version.name)).toEqual(['15', '16', '17']);
    const redis = (await ok<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: uniqueName('cache'), type: 'REDIS', version: '6', mode: 'CONTAINER' }, 201)).id;
    expect((await ok<{ results: Array<{ name: string }> }>('GET', `/database/${redis}/version`, undefined, 200)).results).toEqual([{ name: '6' }, { name: '7' }]);

    const configurations = await ok<{ results: Array<{ database_type: string; version: Array<{ name: string; supported_mode: string }> }> }>(
      'GET',
      `/environment/${environmentId}/databaseConfiguration`,
      undefined,
      200,
    );
    expect(configurations.results.map((configuration) => configuration.database_type)).toEqual(['POSTGRESQL', 'MYSQL', 'MONGODB', 'REDIS']);
    const mysql = configurations.results.find((configuration) => configuration.database_type === 'MYSQL');
    expect(mysql?.version).toEqual([
      { name: '8.0', supported_mode: 'CONTAINER' },
      { name: '8.0', supported_mode: 'MANAGED' },
      { name: '8.4', supported_mode: 'CONTAINER' },
      { name: '8.4', supported_mode: 'MANAGED' },
    ]);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/environment/${crypto.randomUUID()}/databaseConfiguration` }), 404);
  });

  it('reveals the master credentials to those who may reveal secrets, and records it', async () => {
    const credentials = await ok<{ host: string; port: number; login: string; password: string }>('GET', `/database/${databaseId}/masterCredentials`, undefined, 200);
    expect(credentials.port).toBe(5432);
    expect(credentials.login).toMatch(/^u[0-9a-f]{16}$/);
    expect(credentials.password.length).toBeGreaterThanOrEqual(24);
    // The same values the built-ins give the environment's services.
    const consumer = await createApplication();
    const revealed = await ok<{ results: Array<{ key: string; value?: string }> }>('GET', `/application/${consumer}/environmentVariable?reveal=true`, undefined, 200);
    const prefix = `PLATFORM_DATABASE_${databaseName.toUpperCase().replace(/-/g, '_')}_`;
    const builtIn = (suffix: string) => revealed.results.find((variable) => variable.key === `${prefix}${suffix}`)?.value;
    expect(credentials).toEqual({ host: builtIn('HOST'), port: Number(builtIn('PORT')), login: builtIn('USERNAME'), password: builtIn('PASSWORD') });

    // A developer configures and deploys but sees no secret; a WRITE token neither; an ADMIN token does.
    const developer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    expectErrorBody(await ctx().call(developer.auth, { method: 'GET', url: `/database/${databaseId}/masterCredentials` }), 403);
    expect((await ctx().call(developer.auth, { method: 'GET', url: `/database/${databaseId}/version` })).statusCode).toBe(200);
    const writeToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('write'), scope: 'WRITE' })}`;
    expectErrorBody(await ctx().call(writeToken, { method: 'GET', url: `/database/${databaseId}/masterCredentials` }), 403);
    const adminToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('admin'), scope: 'ADMIN' })}`;
    expect(await ok('GET', `/database/${databaseId}/masterCredentials`, undefined, 200, adminToken)).toEqual(credentials);

    const events = await ok<{ events: Array<{ operation_id: string; event_type: string; target_type: string; target_id: string; status_code: number }> }>(
      'GET',
      `/organization/${organizationId}/events?pageSize=100`,
      undefined,
      200,
    );
    const reveals = events.events.filter((event) => event.operation_id === 'getDatabaseMasterCredentials');
    expect(reveals.length).toBeGreaterThanOrEqual(3);
    expect(reveals.map((event) => event.status_code).sort()).toEqual(expect.arrayContaining([200, 200, 403]));
    expect(reveals[0]).toMatchObject({ event_type: 'EXPORT', target_type: 'DATABASE', target_id: databaseId });
    // The other reads are not recorded.
    expect(events.events.some((event) => event.operation_id === 'listDatabaseVersion')).toBe(false);
  });

  it("answers another organization's database as unknown", async () => {
    const outsider = await ctx().signUpWithOrganization();
    for (const url of [`/database/${databaseId}/application`, `/database/${databaseId}/version`, `/database/${databaseId}/masterCredentials`, `/environment/${environmentId}/databaseConfiguration`]) {
      const response = await ctx().call(outsider.owner.auth, { method: 'GET', url });
      expect([403, 404], url).toContain(response.statusCode);
    }
    const response = await ctx().call(outsider.owner.auth, { method: 'DELETE', url: `/database/${databaseId}/application/${crypto.randomUUID()}` });
    expect([403, 404]).toContain(response.statusCode);
  });
});
