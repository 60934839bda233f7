import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import type { TestGitServer } from './support/git-server.ts';
import { createSampleRepository, type HelloAnswer, portAccepts, processAlive, processesUnder, requestThroughProxy, type HostProcess, type VisitsAnswer } from './support/sample-apps.ts';
import { type SlipwayServer } from './support/slipway-process.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';
import type { Static } from 'typebox';
import type { Link } from '../src/modules/services/services.schemas.ts';

/**
 * Issue 9's "done means", end to end through the public REST API of a real `slipway server` child process — the
 * embedded default as `npm start` runs it: its in-process agent with the local driver runs the workloads of the LOCAL
 * cluster, its reverse proxy on SLIPWAY_APPS_PORT routes each service's own hostname,
 * `<service>-<environment>-<8 characters of its id>.localhost`, which its links name, to them. A git server on
 * 127.0.0.1 serves the `visits` sample (test/support/sample-apps.ts), hence SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS.
 *
 * The story: a PostgreSQL database and an application from git with a public port, in one environment; the database
 * deploys, then the application; through the proxy the application answers a row it wrote into that database with
 * its built-in connection URI (and the test reads the same row with the same URI); the deployment's log holds the
 * build's output; a changed variable makes the application OUT_OF_DATE and a redeploy serves the new value; a second
 * application (the `hello` sample) reaches the first at PLATFORM_APPLICATION_WEB_HOSTNAME on its internal port; a second
 * organization (bootstrapped too, so allowed LOCAL clusters) deploys a same-named application in a same-named
 * environment on a LOCAL cluster of its own, behind the same proxy: each gets its own hostname and both serve; stop
 * leaves no process of the application and its port closed; deleting both leaves no process under the server's data
 * directory and every port closed. Nothing here is timed: waits poll with generous deadlines.
 */

const STEP_TIMEOUT_MS = 180_000;
const SETTLE_DEADLINE_MS = 150_000;
const POLL_MS = 250;

interface StatusView {
  id: string;
  state: string;
  service_deployment_status: string;
  deployment_request_id: string | null;
  message: string | null;
}

interface LogLine {
  message: string;
  stream: string;
  seq: number;
  deployment_id: string;
}

/** A link as the reference's Link schema answers it. */
type LinkView = Static<typeof Link>;

interface ResolvedVariable {
  key: string;
  value?: string;
}

/** States a service action ends in when it did not reach what was asked. */
function failedState(state: string): boolean {
  return state.endsWith('_ERROR') || state === 'CANCELED';
}

for (const dialect of TEST_DIALECTS) {
  describe(`local deployment end to end: git application + PostgreSQL behind the proxy [${dialect}]`, () => {
    let server: (SlipwayServer & { organizationId: string; apiToken: string }) | undefined;
    let gitServer: TestGitServer | undefined;
    let dataDir = '';
    let token: string;
    let organizationId: string;
    let appsPort: number;

    // What the story builds, step by step.
    let environmentId: string;
    let databaseId: string;
    let applicationId: string;
    let greetingVariableId: string;
    let databaseUri: string;
    /** The database server's own port on 127.0.0.1, and the address of its own the driver gave it. */
    let databasePort: number;
    let databaseAddress: string;
    let firstAnswer: VisitsAnswer;
    let redeployedAnswer: VisitsAnswer;
    /** The application's own hostname, read from its link once it exists. */
    let hostname = '';
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;

    beforeAll(async () => {
      world = await startBootstrappedWorld(dialect, {
        name: 'local-e2e',
        repositories: async (root) => {
          await createSampleRepository(root, 'visits', 'visits');
          await createSampleRepository(root, 'hello', 'hello');
        },
      });
      ({ server, gitServer, dataDir, appsPort } = world);
      token = server.apiToken;
      organizationId = server.organizationId;
    }, 240_000);

    afterAll(async () => {
      await world?.close();
    }, 60_000);

    async function api<T>(method: string, url: string, body?: unknown, expected = [200, 201, 202, 204]): Promise<T> {
      return apiAs<T>(token, method, url, body, expected);
    }

    /** The API as the holder of `bearer` (another organization's token). */
    async function apiAs<T>(bearer: string, method: string, url: string, body?: unknown, expected = [200, 201, 202, 204]): Promise<T> {
      if (server === undefined) throw new Error('the server did not start');
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!expected.includes(response.status)) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    /** The server's warnings and errors so far (its agent's trouble among them), to explain a failed wait. */
    function serverTrouble(): string {
      const lines = (server?.output() ?? '').split('\n').filter((line) => /"level":(40|50|60)/.test(line) || (line !== '' && !line.startsWith('{')));
      return `the server's warnings and errors:\n${lines.slice(-40).join('\n')}`;
    }

    async function logOf(kindPath: string, id: string, deploymentId: string, bearer = token): Promise<LogLine[]> {
      return (await apiAs<{ results: LogLine[] }>(bearer, 'GET', `/${kindPath}/${id}/log?deploymentId=${deploymentId}`)).results;
    }

    /** Polls the service's status until it is `wanted`; a failed state or the deadline throws with the log. */
    async function waitForState(kindPath: string, id: string, wanted: string, bearer = token): Promise<StatusView> {
      let last: StatusView | undefined;
      const settled = await vi
        .waitFor(
          async () => {
            last = await apiAs<StatusView>(bearer, 'GET', `/${kindPath}/${id}/status`);
            expect(last.state === wanted || failedState(last.state), `${kindPath} ${id} to be ${wanted}: last ${last.state}`).toBe(true);
            return last;
          },
          { timeout: SETTLE_DEADLINE_MS, interval: POLL_MS },
        )
        // At the deadline, the last status read is explained below with its log (no status read at all: the error as is).
        .catch((error: unknown) => {
          if (last === undefined) throw error;
          return last;
        });
      if (settled.state === wanted) return settled;
      const log = settled.deployment_request_id === null ? [] : await logOf(kindPath, id, settled.deployment_request_id, bearer);
      const lines = log.map((line) => `  [${line.stream}] ${line.message}`).join('\n');
      throw new Error(`${kindPath} ${id} is ${settled.state} (${settled.message ?? 'no message'}), not ${wanted}; its log:\n${lines}\n${serverTrouble()}`);
    }

    async function visits(): Promise<VisitsAnswer> {
      const answer = await requestThroughProxy(appsPort, hostname);
      expect(answer.status, answer.body).toBe(200);
      return JSON.parse(answer.body) as VisitsAnswer;
    }

    /** The processes under the data directory, once nothing but `keep` is left (or the deadline passed: those left). */
    async function processesSettled(keep: (process: HostProcess) => boolean): Promise<HostProcess[]> {
      let found: HostProcess[] = [];
      await vi
        .waitFor(
          async () => {
            found = await processesUnder(dataDir);
            expect(found.every(keep)).toBe(true);
          },
          { timeout: SETTLE_DEADLINE_MS, interval: POLL_MS },
        )
        // The caller asserts on what is left, naming it.
        .catch(() => undefined);
      return found;
    }

    /** Whether `condition` holds by the deadline (polled). */
    async function eventually(condition: () => Promise<boolean>): Promise<boolean> {
      return vi
        .waitFor(
          async () => {
            expect(await condition()).toBe(true);
            return true;
          },
          { timeout: SETTLE_DEADLINE_MS, interval: POLL_MS },
        )
        .catch(() => false);
    }

    /** The application's links, and the hostname of its own (the default link). */
    async function ownLink(id: string, bearer = token): Promise<{ links: LinkView[]; hostname: string }> {
      const links = (await apiAs<{ results: LinkView[] }>(bearer, 'GET', `/application/${id}/link`)).results;
      const own = links.find((link) => link.is_default);
      if (own === undefined) throw new Error(`application ${id} has no default link: ${JSON.stringify(links)}`);
      return { links, hostname: new URL(own.url).hostname };
    }

    /** A LOCAL cluster, deployed, as the holder of `bearer` in `organization`. */
    async function deployedLocalCluster(organization: string, bearer = token): Promise<string> {
      const cluster = await apiAs<{ id: string }>(bearer, 'POST', `/organization/${organization}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      await apiAs(bearer, 'POST', `/organization/${organization}/cluster/${cluster.id}/deploy`);
      const status = () => apiAs<{ status: string }>(bearer, 'GET', `/organization/${organization}/cluster/${cluster.id}/status`);
      expect(await eventually(async () => (await status()).status === 'DEPLOYED')).toBe(true);
      return cluster.id;
    }

    const portClosed = (port: number) => eventually(async () => !(await portAccepts(port)));
    const processEnded = (pid: number) => eventually(async () => !(await processAlive(pid)));
    const processesEnded = async (pids: readonly number[]) => (await Promise.all(pids.map(processEnded))).every(Boolean);
    /**
     * The host's pids of a service's processes: those working in (or naming) its checkouts. An app's own `pid` is of
     * no use here: confined, it lives in a PID namespace of its own, where its pid means nothing on the host.
     */
    const hostPidsOf = async (serviceId: string) => (await processesUnder(path.join(dataDir, 'agent', 'sources', serviceId))).map((found) => found.pid);
    let firstHostPids: number[] = [];
    let redeployedHostPids: number[] = [];

    const isPostgresServer = (found: HostProcess) => path.basename(found.executable) === 'postgres';
    const describeProcesses = (found: HostProcess[]) => found.map((entry) => `${entry.pid} ${entry.executable} (cwd ${entry.cwd}): ${entry.commandLine}`).join('\n');

    it('deploys the database, then the application, which serves through the proxy a row it wrote with the built-in URI', { timeout: STEP_TIMEOUT_MS }, async () => {
      if (gitServer === undefined) throw new Error('the git server did not start');
      // The bootstrap's organization may have LOCAL clusters (the operator's grant, docs/clusters.md).
      const clusterId = await deployedLocalCluster(organizationId);
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      environmentId = (await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: clusterId, mode: 'STAGING' })).id;

      databaseId = (await api<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: 'orders-db', type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' })).id;
      const application = await api<{ id: string }>('POST', `/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: gitServer.urlOf('visits'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'visits' },
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: {
          readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 30 },
        },
      });
      applicationId = application.id;
      // Its own hostname, for life: its names and 8 characters of its id, on the server's apps proxy.
      const own = await ownLink(applicationId);
      hostname = own.hostname;
      expect(own.links).toEqual([
        {
          service_id: applicationId,
          service_type: 'APPLICATION',
          url: expect.stringMatching(new RegExp(`^http://web-staging-[a-z2-7]{8}\\.localhost:${appsPort}$`)),
          internal_port: 8080,
          external_port: appsPort,
          is_platform_domain: true,
          is_default: true,
        },
      ]);
      greetingVariableId = (await api<{ id: string }>('POST', `/application/${applicationId}/environmentVariable`, { key: 'GREETING', value: 'hello from the first deploy' })).id;

      await api('POST', `/database/${databaseId}/deploy`, {});
      const databaseStatus = await waitForState('database', databaseId, 'DEPLOYED');
      expect(databaseStatus.service_deployment_status).toBe('UP_TO_DATE');

      // The built-ins the application receives, revealed for the operator, name the database by intent: its internal
      // hostname and its engine's port. Where that name leads on this host is the driver's placement, which the
      // database's deployment log tells: an address of its own, forwarded to the server's port.
      const resolved = await api<{ results: ResolvedVariable[] }>('GET', `/application/${applicationId}/resolvedVariables?reveal=true`);
      const value = (key: string) => resolved.results.find((variable) => variable.key === key)?.value;
      databaseUri = value('PLATFORM_DATABASE_ORDERS_DB_CONNECTION_URI') ?? '';
      const databaseHostname = `orders-db.${environmentId}.slipway.internal`;
      expect(databaseUri).toMatch(new RegExp(`^postgresql://[^@]+@${databaseHostname.replaceAll('.', '\\.')}:5432/`));
      expect(value('PLATFORM_DATABASE_ORDERS_DB_PORT')).toBe('5432');
      const databaseLog = (await logOf('database', databaseId, databaseStatus.deployment_request_id as string)).map((line) => line.message).join('\n');
      databasePort = Number(/POSTGRESQL listens on 127\.0\.0\.1:(\d+)/.exec(databaseLog)?.[1]);
      databaseAddress = new RegExp(`orders-db is reached inside its environment as ${databaseHostname.replaceAll('.', '\\.')}, on (127\\.[\\d.]+):5432`).exec(databaseLog)?.[1] ?? '';
      expect(databaseAddress, databaseLog).toMatch(/^127\.\d+\.\d+\.\d+$/);
      expect(await portAccepts(databasePort)).toBe(true);
      expect(await portAccepts(5432, databaseAddress)).toBe(true);

      const deploy = await api<StatusView>('POST', `/application/${applicationId}/deploy`, {});
      const deployed = await waitForState('application', applicationId, 'DEPLOYED');
      expect(deployed.deployment_request_id).toBe(deploy.deployment_request_id);
      expect(deployed.service_deployment_status).toBe('UP_TO_DATE');

      firstAnswer = await visits();
      expect(firstAnswer).toMatchObject({ app: 'visits', greeting: 'hello from the first deploy' });
      expect(firstAnswer.visits).toEqual([expect.objectContaining({ build: firstAnswer.build, greeting: 'hello from the first deploy' })]);
      // The row is in the database service itself, read with the URI the platform gave the application, its name
      // resolved as the driver resolved it for the application.
      const reader = new pg.Client({ connectionString: databaseUri.replace(`@orders-db.${environmentId}.slipway.internal:`, `@${databaseAddress}:`) });
      await reader.connect();
      try {
        const rows = await reader.query<{ build: string }>('SELECT build FROM visits ORDER BY id');
        expect(rows.rows.map((row) => row.build)).toEqual([firstAnswer.build]);
      } finally {
        await reader.end();
      }
      // The instance runs under the server's data directory, where the checks below look for what is left.
      firstHostPids = await hostPidsOf(applicationId);
      expect(firstHostPids.length).toBeGreaterThan(0);

      // The deployment's log holds the build's own output: the line the build step printed, with its id.
      const log = await logOf('application', applicationId, deployed.deployment_request_id as string);
      expect(log.map((line) => line.message)).toContainEqual(expect.stringContaining(`sample build: stamped build ${firstAnswer.build}`));
    });

    it('shows OUT_OF_DATE after a variable changes, and serves the new value after a redeploy', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(firstAnswer, 'the first deployment did not serve').toBeDefined();
      await api('PUT', `/application/${applicationId}/environmentVariable/${greetingVariableId}`, { key: 'GREETING', value: 'hello after the redeploy' });
      const changed = await api<StatusView>('GET', `/application/${applicationId}/status`);
      expect(changed).toMatchObject({ state: 'DEPLOYED', service_deployment_status: 'OUT_OF_DATE' });
      // What runs is unchanged until the redeploy.
      expect((await visits()).greeting).toBe('hello from the first deploy');

      await api('POST', `/application/${applicationId}/redeploy`);
      const redeployed = await waitForState('application', applicationId, 'DEPLOYED');
      expect(redeployed.service_deployment_status).toBe('UP_TO_DATE');
      redeployedAnswer = await visits();
      expect(redeployedAnswer.greeting).toBe('hello after the redeploy');
      expect(redeployedAnswer.build).not.toBe(firstAnswer.build);
      // The new instance wrote its row beside the first one: the database kept its data across the redeploy.
      expect(redeployedAnswer.visits.map((visit) => [visit.build, visit.greeting])).toEqual([
        [firstAnswer.build, 'hello from the first deploy'],
        [redeployedAnswer.build, 'hello after the redeploy'],
      ]);
      // The previous instance is gone and its port closed.
      expect(await processesEnded(firstHostPids)).toBe(true);
      redeployedHostPids = await hostPidsOf(applicationId);
      expect(redeployedHostPids.length).toBeGreaterThan(0);
      expect(redeployedHostPids.filter((pid) => firstHostPids.includes(pid))).toEqual([]);
      expect(await portClosed(firstAnswer.port)).toBe(true);
      const log = await logOf('application', applicationId, redeployed.deployment_request_id as string);
      expect(log.map((line) => line.message)).toContainEqual(expect.stringContaining(`sample build: stamped build ${redeployedAnswer.build}`));
    });

    it('is reached by another application of its environment at its built-in hostname on its internal port', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(redeployedAnswer, 'the redeployment did not serve').toBeDefined();
      if (gitServer === undefined) throw new Error('the git server did not start');
      const front = await api<{ id: string }>('POST', `/environment/${environmentId}/application`, {
        name: 'front',
        git_repository: { url: gitServer.urlOf('hello'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'hello' },
        ports: [{ internal_port: 3000, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: {},
      });
      await api('POST', `/application/${front.id}/environmentVariable`, { key: 'UPSTREAM_SERVICE', value: 'WEB' });
      await api('POST', `/application/${front.id}/environmentVariable`, { key: 'UPSTREAM_PORT', value: '8080' });
      const resolved = await api<{ results: ResolvedVariable[] }>('GET', `/application/${front.id}/resolvedVariables?reveal=true`);
      expect(resolved.results.find((variable) => variable.key === 'PLATFORM_APPLICATION_WEB_HOSTNAME')?.value).toBe(`web.${environmentId}.slipway.internal`);
      await api('POST', `/application/${front.id}/deploy`, {});
      await waitForState('application', front.id, 'DEPLOYED');

      // front → web's own address and declared port → the instance of web that serves now (not through the proxy).
      const frontHostname = (await ownLink(front.id)).hostname;
      expect(frontHostname).toMatch(/^front-staging-[a-z2-7]{8}\.localhost$/);
      const relayed = await requestThroughProxy(appsPort, frontHostname, '/upstream');
      expect(relayed.status, relayed.body).toBe(200);
      const body = JSON.parse(relayed.body) as { app: string; build: string; upstream: VisitsAnswer };
      expect(body.upstream).toMatchObject({ app: 'visits', build: redeployedAnswer.build, port: redeployedAnswer.port });

      const frontPids = await hostPidsOf(front.id);
      expect(frontPids.length).toBeGreaterThan(0);
      await api('DELETE', `/application/${front.id}`);
      expect(await processesEnded(frontPids)).toBe(true);
    });

    it("gives another organization's same-named environment and application a hostname of its own, both serve, each its own; deleting that organization leaves nothing of it running", { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(redeployedAnswer, 'the redeployment did not serve').toBeDefined();
      if (gitServer === undefined || server === undefined) throw new Error('the git server or the server did not start');
      // Another tenant of the same installation: the operator bootstraps it too, which allows it LOCAL clusters.
      const bootstrap = await server.operator(['admin', 'bootstrap', '--email', 'globex@example.com', '--organization', 'Globex', '--json']);
      expect(bootstrap.code, bootstrap.stderr).toBe(0);
      const globex = JSON.parse(bootstrap.stdout) as { organization_id: string; api_token: string };
      const clusterId = await deployedLocalCluster(globex.organization_id, globex.api_token);
      const project = await apiAs<{ id: string }>(globex.api_token, 'POST', `/organization/${globex.organization_id}/project`, { name: 'shop' });
      const environment = await apiAs<{ id: string }>(globex.api_token, 'POST', `/project/${project.id}/environment`, { name: 'staging', cluster: clusterId, mode: 'STAGING' });
      const theirs = await apiAs<{ id: string }>(globex.api_token, 'POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: gitServer.urlOf('hello'), branch: 'main', provider: 'GITHUB', owner: 'globex', name: 'hello' },
        ports: [{ internal_port: 3000, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: {},
      });
      const theirHostname = (await ownLink(theirs.id, globex.api_token)).hostname;
      expect(theirHostname).toMatch(/^web-staging-[a-z2-7]{8}\.localhost$/);
      expect(theirHostname).not.toBe(hostname);
      // Neither tenant learns where the other's service is.
      await apiAs(globex.api_token, 'GET', `/application/${applicationId}/link`, undefined, [404]);
      await api('GET', `/application/${theirs.id}/link`, undefined, [404]);

      await apiAs(globex.api_token, 'POST', `/application/${theirs.id}/deploy`, {});
      await waitForState('application', theirs.id, 'DEPLOYED', globex.api_token);
      // Behind the one proxy of this host, each hostname reaches its own tenant's application.
      const theirAnswer = await requestThroughProxy(appsPort, theirHostname);
      expect(theirAnswer.status, theirAnswer.body).toBe(200);
      const hello = JSON.parse(theirAnswer.body) as HelloAnswer;
      expect(hello.app).toBe('hello');
      expect(await visits()).toMatchObject({ app: 'visits', build: redeployedAnswer.build, port: redeployedAnswer.port });

      const theirPids = await hostPidsOf(theirs.id);
      expect(theirPids.length).toBeGreaterThan(0);
      // The whole tenant goes: its application's processes end, its hostname stops routing, its token stops working.
      await apiAs(globex.api_token, 'DELETE', `/organization/${globex.organization_id}`);
      expect(await processesEnded(theirPids)).toBe(true);
      expect((await requestThroughProxy(appsPort, theirHostname)).status).toBe(404);
      await apiAs(globex.api_token, 'GET', `/organization/${globex.organization_id}`, undefined, [401]);
      expect(await visits()).toMatchObject({ app: 'visits', build: redeployedAnswer.build, port: redeployedAnswer.port });
    });

    it('stops the application: no process of it is left, its port is closed, the proxy no longer routes to it', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(redeployedAnswer, 'the redeployment did not serve').toBeDefined();
      await api('POST', `/application/${applicationId}/stop`);
      await waitForState('application', applicationId, 'STOPPED');
      // Only the database server is left under the data directory.
      const left = await processesSettled(isPostgresServer);
      expect(left.filter((found) => !isPostgresServer(found)), describeProcesses(left)).toEqual([]);
      expect(left.length).toBeGreaterThan(0);
      expect(await processesEnded(redeployedHostPids)).toBe(true);
      expect(await portClosed(redeployedAnswer.port)).toBe(true);
      expect((await requestThroughProxy(appsPort, hostname)).status).toBe(404);
      expect(await portAccepts(databasePort)).toBe(true);
    });

    it('deletes the application and the database: nothing runs under the data directory and every port is closed', { timeout: STEP_TIMEOUT_MS }, async () => {
      expect(redeployedAnswer, 'the redeployment did not serve').toBeDefined();
      await api('DELETE', `/application/${applicationId}`);
      await api('DELETE', `/database/${databaseId}`);
      await api('GET', `/application/${applicationId}`, undefined, [404]);
      await api('GET', `/database/${databaseId}`, undefined, [404]);
      const left = await processesSettled(() => false);
      expect(left, describeProcesses(left)).toEqual([]);
      expect(await portClosed(databasePort)).toBe(true);
      expect(await portAccepts(5432, databaseAddress)).toBe(false);
      expect(await portAccepts(redeployedAnswer.port)).toBe(false);
      expect((await requestThroughProxy(appsPort, hostname)).status).toBe(404);
    });
  });
}
