import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultPostgresBinDir } from '../src/engine/local/database-postgresql.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

const run = promisify(execFile);
// Each call reaches a real git server or database server with real tools: on a loaded machine that takes long.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

/**
 * Database backups (docs/database-backups.md). The API's rules on the in-process app, both stores: what cannot be
 * backed up (not running, not on the local engine), bad bodies, names unique per database (concurrently too), another
 * organization's ids, a viewer's rights, a backup whose dump fails recorded as such. Then, end to end on `slipway
 * server` with its local agent: real PostgreSQL, MariaDB and Redis servers deployed, backed up with their engines'
 * tools, listed with their size, the PostgreSQL dump restored-listed with pg_restore, removed with their files.
 */

interface BackupAnswer {
  id: string;
  name: string;
  message: string;
  engine: string;
  size_bytes: number | null;
  failure: string | null;
  status: { state: string; status_details: { status: string } };
}

const LOCAL_CLUSTER = { region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' };

describeEachDatabase('database backups: the API', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let environmentId: string;
  let databaseId: string;

  async function ok<T>(method: 'GET' | 'POST' | 'DELETE', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    expect(response.statusCode, response.body).toBe(status);
    return (response.body === '' ? undefined : response.json()) as T;
  }

  /** Says the database runs, as a finished deployment would have (the in-process app has no agent to deploy it). */
  async function markRunning(serviceId: string): Promise<void> {
    const { db } = ctx().database;
    const now = new Date().toISOString();
    await db
      .insertInto('service_runtime')
      .values({ service_id: serviceId, status: 'DEPLOYED', last_deployment_id: null, deployed_deployment_id: null, workload_health: null, workload_restarts: null, workload_message: null, workload_reported_at: null, updated_at: now })
      .execute();
  }

  async function backups(id = databaseId): Promise<BackupAnswer[]> {
    return (await ok<{ results: BackupAnswer[] }>('GET', `/database/${id}/backup`, undefined, 200)).results;
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    await ctx().allowLocalClusters(organizationId);
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { ...LOCAL_CLUSTER, name: uniqueName('local') }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
    databaseId = (await ok<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: uniqueName('orders'), type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' }, 201)).id;
  });

  it('refuses a database that does not run, and one on a Kubernetes cluster, writing nothing', async () => {
    const notRunning = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/database/${databaseId}/backup`, payload: { name: 'nightly', message: 'before the migration' } }), 400);
    expect(notRunning.message).toMatch(/not running \(never deployed\)/);

    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const managed = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('eks'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    const onKubernetes = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('k8s'), cluster: managed }, 201)).id;
    const elsewhere = (await ok<{ id: string }>('POST', `/environment/${onKubernetes}/database`, { name: uniqueName('db'), type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' }, 201)).id;
    await markRunning(elsewhere);
    const kubernetes = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/database/${elsewhere}/backup`, payload: { name: 'nightly', message: '' } }), 400);
    expect(kubernetes.message).toMatch(/Kubernetes cluster/);
    expect(await backups(databaseId)).toEqual([]);
    expect(await backups(elsewhere)).toEqual([]);
  });

  it('refuses bad bodies and unknown ids', async () => {
    await markRunning(databaseId);
    const url = `/database/${databaseId}/backup`;
    for (const payload of [{}, { name: 'x' }, { message: 'x' }, { name: '', message: 'x' }, { name: 'x', message: 'x', size: 3 }, { name: 7, message: 'x' }]) {
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload }), 400);
    }
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/database/${crypto.randomUUID()}/backup`, payload: { name: 'x', message: 'x' } }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/database/not-a-uuid/backup` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${url}?startId=nope` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `${url}/${crypto.randomUUID()}` }), 404);
    // An application's id is no database.
    const application = (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {} }, 201)).id;
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/database/${application}/backup` }), 404);
    expect(await backups()).toEqual([]);
  });

  it('records a backup and runs its job; a dump that cannot be made is recorded as failed, with why', async () => {
    const created = await ok<BackupAnswer>('POST', `/database/${databaseId}/backup`, { name: 'first', message: 'before the migration' }, 201);
    expect(created).toMatchObject({ name: 'first', message: 'before the migration', engine: 'POSTGRESQL', size_bytes: null, status: { state: 'QUEUED' } });
    // The in-process app runs no local agent: the worker finds no server of this database on its host.
    await vi.waitFor(
      async () => {
        const [listed] = await backups();
        expect(listed?.status.state).toBe('DEPLOYMENT_ERROR');
      },
      { timeout: 15_000, interval: 50 },
    );
    const [failed] = await backups();
    expect(failed).toMatchObject({ id: created.id, size_bytes: null, status: { status_details: { status: 'ERROR' } } });
    expect(failed?.failure).toMatch(/does not run on this host/);
  });

  it('keeps names unique per database: of two concurrent creates of one name, one is 201 and one 409', async () => {
    const body = { name: 'twice', message: 'race' };
    const answers = await Promise.all([1, 2].map(() => ctx().call(owner.auth, { method: 'POST', url: `/database/${databaseId}/backup`, payload: body })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
    expectErrorBody(answers.find((answer) => answer.statusCode === 409) ?? answers[0]!, 409);
    expect((await backups()).filter((backup) => backup.name === 'twice')).toHaveLength(1);
    // Case and surrounding spaces do not make another name.
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/database/${databaseId}/backup`, payload: { name: ' TWICE ', message: '' } }), 409);
  });

  it('pages the listing newest first after startId, and removes a backup', async () => {
    const listed = await backups();
    expect(listed.map((backup) => backup.name)).toEqual(['twice', 'first']);
    const after = await ok<{ page: number; page_size: number; results: BackupAnswer[] }>('GET', `/database/${databaseId}/backup?startId=${listed[0]?.id}`, undefined, 200);
    expect(after.results.map((backup) => backup.name)).toEqual(['first']);
    expect(after.page).toBe(1);
    await ok('DELETE', `/database/${databaseId}/backup/${listed[1]?.id}`, undefined, 204);
    expect((await backups()).map((backup) => backup.name)).toEqual(['twice']);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/database/${databaseId}/backup/${listed[1]?.id}` }), 404);
  });

  it("hides a database from another organization's caller, and lets a viewer read but not write", async () => {
    const stranger = await ctx().signUpWithOrganization();
    const [backup] = await backups();
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/database/${databaseId}/backup` }), 404);
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'POST', url: `/database/${databaseId}/backup`, payload: { name: 'theirs', message: '' } }), 404);
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'DELETE', url: `/database/${databaseId}/backup/${backup?.id}` }), 404);
    // Their own database does not reach ours either.
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expect((await ok<{ results: BackupAnswer[] }>('GET', `/database/${databaseId}/backup`, undefined, 200, viewer.auth)).results).toHaveLength(1);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: `/database/${databaseId}/backup`, payload: { name: 'viewer', message: '' } }), 403);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'DELETE', url: `/database/${databaseId}/backup/${backup?.id}` }), 403);
    expect(await backups()).toHaveLength(1);
  });
});

const STEP_TIMEOUT_MS = 240_000;

for (const dialect of TEST_DIALECTS) {
  describe(`database backups end to end: real PostgreSQL, MariaDB and Redis servers of the local engine [${dialect}]`, () => {
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;

    beforeAll(async () => {
      world = await startBootstrappedWorld(dialect, { name: 'backups', repositories: async () => undefined });
    }, 240_000);

    afterAll(async () => {
      await world?.close();
    }, 60_000);

    async function api<T>(method: string, url: string, body?: unknown, expected = [200, 201, 202, 204]): Promise<T> {
      if (world === undefined) throw new Error('the server did not start');
      const response = await fetch(`${world.server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${world.server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!expected.includes(response.status)) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
      let last: T | undefined;
      await vi
        .waitFor(
          async () => {
            last = await read();
            expect(done(last)).toBe(true);
          },
          { timeout: 120_000, interval: 250 },
        )
        .catch(() => undefined);
      if (last === undefined || !done(last)) throw new Error(`${what}: last ${JSON.stringify(last)}\n${world?.server.output().split('\n').slice(-30).join('\n')}`);
      return last;
    }

    it('backs up deployed databases with their engines’ tools, lists them with their size, and removes them with their files', { timeout: STEP_TIMEOUT_MS }, async () => {
      if (world === undefined) throw new Error('the server did not start');
      const organizationId = world.server.organizationId;
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', ...LOCAL_CLUSTER });
      await api('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
      await settled(() => api<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`), (status) => status.status === 'DEPLOYED', 'the cluster deploys');
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });

      const wanted = [
        { name: 'orders', type: 'POSTGRESQL', version: '15', suffix: 'dump' },
        { name: 'accounts', type: 'MYSQL', version: '8.0', suffix: 'sql' },
        { name: 'sessions', type: 'REDIS', version: '7', suffix: 'rdb' },
      ];
      const databases = await Promise.all(
        wanted.map(async (database) => {
          const created = await api<{ id: string }>('POST', `/environment/${environment.id}/database`, { name: database.name, type: database.type, version: database.version, mode: 'CONTAINER' });
          await api('POST', `/database/${created.id}/deploy`, {});
          return { ...database, id: created.id };
        }),
      );
      for (const database of databases) {
        await settled(() => api<{ state: string }>('GET', `/database/${database.id}/status`), (status) => status.state === 'DEPLOYED' || /ERROR/.test(status.state), `${database.name} deploys`);
        expect((await api<{ state: string }>('GET', `/database/${database.id}/status`)).state).toBe('DEPLOYED');
      }

      // A row in the PostgreSQL database, written on its server's own port (the deployment's log names it).
      const orders = databases[0]!;
      const ordersStatus = await api<{ deployment_request_id: string }>('GET', `/database/${orders.id}/status`);
      const log = (await api<{ results: Array<{ message: string }> }>('GET', `/database/${orders.id}/log?deploymentId=${ordersStatus.deployment_request_id}`)).results.map((line) => line.message).join('\n');
      const port = Number(/POSTGRESQL listens on 127\.0\.0\.1:(\d+)/.exec(log)?.[1]);
      const credentials = await api<{ login: string; password: string }>('GET', `/database/${orders.id}/masterCredentials`);
      const client = new pg.Client({ host: '127.0.0.1', port, user: credentials.login, password: credentials.password, database: 'postgres' });
      await client.connect();
      const databaseName = (await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')")).rows[0]?.datname ?? 'postgres';
      await client.end();
      const writer = new pg.Client({ host: '127.0.0.1', port, user: credentials.login, password: credentials.password, database: databaseName });
      await writer.connect();
      await writer.query("CREATE TABLE shipments (id int PRIMARY KEY, harbour text); INSERT INTO shipments VALUES (1, 'rotterdam-backup-marker')");
      await writer.end();

      for (const database of databases) await api('POST', `/database/${database.id}/backup`, { name: 'nightly', message: `backup of ${database.name}` });
      for (const database of databases) {
        const [backup] = await settled(
          async () => (await api<{ results: BackupAnswer[] }>('GET', `/database/${database.id}/backup`)).results,
          (results) => results[0]?.status.state === 'READY' || results[0]?.status.state === 'DEPLOYMENT_ERROR',
          `the backup of ${database.name}`,
        );
        expect(backup, JSON.stringify(backup)).toMatchObject({ name: 'nightly', engine: database.type, failure: null, status: { state: 'READY', status_details: { status: 'SUCCESS' } } });
        expect(backup?.size_bytes).toBeGreaterThan(0);
        const file = path.join(world.dataDir, 'backups', database.id, `${backup?.id}.${database.suffix}`);
        expect((await stat(file)).size).toBe(backup?.size_bytes);
        expect((await stat(file)).mode & 0o077).toBe(0);
        Object.assign(database, { backupId: backup?.id, file });
      }

      // The files are what their engines restore from.
      const [postgresFile, mysqlFile, redisFile] = databases.map((database) => (database as unknown as { file: string }).file) as [string, string, string];
      const restored = await run(path.join(defaultPostgresBinDir(), 'pg_restore'), ['--data-only', '--file=-', postgresFile]);
      expect(restored.stdout).toContain('rotterdam-backup-marker');
      expect((await run('head', ['-c', '4096', mysqlFile])).stdout).toMatch(/MariaDB dump|MySQL dump/);
      expect((await run('head', ['-c', '5', redisFile])).stdout).toBe('REDIS');

      for (const database of databases) {
        const backupId = (database as unknown as { backupId: string }).backupId;
        await api('DELETE', `/database/${database.id}/backup/${backupId}`);
        expect((await api<{ results: BackupAnswer[] }>('GET', `/database/${database.id}/backup`)).results).toEqual([]);
        expect(await readdir(path.join(world.dataDir, 'backups', database.id))).toEqual([]);
      }
    });
  });
}
