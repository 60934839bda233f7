import { chmodSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { startGitServer } from '../test/support/git-server.ts';
import { createSampleRepository, killProcessesUnder, portAccepts, processAlive, requestThroughProxy, type HelloAnswer } from '../test/support/sample-apps.ts';
import { freePort, runNodeScript, startBenchRun, startServerProcess, type ServerProcess } from './processes.ts';

/**
 * `npm run bench:deploy`: what deploying on the embedded default costs, through the public REST API of one real
 * Slipway server process (src/main.ts, as `npm start` runs it) on SQLite, whose in-process agent runs the LOCAL
 * cluster's workloads with the local driver and whose reverse proxy (SLIPWAY_APPS_PORT) routes each application's
 * own hostname, `<service>-<environment>-<suffix>.localhost` as its link names it, to them. The `hello` sample (test/support/sample-apps.ts: dependency-free,
 * build = `npm run build`) is served by a git server on 127.0.0.1.
 *
 *   (a) deploy request → first 200 through the proxy: a fresh application each round (create, set GREETING, then
 *       the clock starts at the deploy request: git checkout, build, start, readiness, route); polled every 20 ms.
 *       Goal: median < 3 s.
 *   (b) redeploy under continuous load: autocannon keeps SLIPWAY_BENCH_CONNECTIONS connections busy against the
 *       proxy from 1 s before the redeploy request until 1 s after the new build answers; every answer other than
 *       200 and every connection error or timeout is a failed request. Goal: zero in every round.
 *   (c) PostgreSQL database deploy request → the built-in URI (PLATFORM_DATABASE_<NAME>_CONNECTION_URI, read
 *       revealed from the environment's resolvedVariables) opens a session that runs `SELECT 1`; a fresh database
 *       each round (initdb included); polled every 25 ms. Goal: median < 5 s.
 *   (d) environment deploy request → every application of a fresh environment (a PostgreSQL database and
 *       SLIPWAY_BENCH_ENVIRONMENT_APPS (3) applications) answers through the proxy, on this server (its agent runs
 *       SLIPWAY_AGENT_CONCURRENCY 4 tasks at once) and on a second server whose agent runs one task at a time; the
 *       rounds alternate between the two, and the ratio of their medians is what running tasks side by side buys.
 *
 * Each phase runs one unmeasured round first (cold caches, first npm run, first initdb), then
 * SLIPWAY_BENCH_DEPLOY_ROUNDS (5) measured rounds; medians are over the measured rounds. Services of (a) and (c) are
 * deleted after their round and the next round waits until their process and port are gone. Prints a table and
 * one JSON line. Figures are recorded in docs/benchmarks.md.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const ENVIRONMENT = 'bench';
const FIRST_ANSWER_GOAL_MS = 3_000;
const DATABASE_GOAL_MS = 5_000;
const PROXY_POLL_MS = 20;
const DATABASE_POLL_MS = 25;
const STATUS_POLL_MS = 250;
const SETTLE_TIMEOUT_MS = 180_000;
const LOAD_MARGIN_MS = 1_000;

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

const ROUNDS = positiveInteger('SLIPWAY_BENCH_DEPLOY_ROUNDS', 5);
const CONNECTIONS = positiveInteger('SLIPWAY_BENCH_CONNECTIONS', 10);
const ENVIRONMENT_APPS = positiveInteger('SLIPWAY_BENCH_ENVIRONMENT_APPS', 3);
const PARALLEL_CONCURRENCY = 4;

// The scratch directory, clean-up steps and Ctrl-C handling of this run (bench/processes.ts). When the bench runs as
// root the database servers run as their own account, which must be able to pass through every directory above the
// data directory; the agent opens the data directory and its own, the scratch directory is the bench's to open.
const bench = startBenchRun('slipway-bench-deploy-');
const { scratchDir } = bench;
chmodSync(scratchDir, 0o711);

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

interface StatusView {
  state: string;
  message: string | null;
  deployment_request_id: string | null;
}

/** The public REST API of the server under test, as the bootstrap token. */
class Api {
  private readonly baseUrl: string;
  private readonly token: string;
  constructor(
    baseUrl: string,
    token: string,
  ) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  async call<T>(method: string, url: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.baseUrl}${url}`, {
      method,
      signal: bench.signal,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  status(kindPath: string, id: string): Promise<StatusView> {
    return this.call<StatusView>('GET', `/${kindPath}/${id}/status`);
  }

  /** Throws with the deployment's log when the service ended in an error state. */
  async refuseFailure(kindPath: string, id: string, status: StatusView): Promise<void> {
    if (!status.state.endsWith('_ERROR') && status.state !== 'CANCELED') return;
    const lines =
      status.deployment_request_id === null
        ? []
        : (await this.call<{ results: { stream: string; message: string }[] }>('GET', `/${kindPath}/${id}/log?deploymentId=${status.deployment_request_id}`)).results;
    throw new Error(`${kindPath} ${id} is ${status.state}: ${status.message ?? ''}\n${lines.map((line) => `  [${line.stream}] ${line.message}`).join('\n')}`);
  }

  async waitForState(kindPath: string, id: string, wanted: string): Promise<void> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      const status = await this.status(kindPath, id);
      if (status.state === wanted) return;
      await this.refuseFailure(kindPath, id, status);
      if (Date.now() > deadline) throw new Error(`${kindPath} ${id} is still ${status.state} (${status.message ?? ''}), not ${wanted}`);
      await sleep(STATUS_POLL_MS);
    }
  }
}

async function waitUntil(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (!(await condition())) {
    bench.signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`);
    await sleep(STATUS_POLL_MS);
  }
}

interface Setup {
  api: Api;
  projectId: string;
  clusterId: string;
  environmentId: string;
  environmentName: string;
  appsPort: number;
  repositoryUrl: string;
}

/** Each application's own hostname (its link's), by `<environment id>/<name>`: the control plane chooses it at creation. */
const helloHostnames = new Map<string, string>();

function helloHost(setup: Setup, service: string): string {
  const hostname = helloHostnames.get(`${setup.environmentId}/${service}`);
  if (hostname === undefined) throw new Error(`${service} of ${setup.environmentName} was not created by this run`);
  return hostname;
}

async function createHello(setup: Setup, name: string, greeting: string): Promise<string> {
  const application = await setup.api.call<{ id: string }>('POST', `/environment/${setup.environmentId}/application`, {
    name,
    git_repository: { url: setup.repositoryUrl, branch: 'main', provider: 'GITHUB', owner: 'bench', name: 'hello' },
    ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
    healthchecks: { readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 30 } },
  });
  await setup.api.call('POST', `/application/${application.id}/environmentVariable`, { key: 'GREETING', value: greeting });
  const links = await setup.api.call<{ results: Array<{ url: string }> }>('GET', `/application/${application.id}/link`);
  const url = links.results[0]?.url;
  if (url === undefined) throw new Error(`${name} has no link despite its public port`);
  helloHostnames.set(`${setup.environmentId}/${name}`, new URL(url).hostname);
  return application.id;
}

async function helloAnswer(setup: Setup, service: string): Promise<HelloAnswer | undefined> {
  const answer = await requestThroughProxy(setup.appsPort, helloHost(setup, service)).catch(() => undefined);
  return answer?.status === 200 ? (JSON.parse(answer.body) as HelloAnswer) : undefined;
}

/** Deletes an application and waits until its instance is gone: the next round starts on a quiet machine. */
async function deleteHello(setup: Setup, id: string, running: HelloAnswer): Promise<void> {
  await setup.api.call('DELETE', `/application/${id}`);
  await waitUntil(`application ${id}'s process ${running.pid} ended`, async () => !(await processAlive(running.pid)));
  await waitUntil(`application ${id}'s port ${running.port} closed`, async () => !(await portAccepts(running.port)));
}

interface FirstAnswerRound {
  firstAnswerMs: number;
  deployedMs: number;
}

/** (a) one round: a new application, then deploy request → its first 200 through the proxy. */
async function firstAnswerRound(setup: Setup, round: number): Promise<FirstAnswerRound> {
  const name = `hello-${round}`;
  const id = await createHello(setup, name, `hello ${round}`);
  const start = performance.now();
  await setup.api.call('POST', `/application/${id}/deploy`, {});
  let answer: HelloAnswer | undefined;
  let lastStatusCheck = start;
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while ((answer = await helloAnswer(setup, name)) === undefined) {
    bench.signal.throwIfAborted();
    if (performance.now() - lastStatusCheck > STATUS_POLL_MS) {
      lastStatusCheck = performance.now();
      await setup.api.refuseFailure('application', id, await setup.api.status('application', id));
    }
    if (Date.now() > deadline) throw new Error(`${name} never answered through the proxy`);
    await sleep(PROXY_POLL_MS);
  }
  const firstAnswerMs = performance.now() - start;
  await setup.api.waitForState('application', id, 'DEPLOYED');
  const deployedMs = performance.now() - start;
  await deleteHello(setup, id, answer);
  return { firstAnswerMs, deployedMs };
}

interface LoadRound {
  /** Answers autocannon and the build poller received during the round. */
  answers: number;
  /** Answers other than 200, connection errors and timeouts. */
  failed: number;
  failures: Record<string, number>;
  /** Redeploy request → the new build answering through the proxy. */
  switchMs: number;
}

/** (b) one round: continuous load on the proxy across a redeploy of the application. */
async function redeployUnderLoad(setup: Setup, id: string, service: string): Promise<LoadRound> {
  const before = await helloAnswer(setup, service);
  if (before === undefined) throw new Error(`${service} does not answer before its redeploy`);
  const failures: Record<string, number> = {};
  const count = (key: string) => (failures[key] = (failures[key] ?? 0) + 1);
  let answers = 0;
  let instance: autocannon.Instance | undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: `http://${HOST}:${setup.appsPort}`,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: SETTLE_TIMEOUT_MS / 1000,
        timeout: 10,
        requests: [{ method: 'GET', path: '/', headers: { host: helloHost(setup, service) } }],
      },
      (error: unknown, result: autocannon.Result) => (error === null || error === undefined ? resolve(result) : reject(error instanceof Error ? error : new Error(String(error)))),
    );
    instance.on('response', (_client, statusCode) => {
      answers++;
      if (statusCode !== 200) count(`status ${statusCode}`);
    });
    instance.on('reqError', (error) => count(`error ${(error as NodeJS.ErrnoException).code ?? error.message}`));
  });
  const stopLoad = () => instance?.stop();
  bench.signal.addEventListener('abort', stopLoad, { once: true });
  try {
    await sleep(LOAD_MARGIN_MS);
    const start = performance.now();
    await setup.api.call('POST', `/application/${id}/redeploy`);
    await setup.api.waitForState('application', id, 'DEPLOYED');
    let after: HelloAnswer | undefined;
    for (;;) {
      const answer = await requestThroughProxy(setup.appsPort, helloHost(setup, service)).catch((error: Error) => {
        count(`poller error ${error.message}`);
        return undefined;
      });
      if (answer !== undefined) {
        answers++;
        if (answer.status !== 200) count(`status ${answer.status} (poller)`);
        else after = JSON.parse(answer.body) as HelloAnswer;
      }
      if (after !== undefined && after.build !== before.build) break;
      bench.signal.throwIfAborted();
      await sleep(PROXY_POLL_MS);
    }
    const switchMs = performance.now() - start;
    await sleep(LOAD_MARGIN_MS);
    stopLoad();
    const result = await finished;
    // reqError fires for each connection error and timeout, which autocannon's own total counts too.
    const counted = Object.entries(failures).filter(([key]) => key.startsWith('error ')).reduce((sum, [, n]) => sum + n, 0);
    if (counted !== result.errors) throw new Error(`autocannon reports ${result.errors} errors, its events ${counted}`);
    const failed = Object.values(failures).reduce((sum, n) => sum + n, 0);
    return { answers, failed, failures, switchMs };
  } finally {
    bench.signal.removeEventListener('abort', stopLoad);
    stopLoad();
  }
}

interface DatabaseRound {
  acceptingMs: number;
  deployedMs: number;
}

/** (c) one round: a new PostgreSQL database, deploy request → its built-in URI runs SELECT 1. */
async function databaseRound(setup: Setup, round: number): Promise<DatabaseRound> {
  const name = `pg-${round}`;
  const database = await setup.api.call<{ id: string }>('POST', `/environment/${setup.environmentId}/database`, {
    name,
    type: 'POSTGRESQL',
    version: '15',
    mode: 'CONTAINER',
  });
  const variables = await setup.api.call<{ results: { key: string; value?: string }[] }>('GET', `/environment/${setup.environmentId}/resolvedVariables?reveal=true`);
  const key = `PLATFORM_DATABASE_${name.toUpperCase().replaceAll('-', '_')}_CONNECTION_URI`;
  const uri = variables.results.find((variable) => variable.key === key)?.value;
  if (uri === undefined) throw new Error(`${key} is not among the environment's revealed variables`);
  const port = Number(new URL(uri).port);

  const start = performance.now();
  await setup.api.call('POST', `/database/${database.id}/deploy`, {});
  let lastStatusCheck = start;
  let lastError = '';
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: uri, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      break;
    } catch (error) {
      lastError = (error as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
    bench.signal.throwIfAborted();
    if (performance.now() - lastStatusCheck > STATUS_POLL_MS) {
      lastStatusCheck = performance.now();
      await setup.api.refuseFailure('database', database.id, await setup.api.status('database', database.id));
    }
    if (Date.now() > deadline) throw new Error(`${name} never accepted a session with its built-in URI: ${lastError}`);
    await sleep(DATABASE_POLL_MS);
  }
  const acceptingMs = performance.now() - start;
  await setup.api.waitForState('database', database.id, 'DEPLOYED');
  const deployedMs = performance.now() - start;
  await setup.api.call('DELETE', `/database/${database.id}`);
  await waitUntil(`database ${name}'s port ${port} closed`, async () => !(await portAccepts(port)));
  return { acceptingMs, deployedMs };
}

interface EnvironmentRound {
  allAnswerMs: number;
  deployedMs: number;
}

/**
 * (d) one round: a new environment with a PostgreSQL database and ENVIRONMENT_APPS applications, then environment
 * deploy request → every application answers through the proxy. The environment is deleted afterwards and the
 * next round waits until its processes and ports are gone.
 */
async function environmentRound(base: Setup, round: number): Promise<EnvironmentRound> {
  const environmentName = `env-${round}`;
  const environment = await base.api.call<{ id: string }>('POST', `/project/${base.projectId}/environment`, { name: environmentName, cluster: base.clusterId, mode: 'DEVELOPMENT' });
  const setup: Setup = { ...base, environmentId: environment.id, environmentName };
  await setup.api.call('POST', `/environment/${environment.id}/database`, { name: 'db', type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' });
  const names = Array.from({ length: ENVIRONMENT_APPS }, (_, index) => `web-${index}`);
  for (const name of names) await createHello(setup, name, `${name} of ${environmentName}`);
  const variables = await setup.api.call<{ results: { key: string; value?: string }[] }>('GET', `/environment/${environment.id}/resolvedVariables?reveal=true`);
  const uri = variables.results.find((variable) => variable.key === 'PLATFORM_DATABASE_DB_CONNECTION_URI')?.value;
  if (uri === undefined) throw new Error(`the database's URI is not among ${environmentName}'s revealed variables`);

  const start = performance.now();
  await setup.api.call('POST', `/environment/${environment.id}/deploy`);
  const answers = new Map<string, HelloAnswer>();
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (answers.size < names.length) {
    for (const name of names.filter((candidate) => !answers.has(candidate))) {
      const answer = await helloAnswer(setup, name);
      if (answer !== undefined) answers.set(name, answer);
    }
    bench.signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`${environmentName}: only ${[...answers.keys()].join(', ')} answered through the proxy`);
    await sleep(PROXY_POLL_MS);
  }
  const allAnswerMs = performance.now() - start;
  await waitUntil(`${environmentName} is DEPLOYED`, async () => {
    const status = await setup.api.call<StatusView>('GET', `/environment/${environment.id}/status`);
    if (status.state.endsWith('_ERROR')) throw new Error(`${environmentName} is ${status.state}: ${status.message ?? ''}`);
    return status.state === 'DEPLOYED';
  });
  const deployedMs = performance.now() - start;

  await setup.api.call('DELETE', `/environment/${environment.id}`);
  for (const answer of answers.values()) {
    await waitUntil(`${environmentName}'s process ${answer.pid} ended`, async () => !(await processAlive(answer.pid)));
    await waitUntil(`${environmentName}'s port ${answer.port} closed`, async () => !(await portAccepts(answer.port)));
  }
  const databasePort = Number(new URL(uri).port);
  await waitUntil(`${environmentName}'s database port ${databasePort} closed`, async () => !(await portAccepts(databasePort)));
  return { allAnswerMs, deployedMs };
}

async function startSlipway(label: string, dataDir: string, appsPort: number, concurrency: number, repositoryRoot: string): Promise<{ server: ServerProcess; api: Api }> {
  mkdirSync(dataDir);
  const port = await freePort();
  // SLIPWAY_* settings inherited from the caller's shell must not leak into the server under test.
  const env: Record<string, string> = {
    SLIPWAY_HOST: HOST,
    SLIPWAY_PORT: String(port),
    SLIPWAY_DATA_DIR: dataDir,
    SLIPWAY_LOG_LEVEL: 'warn',
    SLIPWAY_DATABASE_URL: '',
    SLIPWAY_OIDC_ISSUER: '',
    SLIPWAY_OIDC_AUDIENCE: '',
    SLIPWAY_RATE_LIMIT_PER_MINUTE: '0',
    SLIPWAY_EGRESS_IPS: '',
    SLIPWAY_LOCAL_AGENT: 'true',
    SLIPWAY_LOCAL_POSTGRES_URL: '',
    SLIPWAY_APPS_PORT: String(appsPort),
    SLIPWAY_AGENT_CONCURRENCY: String(concurrency),
    SLIPWAY_APPS_DOMAIN: 'localhost',
    SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
    SLIPWAY_GIT_ALLOWED_HOSTS: '',
  };
  const bootstrap = JSON.parse(
    await runNodeScript('bin/slipway.js', ['admin', 'bootstrap', '--email', 'bench@example.com', '--organization', 'Benchmark', '--name', 'Bench', '--json'], {
      cwd: ROOT,
      env,
    }),
  ) as { organization_id: string; api_token: string };
  const server = await startServerProcess({ name: `Slipway server (${label})`, entry: 'src/main.ts', cwd: ROOT, env, host: HOST, port, readyPath: '/ips' });
  // After the server: SIGTERM detaches its agent and leaves workloads running by design, so whatever a failed run
  // left under the data directory is killed before the directory is removed.
  bench.onCleanUp(() => killProcessesUnder(dataDir));
  bench.onCleanUp(server.stop);
  log(`Slipway (${label}) at ${server.baseUrl}, apps on ${HOST}:${appsPort}, agent concurrency ${concurrency}, git at ${repositoryRoot}`);
  return { server, api: new Api(server.baseUrl, bootstrap.api_token) };
}

/** The git server both Slipway servers deploy the `hello` sample from. */
async function startHelloRepository(): Promise<{ baseUrl: string; repositoryUrl: string }> {
  const gitRoot = path.join(scratchDir, 'git');
  mkdirSync(gitRoot);
  await createSampleRepository(gitRoot, 'hello', 'hello');
  const gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
  bench.onCleanUp(() => gitServer.close());
  return { baseUrl: gitServer.baseUrl, repositoryUrl: gitServer.urlOf('hello') };
}

/** A Slipway server (SQLite, SLIPWAY_DATA_DIR under the scratch directory) with a DEPLOYED LOCAL cluster and an environment. */
async function setUp(label: string, concurrency: number, git: { baseUrl: string; repositoryUrl: string }): Promise<Setup> {
  const appsPort = await freePort();
  const { api } = await startSlipway(label, path.join(scratchDir, label), appsPort, concurrency, git.baseUrl);
  const organizations = await api.call<{ results: { id: string }[] }>('GET', '/organization');
  const organizationId = organizations.results[0]?.id;
  if (organizationId === undefined) throw new Error('the bootstrap made no organization');
  const cluster = await api.call<{ id: string }>('POST', `/organization/${organizationId}/cluster`, {
    name: 'local',
    region: 'local',
    cloud_provider: 'ON_PREMISE',
    kubernetes: 'LOCAL',
  });
  await api.call('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
  await waitUntil('the LOCAL cluster is DEPLOYED', async () => {
    const status = await api.call<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`);
    if (status.status.endsWith('_ERROR')) throw new Error(`the LOCAL cluster deploy failed: ${JSON.stringify(status)}`);
    return status.status === 'DEPLOYED';
  });
  const project = await api.call<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'bench' });
  const environment = await api.call<{ id: string }>('POST', `/project/${project.id}/environment`, { name: ENVIRONMENT, cluster: cluster.id, mode: 'DEVELOPMENT' });
  return { api, projectId: project.id, clusterId: cluster.id, environmentId: environment.id, environmentName: ENVIRONMENT, appsPort, repositoryUrl: git.repositoryUrl };
}

function printTable(rows: string[][]): void {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const render = (row: string[]) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  const [header, ...body] = rows;
  if (header === undefined) return;
  console.log(render(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of body) console.log(render(row));
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);

async function main(): Promise<void> {
  console.log(`Slipway deploy benchmark: node ${process.version}, ${cpus().length} CPUs, ${ROUNDS} measured rounds per phase after one unmeasured, ${CONNECTIONS} connections in (b)`);
  console.log(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  const git = await startHelloRepository();
  const setup = await setUp('data', PARALLEL_CONCURRENCY, git);

  log('(a) deploy request → first 200 through the proxy');
  const first: FirstAnswerRound[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const result = await firstAnswerRound(setup, round);
    log(`  round ${round}${round === 0 ? ' (unmeasured)' : ''}: first 200 after ${seconds(result.firstAnswerMs)} s, DEPLOYED after ${seconds(result.deployedMs)} s`);
    if (round > 0) first.push(result);
  }

  log('(b) redeploy under continuous load');
  const loadService = 'hello-load';
  const loadId = await createHello(setup, loadService, 'under load');
  await setup.api.call('POST', `/application/${loadId}/deploy`, {});
  await setup.api.waitForState('application', loadId, 'DEPLOYED');
  const load: LoadRound[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const result = await redeployUnderLoad(setup, loadId, loadService);
    log(
      `  round ${round}${round === 0 ? ' (unmeasured)' : ''}: ${result.answers} answers, ${result.failed} failed ${JSON.stringify(result.failures)}, ` +
        `new build served after ${seconds(result.switchMs)} s`,
    );
    if (round > 0) load.push(result);
  }
  const lastLoadAnswer = await helloAnswer(setup, loadService);
  if (lastLoadAnswer !== undefined) await deleteHello(setup, loadId, lastLoadAnswer);

  log('(c) PostgreSQL deploy request → accepting sessions with the built-in URI');
  const databases: DatabaseRound[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const result = await databaseRound(setup, round);
    log(`  round ${round}${round === 0 ? ' (unmeasured)' : ''}: SELECT 1 after ${seconds(result.acceptingMs)} s, DEPLOYED after ${seconds(result.deployedMs)} s`);
    if (round > 0) databases.push(result);
  }

  log(`(d) environment deploy request → its ${ENVIRONMENT_APPS} applications answer (with a PostgreSQL database), agent concurrency ${PARALLEL_CONCURRENCY} and 1`);
  const serialSetup = await setUp('data-serial', 1, git);
  const environments: { parallel: EnvironmentRound[]; serial: EnvironmentRound[] } = { parallel: [], serial: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [label, target] of [['parallel', setup], ['serial', serialSetup]] as const) {
      const result = await environmentRound(target, round);
      log(`  round ${round}${round === 0 ? ' (unmeasured)' : ''}, ${label}: all answer after ${seconds(result.allAnswerMs)} s, DEPLOYED after ${seconds(result.deployedMs)} s`);
      if (round > 0) environments[label].push(result);
    }
  }
  console.log(`load average after: ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

  const firstMedian = median(first.map((round) => round.firstAnswerMs));
  const failedTotal = load.reduce((sum, round) => sum + round.failed, 0);
  const databaseMedian = median(databases.map((round) => round.acceptingMs));
  const parallelMedian = median(environments.parallel.map((round) => round.allAnswerMs));
  const serialMedian = median(environments.serial.map((round) => round.allAnswerMs));
  const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
  const range = (samples: number[]) => `${seconds(Math.min(...samples))}–${seconds(Math.max(...samples))}`;
  console.log('');
  printTable([
    ['phase', 'median', 'range', 'also measured (median)', 'goal'],
    [
      '(a) deploy request → first 200 via proxy (fresh app)',
      `${seconds(firstMedian)} s`,
      `${range(first.map((round) => round.firstAnswerMs))} s`,
      `→ DEPLOYED ${seconds(median(first.map((round) => round.deployedMs)))} s`,
      `< 3 s: ${verdict(firstMedian < FIRST_ANSWER_GOAL_MS)}`,
    ],
    [
      `(b) failed requests across a redeploy, ${CONNECTIONS} connections`,
      String(median(load.map((round) => round.failed))),
      `${Math.min(...load.map((round) => round.failed))}–${Math.max(...load.map((round) => round.failed))} (total ${failedTotal} of ${load.reduce((sum, round) => sum + round.answers, 0)})`,
      `new build served ${seconds(median(load.map((round) => round.switchMs)))} s`,
      `0: ${verdict(failedTotal === 0)}`,
    ],
    [
      '(c) PostgreSQL deploy request → SELECT 1 via built-in URI',
      `${seconds(databaseMedian)} s`,
      `${range(databases.map((round) => round.acceptingMs))} s`,
      `→ DEPLOYED ${seconds(median(databases.map((round) => round.deployedMs)))} s`,
      `< 5 s: ${verdict(databaseMedian < DATABASE_GOAL_MS)}`,
    ],
    [
      `(d) environment deploy → ${ENVIRONMENT_APPS} apps answer, concurrency ${PARALLEL_CONCURRENCY}`,
      `${seconds(parallelMedian)} s`,
      `${range(environments.parallel.map((round) => round.allAnswerMs))} s`,
      `→ DEPLOYED ${seconds(median(environments.parallel.map((round) => round.deployedMs)))} s`,
      `${(serialMedian / parallelMedian).toFixed(2)}× faster than one at a time`,
    ],
    [
      `(d) the same, concurrency 1`,
      `${seconds(serialMedian)} s`,
      `${range(environments.serial.map((round) => round.allAnswerMs))} s`,
      `→ DEPLOYED ${seconds(median(environments.serial.map((round) => round.deployedMs)))} s`,
      '(baseline)',
    ],
  ]);
  console.log(
    JSON.stringify({
      bench: 'deploy',
      node: process.version,
      cpus: cpus().length,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      first_answer_ms: { median: Math.round(firstMedian), samples: first.map((round) => Math.round(round.firstAnswerMs)), goal: FIRST_ANSWER_GOAL_MS },
      deployed_ms: { median: Math.round(median(first.map((round) => round.deployedMs))) },
      redeploy_under_load: {
        failed_median: median(load.map((round) => round.failed)),
        failed: load.map((round) => round.failed),
        answers: load.map((round) => round.answers),
        switch_ms_median: Math.round(median(load.map((round) => round.switchMs))),
        goal_failed: 0,
      },
      database_accepting_ms: { median: Math.round(databaseMedian), samples: databases.map((round) => Math.round(round.acceptingMs)), goal: DATABASE_GOAL_MS },
      environment_all_answer_ms: {
        applications: ENVIRONMENT_APPS,
        parallel: { concurrency: PARALLEL_CONCURRENCY, median: Math.round(parallelMedian), samples: environments.parallel.map((round) => Math.round(round.allAnswerMs)) },
        serial: { concurrency: 1, median: Math.round(serialMedian), samples: environments.serial.map((round) => Math.round(round.allAnswerMs)) },
        speedup: Number((serialMedian / parallelMedian).toFixed(2)),
      },
      load_average_after: loadavg().map((value) => Number(value.toFixed(2))),
    }),
  );
}

await bench.run(main);
