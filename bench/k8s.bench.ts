import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/db.client.ts';
import { namespaceOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createClustersService } from '../src/modules/clusters/clusters.service.ts';
import { startKubeWorld, type KubeWorld } from '../test/support/kube-world.ts';
import { killProcessesUnder } from '../test/support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from '../test/support/slipway-process.ts';
import { freePort, runNodeScript, startBenchRun, startServerProcess, trackChild } from './processes.ts';

/**
 * `npm run bench:k8s`: what the Kubernetes driver's control plane costs, through the whole product. One Slipway
 * server process (src/main.ts on SQLite, as `npm start` runs it) has a SELF_MANAGED cluster whose agent is a real
 * `slipway agent --driver kubernetes` child process, deploying onto the test control plane (kube-apiserver, etcd,
 * controller manager and scheduler 1.20.2: test/support/kube-cluster.ts) whose only node is the fake kubelet, a TEST
 * DOUBLE that readies pods at once. What is measured is therefore Slipway's overhead plus the control plane's, never
 * an image pull or a container start.
 *
 *   (a) CONTAINER deploy request → DEPLOYED (the driver reports success once the rollout is complete): a fresh
 *       container each round, its status polled every 20 ms. Goal: median < 2 s.
 *   (b) environment deploy request → DEPLOYED for a fresh environment of SLIPWAY_BENCH_K8S_SERVICES (30) CONTAINER
 *       services, each with a variable, polled every 50 ms. Goal: median < 15 s. Then one service's variable changes
 *       and the environment is redeployed: every managed Deployment, Service and Secret of the namespace is compared
 *       before and after, by resourceVersion (any write), by generation (a Deployment's spec or annotations) and by
 *       pod template (its pods roll); goal: only the changed service's objects are touched. Each poll also notes when
 *       each service was first DEPLOYED (how the agent's concurrency spends the time). The environment is deleted,
 *       and its namespace gone, before the next round. Services request 100m CPU and 128 MiB: the fake node's 8 CPUs
 *       hold 16 pods at the defaults.
 *   (c) a log line written by the fake kubelet → readable through GET /container/{id}/log, polled every 10 ms.
 *       Goal: median < 1 s.
 *
 * Each phase runs one unmeasured round first, then SLIPWAY_BENCH_K8S_ROUNDS (5) measured rounds. Every process
 * (server, agent, control plane) and temporary directory goes at the end, on failure and on Ctrl-C too. Prints a
 * table and one JSON line. Figures are recorded in docs/kubernetes.md, "Benchmark".
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const DEPLOY_GOAL_MS = 2_000;
const ENVIRONMENT_GOAL_MS = 15_000;
const LOG_GOAL_MS = 1_000;
const STATUS_POLL_MS = 20;
const ENVIRONMENT_POLL_MS = 50;
const LOG_POLL_MS = 10;
const SETTLE_TIMEOUT_MS = Number(process.env.SLIPWAY_BENCH_K8S_SETTLE_SECONDS ?? 180) * 1000;
const MANAGED = 'app.kubernetes.io/managed-by=slipway';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

const ROUNDS = positiveInteger('SLIPWAY_BENCH_K8S_ROUNDS', 5);
const SERVICES = positiveInteger('SLIPWAY_BENCH_K8S_SERVICES', 30);

const bench = startBenchRun('slipway-bench-k8s-');
const { scratchDir } = bench;

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
  service_deployment_status?: string;
}

/** The public REST API of the server under test, as the bootstrap token. */
class Api {
  readonly baseUrl: string;
  private readonly token: string;
  constructor(baseUrl: string, token: string) {
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
}

/** Polls `read` every `intervalMs` until `done`; an `_ERROR` state fails the run with its message. */
async function waitFor<T extends StatusView>(what: string, read: () => Promise<T>, done: (status: T) => boolean, intervalMs: number): Promise<T> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const status = await read();
    if (done(status)) return status;
    if (status.state.endsWith('_ERROR') || status.state === 'CANCELED') throw new Error(`${what}: ${status.state} (${status.message ?? ''})`);
    bench.signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`${what}: still ${status.state} (${status.message ?? ''})`);
    await sleep(intervalMs);
  }
}

async function waitUntil(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (!(await condition())) {
    bench.signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`);
    await sleep(250);
  }
}

interface Setup {
  api: Api;
  world: KubeWorld;
  projectId: string;
  clusterId: string;
  registryId: string;
}

/** The control plane with the fake kubelet; stopped last but one (the scratch directory goes after it). */
async function startWorld(): Promise<KubeWorld> {
  log('starting the test control plane and the fake kubelet');
  const world = await startKubeWorld();
  bench.onCleanUp(() => world.stop());
  log(`Kubernetes ${await world.cluster.serverVersion()} at ${world.kube.server}`);
  return world;
}

/** The server under test on SQLite, as deploy.bench.ts starts it; this server runs no agent of its own. */
async function startServer(dataDir: string): Promise<{ api: Api; organizationId: string; userId: string }> {
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
    SLIPWAY_LOCAL_AGENT: 'false',
    SLIPWAY_LOCAL_POSTGRES_URL: '',
    SLIPWAY_APPS_PORT: '',
  };
  const bootstrap = JSON.parse(
    await runNodeScript('bin/slipway.js', ['admin', 'bootstrap', '--email', 'bench@example.com', '--organization', 'Benchmark', '--name', 'Bench', '--json'], { cwd: ROOT, env }),
  ) as { user_id: string; organization_id: string; api_token: string };
  const server = await startServerProcess({ name: 'Slipway server', entry: 'src/main.ts', cwd: ROOT, env, host: HOST, port, readyPath: '/ips' });
  bench.onCleanUp(server.stop);
  log(`Slipway at ${server.baseUrl}`);
  return { api: new Api(server.baseUrl, bootstrap.api_token), organizationId: bootstrap.organization_id, userId: bootstrap.user_id };
}

/**
 * A SELF_MANAGED cluster and its one-time enrollment token, written through the clusters module into the server's
 * database, as test/support/agent-cluster.ts does: the public route for a self-managed cluster checks an AWS account
 * first, which this machine has none of.
 */
async function selfManagedCluster(dataDir: string, organizationId: string, userId: string): Promise<{ clusterId: string; enrollmentToken: string }> {
  const database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'slipway.db') });
  try {
    const clusters = createClustersService({
      db: database.db,
      clock: systemClock,
      wakeWorkers: () => undefined,
      deletePlatformConfiguration: async () => undefined,
      publicUrl: 'http://127.0.0.1:8080',
      deploymentGate: async () => ({ allowed: true, reason: '' }),
      labelsGroups: { resolveLabelsGroups: async () => [] },
    });
    return await database.db.transaction().execute((trx) =>
      clusters.createSelfManagedClusterRecords(trx, {
        organizationId,
        name: 'bench-kubernetes',
        description: null,
        region: 'eu-west-3',
        credentialsId: '0190f0b2-6c5e-7000-8000-000000000001',
        dnsProvider: 'PLATFORM',
        buildProvider: 'PLATFORM',
        production: false,
        createdBy: { kind: 'user', userId, email: 'bench@example.com', name: null },
      }),
    );
  } finally {
    await database.close();
  }
}

/** `slipway agent --driver kubernetes`, enrolled with the token, tracked so that every exit path stops it. */
async function startAgent(world: KubeWorld, baseUrl: string, enrollmentToken: string): Promise<void> {
  const stateDir = path.join(scratchDir, 'agent');
  mkdirSync(stateDir);
  bench.onCleanUp(() => killProcessesUnder(stateDir));
  const agent = trackChild(
    spawnSlipway(['agent', '--control-plane', baseUrl, '--state-dir', stateDir, '--enrollment-token', enrollmentToken, '--driver', 'kubernetes', '--kubeconfig', world.kube.kubeconfigPath], {
      HOME: stateDir,
      SLIPWAY_DATA_DIR: stateDir,
    }),
  );
  // An agent that ends by itself (not by the clean-up's SIGTERM) explains the run's failure: its last words are shown.
  agent.once('exit', (code, signal) => {
    if (code !== 0 && signal === null) log(`the agent exited (code ${code}):\n${agent.printed().slice(-4_000)}`);
    // A failed run (run() sets the exit code before it cleans up) shows what the agent said last.
    else if (process.exitCode !== undefined && process.exitCode !== 0) log(`agent output (tail):\n${agent.printed().slice(-3_000)}`);
  });
  const started = performance.now();
  await waitForOutput(agent, /deploying onto Kubernetes v1\.20\.\d+/);
  log(`agent enrolled and watching after ${((performance.now() - started) / 1000).toFixed(2)} s`);
}

async function setUp(): Promise<Setup> {
  const world = await startWorld();
  const dataDir = path.join(scratchDir, 'data');
  const { api, organizationId, userId } = await startServer(dataDir);
  const { clusterId, enrollmentToken } = await selfManagedCluster(dataDir, organizationId, userId);
  await startAgent(world, api.baseUrl, enrollmentToken);
  const project = await api.call<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'bench' });
  const registry = await api.call<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, {
    name: 'bench-registry',
    kind: 'GENERIC_CR',
    url: 'https://registry.slipway-bench.invalid',
    config: {},
  });
  return { api, world, projectId: project.id, clusterId, registryId: registry.id };
}

async function createEnvironment(setup: Setup, name: string): Promise<string> {
  return (await setup.api.call<{ id: string }>('POST', `/project/${setup.projectId}/environment`, { name, cluster: setup.clusterId, mode: 'STAGING' })).id;
}

async function createContainer(setup: Setup, environmentId: string, name: string): Promise<string> {
  const created = await setup.api.call<{ id: string }>('POST', `/environment/${environmentId}/container`, {
    name,
    registry_id: setup.registryId,
    image_name: `acme/${name}`,
    tag: '1',
    ports: [{ internal_port: 8080, publicly_accessible: false }],
    healthchecks: {},
    // The fake node offers 8 CPUs and 32 GiB (test/support/fake-kubelet.ts): at the defaults (500m) 16 pods fill it,
    // and the rest would wait in FailedScheduling. Small requests leave room for 30 services rolling (a surge pod each).
    cpu: 100,
    memory: 128,
  });
  return created.id;
}

const containerStatus = (setup: Setup, id: string) => () => setup.api.call<StatusView>('GET', `/container/${id}/status`);

/** (a) one round: a fresh container, deploy request → DEPLOYED (rolled out). */
async function deployRound(setup: Setup, environmentId: string, round: number): Promise<{ id: string; deployedMs: number }> {
  const id = await createContainer(setup, environmentId, `solo-${round}`);
  const start = performance.now();
  await setup.api.call('POST', `/container/${id}/deploy`, {});
  await waitFor(`container solo-${round}`, containerStatus(setup, id), (status) => status.state === 'DEPLOYED', STATUS_POLL_MS);
  return { id, deployedMs: performance.now() - start };
}

/**
 * Every managed Deployment, Service and Secret of a namespace, by `Kind/name`: its resourceVersion (any write moves
 * it), its generation (only a spec change moves it: for a Deployment, a new pod template rolls its pods) and its service.
 */
interface ObjectState {
  version: string;
  generation: number | undefined;
  serviceId: string;
  /** A Deployment's spec, flattened to `path=value` lines: what moved its generation, and whether its pods roll. */
  spec: string[];
}

function flatten(value: unknown, at = ''): string[] {
  if (value === null || typeof value !== 'object') return [`${at}=${JSON.stringify(value)}`];
  return Object.entries(value).flatMap(([key, inner]) => flatten(inner, `${at}.${key}`));
}

async function snapshotObjects(world: KubeWorld, namespace: string): Promise<Map<string, ObjectState>> {
  const [deployments, services, secrets] = await Promise.all([
    world.apps.listNamespacedDeployment({ namespace, labelSelector: MANAGED }),
    world.core.listNamespacedService({ namespace, labelSelector: MANAGED }),
    world.core.listNamespacedSecret({ namespace, labelSelector: MANAGED }),
  ]);
  const snapshot = new Map<string, ObjectState>();
  for (const [kind, items] of [['Deployment', deployments.items], ['Service', services.items], ['Secret', secrets.items]] as const) {
    for (const item of items) {
      const metadata = item.metadata;
      const spec = kind === 'Deployment' && 'spec' in item ? flatten(item.spec) : [];
      snapshot.set(`${kind}/${metadata?.name ?? ''}`, { version: metadata?.resourceVersion ?? '', generation: metadata?.generation, serviceId: metadata?.labels?.['slipway.dev/service-id'] ?? '', spec });
    }
  }
  return snapshot;
}

interface EnvironmentRound {
  deployedMs: number;
  redeployedMs: number;
  objects: number;
  touched: string[];
  /** Objects of a service other than the changed one that were touched (the goal: none). */
  touchedElsewhere: string[];
  /** Deployments whose spec changed (their generation moved), and those of them of another service. */
  respecified: string[];
  respecifiedElsewhere: string[];
  /** Deployments whose pod template changed (their pods roll), and those of them of another service. */
  rolled: string[];
  rolledElsewhere: string[];
}

/** (b) one round: a fresh environment of SERVICES containers deployed, one variable changed, redeployed, deleted. */
async function environmentRound(setup: Setup, round: number): Promise<EnvironmentRound> {
  const environmentId = await createEnvironment(setup, `fleet-${round}`);
  const namespace = namespaceOf(environmentId);
  const variables: { serviceId: string; variableId: string }[] = [];
  for (let index = 0; index < SERVICES; index++) {
    const serviceId = await createContainer(setup, environmentId, `svc-${index}`);
    const variable = await setup.api.call<{ id: string }>('POST', `/container/${serviceId}/environmentVariable`, { key: 'GREETING', value: `hello ${index}` });
    variables.push({ serviceId, variableId: variable.id });
  }
  // Each poll also reads its services' states: when each was first DEPLOYED shows how the deploy's time is spent.
  const deployedAt = new Map<string, number>();
  let since = performance.now();
  const environmentStatus = async () => {
    const status = await setup.api.call<StatusView>('GET', `/environment/${environmentId}/status`);
    const statuses = await setup.api.call<{ containers?: (StatusView & { id: string })[] }>('GET', `/environment/${environmentId}/statuses`);
    const states = new Map<string, number>();
    for (const container of statuses.containers ?? []) {
      states.set(container.state, (states.get(container.state) ?? 0) + 1);
      if (container.state === 'DEPLOYED' && !deployedAt.has(container.id)) deployedAt.set(container.id, performance.now() - since);
    }
    return { ...status, message: `${status.message ?? ''}; its containers: ${JSON.stringify(Object.fromEntries(states))}` };
  };

  const start = performance.now();
  since = start;
  await setup.api.call('POST', `/environment/${environmentId}/deploy`);
  await waitFor(`environment fleet-${round}`, environmentStatus, (status) => status.state === 'DEPLOYED', ENVIRONMENT_POLL_MS);
  const deployedMs = performance.now() - start;
  const times = [...deployedAt.values()].sort((a, b) => a - b);
  const at = (fraction: number) => seconds(times[Math.min(times.length - 1, Math.floor(fraction * times.length))] ?? Number.NaN);
  log(`    services first seen DEPLOYED at: first ${at(0)} s, a quarter ${at(0.25)} s, half ${at(0.5)} s, three quarters ${at(0.75)} s, last ${at(1)} s`);
  const lastId = [...deployedAt.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (lastId !== undefined && round === 0) await printDeployLog(setup, lastId, start);
  const deployed = await setup.world.apps.listNamespacedDeployment({ namespace, labelSelector: MANAGED });
  const ready = deployed.items.filter((item) => (item.status?.availableReplicas ?? 0) >= 1).length;
  if (ready !== SERVICES) throw new Error(`environment fleet-${round} is DEPLOYED with ${ready} of ${SERVICES} Deployments available`);

  const before = await snapshotObjects(setup.world, namespace);
  const changed = variables[Math.floor(SERVICES / 2)];
  if (changed === undefined) throw new Error('no service to change');
  await setup.api.call('PUT', `/container/${changed.serviceId}/environmentVariable/${changed.variableId}`, { key: 'GREETING', value: `changed in round ${round}` });
  const redeployStart = performance.now();
  await setup.api.call('POST', `/environment/${environmentId}/redeploy`);
  await waitFor(`the redeploy of fleet-${round}`, containerStatus(setup, changed.serviceId), (status) => status.state === 'DEPLOYED' && status.service_deployment_status === 'UP_TO_DATE', ENVIRONMENT_POLL_MS);
  await waitFor(`the redeploy of fleet-${round}`, environmentStatus, (status) => status.state === 'DEPLOYED', ENVIRONMENT_POLL_MS);
  const redeployedMs = performance.now() - redeployStart;
  const after = await snapshotObjects(setup.world, namespace);

  const touched: string[] = [];
  const touchedElsewhere: string[] = [];
  const respecified: string[] = [];
  const respecifiedElsewhere: string[] = [];
  const rolled: string[] = [];
  const rolledElsewhere: string[] = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(key);
    const is = after.get(key);
    const elsewhere = (was ?? is)?.serviceId !== changed.serviceId;
    if (was?.version !== is?.version) {
      touched.push(key);
      if (elsewhere) touchedElsewhere.push(key);
    }
    if (!key.startsWith('Deployment/')) continue;
    const specBefore = new Set(was?.spec ?? []);
    const specAfter = new Set(is?.spec ?? []);
    const added = [...specAfter].filter((line) => !specBefore.has(line));
    const removed = [...specBefore].filter((line) => !specAfter.has(line));
    if (was?.generation !== is?.generation) {
      respecified.push(key);
      if (elsewhere && respecifiedElsewhere.push(key) === 1 && round === 0) {
        log(`    ${key}, of another service: generation ${was?.generation} → ${is?.generation}; its spec now has: ${added.join(' ; ')} (and no longer: ${removed.join(' ; ')})`);
      }
    }
    if ([...added, ...removed].some((line) => line.startsWith('.template.'))) {
      rolled.push(key);
      if (elsewhere) rolledElsewhere.push(key);
    }
  }

  await setup.api.call('DELETE', `/environment/${environmentId}`);
  await waitUntil(`namespace ${namespace} is gone`, async () => (await setup.world.core.listNamespace({ labelSelector: `slipway.dev/environment-id=${environmentId}` })).items.length === 0);
  return { deployedMs, redeployedMs, objects: before.size, touched, touchedElsewhere, respecified, respecifiedElsewhere, rolled, rolledElsewhere };
}

/** The deploy log of a service, each line at its time since `start` (the server's clock, so roughly). */
async function printDeployLog(setup: Setup, containerId: string, start: number): Promise<void> {
  const status = await setup.api.call<{ deployment_request_id: string | null }>('GET', `/container/${containerId}/status`);
  if (status.deployment_request_id === null) return;
  const lines = await setup.api.call<{ results: { created_at: string; message: string }[] }>('GET', `/container/${containerId}/log?deploymentId=${status.deployment_request_id}`);
  const origin = Date.now() - (performance.now() - start);
  log(`    the deploy log of the last service DEPLOYED (seconds since the deploy request):`);
  for (const line of lines.results) log(`      ${((Date.parse(line.created_at) - origin) / 1000).toFixed(2)}  ${line.message.slice(0, 140)}`);
}

/** (c) one round: a line the fake kubelet writes into the container's pod → found in GET /container/{id}/log. */
async function logRound(setup: Setup, environmentId: string, containerId: string, round: number): Promise<number> {
  const pods = await setup.world.core.listNamespacedPod({ namespace: namespaceOf(environmentId), labelSelector: `slipway.dev/service-id=${containerId}` });
  const pod = pods.items.find((item) => item.metadata?.deletionTimestamp === undefined && item.status?.containerStatuses?.[0]?.state?.running !== undefined);
  if (pod === undefined) throw new Error(`container ${containerId} has no running pod`);
  const marker = `bench log line ${round} ${performance.now()}`;
  const writtenAt = performance.now();
  setup.world.kubelet.writeLog(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', pod.spec?.containers[0]?.name ?? '', marker);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const lines = await setup.api.call<{ results: { message: string }[] }>('GET', `/container/${containerId}/log`);
    if (lines.results.some((line) => line.message === marker)) return performance.now() - writtenAt;
    bench.signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`"${marker}" never reached the logs endpoint`);
    await sleep(LOG_POLL_MS);
  }
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
const verdict = (met: boolean) => (met ? 'PASS' : 'MISS');
const range = (samples: number[]) => `${seconds(Math.min(...samples))}–${seconds(Math.max(...samples))} s`;
const label = (round: number) => `round ${round}${round === 0 ? ' (unmeasured)' : ''}`;

async function main(): Promise<void> {
  console.log(`Slipway Kubernetes benchmark: node ${process.version}, ${cpus().length} CPUs, ${ROUNDS} measured rounds per phase after one unmeasured, ${SERVICES} services in (b)`);
  console.log(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  const setup = await setUp();

  log('(a) CONTAINER deploy request → DEPLOYED (rolled out)');
  const soloEnvironment = await createEnvironment(setup, 'solo');
  const deploys: number[] = [];
  let lastContainer = '';
  for (let round = 0; round <= ROUNDS; round++) {
    const result = await deployRound(setup, soloEnvironment, round);
    log(`  ${label(round)}: DEPLOYED after ${seconds(result.deployedMs)} s`);
    if (round > 0) deploys.push(result.deployedMs);
    lastContainer = result.id;
  }

  log('(c) a log line written by the fake kubelet → GET /container/{id}/log');
  const logs: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const latency = await logRound(setup, soloEnvironment, lastContainer, round);
    log(`  ${label(round)}: readable after ${latency.toFixed(0)} ms`);
    if (round > 0) logs.push(latency);
  }

  log(`(b) environment of ${SERVICES} containers: deploy request → DEPLOYED, then one variable changed and redeployed`);
  const environments: EnvironmentRound[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const result = await environmentRound(setup, round);
    log(
      `  ${label(round)}: DEPLOYED after ${seconds(result.deployedMs)} s; redeploy after one change ${seconds(result.redeployedMs)} s, ` +
        `${result.touched.length} of ${result.objects} objects touched, ${result.touchedElsewhere.length} of them of other services` +
        `${result.touchedElsewhere.length === 0 ? '' : ` (${result.touchedElsewhere.slice(0, 4).join(', ')}${result.touchedElsewhere.length > 4 ? ', …' : ''})`}; ` +
        `${result.respecified.length} Deployment spec(s) changed, ${result.rolled.length} pod template(s) changed (${result.rolled.join(', ')})`,
    );
    if (round > 0) environments.push(result);
  }
  console.log(`load average after: ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

  const deployMedian = median(deploys);
  const environmentMedian = median(environments.map((round) => round.deployedMs));
  const logMedian = median(logs);
  const elsewhere = environments.reduce((sum, round) => sum + round.touchedElsewhere.length, 0);
  const touchedCounts = environments.map((round) => round.touched.length);
  const respecifiedCounts = environments.map((round) => round.respecified.length);
  const respecifiedElsewhere = environments.reduce((sum, round) => sum + round.respecifiedElsewhere.length, 0);
  const rolledCounts = environments.map((round) => round.rolled.length);
  const rolledElsewhere = environments.reduce((sum, round) => sum + round.rolledElsewhere.length, 0);
  console.log('');
  printTable([
    ['phase', 'median', 'range', 'goal'],
    ['(a) CONTAINER deploy request → rolled out (DEPLOYED)', `${seconds(deployMedian)} s`, range(deploys), `< 2 s: ${verdict(deployMedian < DEPLOY_GOAL_MS)}`],
    [`(b) environment of ${SERVICES} containers deploy → DEPLOYED`, `${seconds(environmentMedian)} s`, range(environments.map((round) => round.deployedMs)), `< 15 s: ${verdict(environmentMedian < ENVIRONMENT_GOAL_MS)}`],
    ['(b) redeploy after one variable change', `${seconds(median(environments.map((round) => round.redeployedMs)))} s`, range(environments.map((round) => round.redeployedMs)), ''],
    [
      '(b) objects touched by that redeploy',
      `${median(touchedCounts)} of ${environments[0]?.objects ?? 0}`,
      `${Math.min(...touchedCounts)}–${Math.max(...touchedCounts)}`,
      `only the changed service's: ${verdict(elsewhere === 0)}`,
    ],
    [
      '(b) Deployment specs changed (generation) by it',
      `${median(respecifiedCounts)} of ${SERVICES}`,
      `${Math.min(...respecifiedCounts)}–${Math.max(...respecifiedCounts)}`,
      `only the changed service's: ${verdict(respecifiedElsewhere === 0)}`,
    ],
    [
      '(b) pod templates changed (pods roll) by it',
      `${median(rolledCounts)} of ${SERVICES}`,
      `${Math.min(...rolledCounts)}–${Math.max(...rolledCounts)}`,
      `only the changed service's: ${verdict(rolledElsewhere === 0)}`,
    ],
    ['(c) kubelet log line → GET /container/{id}/log', `${seconds(logMedian)} s`, range(logs), `< 1 s: ${verdict(logMedian < LOG_GOAL_MS)}`],
  ]);
  console.log(
    JSON.stringify({
      bench: 'k8s',
      node: process.version,
      cpus: cpus().length,
      rounds: ROUNDS,
      deploy_ms: { median: Math.round(deployMedian), samples: deploys.map(Math.round), goal: DEPLOY_GOAL_MS },
      environment_ms: { services: SERVICES, median: Math.round(environmentMedian), samples: environments.map((round) => Math.round(round.deployedMs)), goal: ENVIRONMENT_GOAL_MS },
      redeploy_ms: { median: Math.round(median(environments.map((round) => round.redeployedMs))), samples: environments.map((round) => Math.round(round.redeployedMs)) },
      redeploy_touched: { objects: environments[0]?.objects ?? 0, touched: touchedCounts, of_other_services: elsewhere, goal_of_other_services: 0, deployment_specs_changed: respecifiedCounts, specs_of_other_services: respecifiedElsewhere, pod_templates_changed: rolledCounts, templates_of_other_services: rolledElsewhere },
      log_ms: { median: Math.round(logMedian), samples: logs.map(Math.round), goal: LOG_GOAL_MS },
      load_average_after: loadavg().map((value) => Number(value.toFixed(2))),
    }),
  );
}

await bench.run(main);
