import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { runSlipway, SLIPWAY_BIN, spawnSlipway, startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 8's CLI flow, with the real `slipway` executable as child processes against a real `slipway server`: the
 * operator bootstraps the installation (an ADMIN API token), then `slipway env create`, `slipway service create`,
 * `slipway var set`, `slipway deploy` and `slipway logs` take a deployment request to QUEUED with its variable
 * snapshot (secrets sealed), waiting for the cluster's agent.
 */

const SECRET = 'cli-secret-value-never-printed';

async function onPostgres(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

for (const dialect of TEST_DIALECTS) {
  describe(`slipway CLI: environment, service, variables, deploy, logs [${dialect}]`, () => {
    let server: SlipwayServer;
    let dataDir: string;
    let home: string;
    let token: string;
    let organizationId: string;
    const schema = `test_${newId().replaceAll('-', '')}`;
    const postgresUrl = process.env.SLIPWAY_TEST_DATABASE_URL ?? '';
    /** Where both the operator's bootstrap and the server find the installation's database. */
    const database: Record<string, string> = {};

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'slipway-cli-services-'));
      home = await mkdtemp(path.join(tmpdir(), 'slipway-cli-home-'));
      database.SLIPWAY_DATA_DIR = dataDir;
      if (dialect === 'postgres') {
        await onPostgres(postgresUrl, `CREATE SCHEMA ${schema}`);
        const url = new URL(postgresUrl);
        url.searchParams.set('options', `-c timezone=UTC -c search_path=${schema}`);
        database.SLIPWAY_DATABASE_URL = url.href;
      }
      const bootstrap = await runSlipway(['admin', 'bootstrap', '--email', 'ops@example.com', '--organization', 'Acme', '--json'], {
        ...database,
        SLIPWAY_LOG_LEVEL: 'silent',
      });
      expect(bootstrap.code, bootstrap.stderr).toBe(0);
      const created = JSON.parse(bootstrap.stdout) as { organization_id: string; api_token: string };
      token = created.api_token;
      organizationId = created.organization_id;
      server = await startSlipwayServer(dialect, database);
    }, 240_000);

    afterAll(async () => {
      await server?.close();
      await rm(dataDir, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
      if (dialect === 'postgres') await onPostgres(postgresUrl, `DROP SCHEMA ${schema} CASCADE`);
    }, 60_000);

    function env(): Record<string, string> {
      return { HOME: home, XDG_CONFIG_HOME: home, SLIPWAY_URL: server.baseUrl, SLIPWAY_TOKEN: token, SLIPWAY_ORGANIZATION: organizationId };
    }

    async function succeeds(args: string[]): Promise<string> {
      const result = await runSlipway(args, env());
      expect(result.stderr, `slipway ${args.join(' ')}`).toBe('');
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}`).toBe(0);
      return result.stdout;
    }

    async function json<T>(args: string[]): Promise<T> {
      return JSON.parse(await succeeds([...args, '--json'])) as T;
    }

    async function fails(args: string[]): Promise<string> {
      const result = await runSlipway(args, env());
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}`).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^slipway: [^\n]+\n$/);
      return result.stderr;
    }

    it('takes a deployment to QUEUED with its snapshot, and shows its log', async () => {
      // The organization's one cluster, which environments go on when none is named.
      const cluster = await fetch(`${server.baseUrl}/organization/${organizationId}/cluster`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' }),
      });
      expect(cluster.status).toBe(201);

      await succeeds(['projects', 'create', 'shop']);
      const environment = await json<{ id: string; name: string; mode: string }>(['env', 'create', 'staging', '--project', 'shop', '--mode', 'staging']);
      expect(environment).toMatchObject({ name: 'staging', mode: 'STAGING' });
      expect(await succeeds(['env', 'list', '--project', 'shop'])).toContain(environment.id);

      const created = await succeeds([
        'service',
        'create',
        'application',
        'web',
        '--env',
        environment.id,
        '--repository',
        'https://github.com/acme/web',
        '--branch',
        'main',
      ]);
      const applicationId = /\(([0-9a-f-]{36})\)/.exec(created)?.[1] as string;
      expect(created).toBe(`Created application web (${applicationId}).\n`);
      expect(await fails(['service', 'create', 'application', 'web', '--env', environment.id, '--repository', 'https://github.com/acme/web'])).toMatch(/already exists|taken/);

      expect(await succeeds(['var', 'set', 'GREETING', 'from-project', '--project', 'shop'])).toContain('(PROJECT)');
      expect(await succeeds(['var', 'set', 'REGION', 'eu', '--env', environment.id])).toContain('(ENVIRONMENT)');
      expect(await succeeds(['var', 'set', 'GREETING', 'from-web', '--service', 'web', '--env', environment.id])).toContain('(APPLICATION)');
      expect(await succeeds(['var', 'set', 'WHERE', '$REGION', '--service', applicationId])).toContain('(APPLICATION)');
      const secret = await succeeds(['var', 'set', 'API_TOKEN', SECRET, '--service', applicationId, '--secret']);
      expect(secret).toContain('Set secret API_TOKEN');
      expect(secret).not.toContain(SECRET);
      expect(await fails(['var', 'set', 'PLATFORM_OWN', 'x', '--env', environment.id])).toMatch(/reserved/);

      const deployed = await succeeds(['deploy', 'web', '--env', environment.id, '--commit', 'abc1234555555555555555555555555555555555']);
      expect(deployed).toMatch(new RegExp(`^Deployment [0-9a-f-]{36} of application web: QUEUED\\n`));
      expect(deployed).toContain("deploy queued: waiting for the cluster's agent to take it\n");
      // Sealed: the secret, and the hidden built-ins (SPEC.md rule 5).
      expect(deployed).toMatch(/Variables snapshot [0-9a-f]{12}: \d+ variables \([1-9]\d* sealed\)/);
      expect(deployed).not.toContain(SECRET);

      // The same deployment as JSON: the snapshot's resolved values, the secret only as sealed.
      const again = await fails(['deploy', applicationId]);
      expect(again).toMatch(/cannot deploy service: it is QUEUED/);
      const status = await json<{ state: string; message: string; deployment_request_id: string }>(['status', applicationId]);
      expect(status).toMatchObject({ state: 'QUEUED', message: "deploy queued: waiting for the cluster's agent to take it" });
      const history = await fetch(`${server.baseUrl}/application/${applicationId}/deploymentHistory/${status.deployment_request_id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const deployment = (await history.json()) as { git_commit_id: string; variables: { results: Array<{ key: string; scope: string; sealed: boolean; value?: string }> } };
      expect(deployment.git_commit_id).toBe('abc1234555555555555555555555555555555555');
      const byKey = new Map(deployment.variables.results.map((variable) => [variable.key, variable]));
      expect(byKey.get('GREETING')).toMatchObject({ scope: 'APPLICATION', value: 'from-web', sealed: false });
      expect(byKey.get('REGION')).toMatchObject({ scope: 'ENVIRONMENT', value: 'eu' });
      expect(byKey.get('WHERE')).toMatchObject({ value: 'eu' });
      expect(byKey.get('API_TOKEN')).toEqual(expect.objectContaining({ sealed: true }));
      expect(byKey.get('API_TOKEN')).not.toHaveProperty('value');

      const logs = await succeeds(['logs', 'web', '--env', environment.id]);
      const lines = logs.trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^\S+ \[system\] deploy of application web requested by token:bootstrap$/);
      expect(lines[1]).toMatch(/\[system\] variables snapshot [0-9a-f]{12}: \d+ variable\(s\)$/);
      expect(lines[2]).toMatch(/\[system\] deploy queued: waiting for the cluster's agent to take it$/);

      const listed = await json<{ results: Array<{ name: string; kind: string; state: string; deployment_status: string }> }>(['service', 'list', '--env', environment.id]);
      expect(listed.results).toEqual([expect.objectContaining({ name: 'web', kind: 'APPLICATION', state: 'QUEUED', deployment_status: 'NEVER_DEPLOYED' })]);
      expect(await fails(['deploy', 'nothing-here', '--env', environment.id])).toMatch(/no service named "nothing-here"/);
      expect(await fails(['logs', 'web'])).toMatch(/--env/);

      // Issue 21: --env by name (within --project, else any project of the organization), and each service's URL.
      const api = await json<{ id: string; name: string }>([
        'service',
        'create',
        'application',
        'api',
        '--env',
        'staging',
        '--repository',
        'https://github.com/acme/api',
        '--settings',
        JSON.stringify({ ports: [{ internal_port: 8080, publicly_accessible: true, is_default: true }] }),
      ]);
      expect(api.name).toBe('api');
      const withUrls = await json<{ results: Array<{ name: string; kind: string; state: string; deployment_status: string; url: string | null }> }>([
        'service',
        'list',
        '--env',
        'STAGING',
      ]);
      const apiRow = withUrls.results.find((row) => row.name === 'api');
      expect(apiRow).toMatchObject({ kind: 'APPLICATION', state: expect.any(String), deployment_status: expect.any(String), url: expect.stringMatching(/^http:\/\/\S+$/) });
      expect(withUrls.results.find((row) => row.name === 'web')).toMatchObject({ state: 'QUEUED', url: null });
      const table = (await succeeds(['service', 'list', '--env', 'staging', '--project', 'shop'])).trimEnd().split('\n');
      expect(table[0]).toMatch(/^ID +NAME +KIND +STATE +DEPLOYMENT +URL$/);
      expect(table.find((line) => line.includes(api.id))).toContain(apiRow?.url as string);
      expect(table.find((line) => line.includes(applicationId))).toMatch(/ QUEUED +NEVER_DEPLOYED +-$/);
      expect(await succeeds(['status', 'web', '--env', 'staging'])).toMatch(/^application web: QUEUED/);
      expect(await succeeds(['var', 'set', 'ZONE', 'a', '--env', 'staging'])).toContain('on environment staging (ENVIRONMENT)');
      expect(await fails(['service', 'list', '--env', 'nowhere'])).toBe('slipway: the organization has no environment named "nowhere"; there are: staging (project shop)\n');
      expect(await fails(['deploy', 'web', '--env', 'nowhere', '--project', 'shop'])).toBe('slipway: project shop has no environment named "nowhere"; there are: staging\n');

      // A reader that goes away before the command prints: the command ends quietly, with status 0.
      const piped = spawnSlipway(['service', 'list', '--env', environment.id], env());
      piped.stdin?.end();
      piped.stdout?.destroy();
      const closedEarly = await piped.result;
      expect(closedEarly.stderr).toBe('');
      expect(closedEarly.code).toBe(0);
      // …and so does a shell pipeline into `head -1` (the command's own status, through a file descriptor).
      const pipeline = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const shell = spawn('sh', ['-c', `{ "$0" "$1" service list --env staging --json; echo $? >&3; } 3>&2 | head -1`, process.execPath, SLIPWAY_BIN], {
          env: { PATH: process.env.PATH, ...env() },
        });
        let stdout = '';
        let stderr = '';
        shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        shell.on('error', reject);
        shell.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(pipeline).toEqual({ code: 0, stdout: '{\n', stderr: '0\n' });

      // The same name in two projects: --project tells them apart.
      await succeeds(['projects', 'create', 'blog']);
      await succeeds(['env', 'create', 'staging', '--project', 'blog']);
      expect(await fails(['service', 'list', '--env', 'staging'])).toMatch(/several environments of the organization are named "staging": .*\(project shop\).*\(project blog\)|several environments of the organization are named "staging": .*\(project blog\).*\(project shop\)/);
      expect(await succeeds(['service', 'list', '--env', 'staging', '--project', 'blog'])).toBe('No services.\n');
      // Each command is a process start (a few seconds on a loaded machine): the story takes a while.
    }, 300_000);
  });
}
