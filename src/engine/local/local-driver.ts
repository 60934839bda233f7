import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceRoute } from '../../agent/agent.client.ts';
import type { AgentDriver, TaskSession } from '../../agent/agent.runtime.ts';
import type { GitAccess } from '../../git/git-access.ts';
import type { WorkloadHealth } from '../deployment-states.ts';
import { normaliseRepositoryPath } from '../../git/system-git.ts';
import { planBuild, runBuild } from './app-builder.ts';
import { LocalApplications, type ApplicationInstanceSpec } from './application-instances.ts';
import { InternalAddresses } from './internal-addresses.ts';
import { LOCAL_DATABASE_ENGINES } from './database-engines.ts';
import { LocalDatabaseServers, type DatabaseServerSpec } from './database-servers.ts';
import { dropExternalPostgres, provisionExternalPostgres } from './external-postgres.ts';
import { writeFileVariables } from './file-variables.ts';
import { CRON_MARKER, cronerPackageDirectory, cronRunnerProcess } from './local-driver.cron.ts';
import { adoptableServerProcess, databaseRecordOf } from './local-driver.databases.ts';
import { WorkloadLogBatcher, type WorkloadLogSink } from './local-driver.logs.ts';
import {
  commandLine,
  ENGINE_VARIABLES,
  jobCommandsOf,
  resourceLimitsOf,
  nonSecretEnvironment,
  parseServiceSpec,
  readinessOf,
  variablesEnvironment,
  type ServiceSpec,
} from './local-driver.spec.ts';
import { processEnvironment, ServiceRecords, type ApplicationRecord, type DatabaseRecord, type JobRecord, type ServiceRecord } from './local-driver.state.ts';
import { baseEnvironment, ProcessSupervisor, type ProcessState } from './process-supervisor.ts';
import { requestHostname, type LocalReverseProxy } from './reverse-proxy.ts';
import { CommandRegistry } from './command-registry.ts';
import { runCommand } from './run-command.ts';
import { describeLimits, type CgroupPlacement, type ResourceLimits, type WorkloadCgroups } from './workload-cgroups.ts';
import type { WorkloadAccess, WorkloadSandbox } from './workload-sandbox.ts';

/**
 * The local driver of the cluster agent: carries out service tasks on this host with the local engine
 * (docs/local-engine.md, "Local driver"). APPLICATION: git checkout → build → a supervised instance behind the reverse
 * proxy, replaced without downtime. DATABASE: a server of its own per service (or a role and a database on the shared
 * PostgreSQL). JOB from git: a cron runner process, or lifecycle commands run to completion. Other kinds fail with a
 * message saying why they cannot run here.
 *
 * Layout of the state directory:
 *   services/<serviceId>.json   what runs for the service (local-driver.state.ts; no secret)
 *   processes/                  the supervisor's pid and log files
 *   sources/<serviceId>/<taskId>/  one checkout per deployment; superseded ones are removed once the new one serves
 *   files/<serviceId>/<taskId>/    the deployment's file variables, at their mount paths (file-variables.ts); the same
 *   homes/<serviceId>/          the service's home directory (HOME of its builds and workloads: npm's cache)
 *   databases/<serviceId>/      a database server's directory
 *   commands/                   builds and job runs under way (command-registry.ts), ended by the next agent
 *   identities.json             the uid of each service, when workloads are confined (workload-sandbox.ts)
 *
 * Confined (SLIPWAY_WORKLOAD_ISOLATION=strict), every process of a service runs under its own uid and sees of the
 * state directory only its sources and home (writable) and its file variables (read-only).
 */
export interface LocalDriverOptions {
  stateDir: string;
  /** Started by the caller; the driver only sets and removes routes. */
  proxy: LocalReverseProxy;
  git: GitAccess;
  /** How the workloads of applications and jobs are confined (the same for every service of this agent). */
  sandbox: WorkloadSandbox;
  /** How their memory and CPU limits are held: control groups where this host lets the agent write them. */
  cgroups?: WorkloadCgroups;
  /** SLIPWAY_LOCAL_POSTGRES_URL: POSTGRESQL databases become a role and a database on that server. */
  externalPostgresUrl?: string | undefined;
  /** Runtime output of deployed workloads, cron runs and crash restarts. */
  workloadLogs: WorkloadLogSink;
  /**
   * How a deployed workload runs after a crash: RESTARTING (with the restarts so far and why), FAILED when the
   * supervisor gave up, RUNNING again once a restarted process is ready. Best effort: a report that fails is dropped.
   */
  workloadHealth?: (serviceId: string, report: { health: WorkloadHealth; restarts: number; message?: string }) => Promise<void>;
  onTrouble?: (message: string) => void;
  /** How often a running build asks whether its deployment was canceled (default 1 s). */
  cancelPollMs?: number;
}

export interface LocalDriver extends AgentDriver {
  /** At agent start: re-adopts the workloads recorded in the state directory, cron runners included. */
  recover(): Promise<void>;
  /** Agent shutdown: stops following workloads, which keep running for the next agent. */
  detach(): Promise<void>;
  /** Stops every workload this driver runs (tests, benchmarks): no process or port is left. */
  stopAll(): Promise<void>;
}

/** Why a kind (or a source) cannot run on the local cluster. */
export function unsupportedKindMessage(kind: string): string {
  switch (kind) {
    case 'CONTAINER':
      return 'CONTAINER services run an image, and the local cluster has no container engine: deploy this service on a Kubernetes cluster, or build it from git as an APPLICATION.';
    case 'JOB_IMAGE':
      return 'this JOB runs an image, and the local cluster has no container engine: deploy it on a Kubernetes cluster, or give the job a git source.';
    case 'HELM':
      return 'HELM services need a Kubernetes cluster and helm, which the local cluster does not have: deploy this service on a Kubernetes cluster.';
    case 'TERRAFORM':
      return 'TERRAFORM services need the terraform tool, which the local cluster does not run: deploy this service on a Kubernetes cluster.';
    case 'AGENTIC_WORKFLOW':
      return 'AGENTIC_WORKFLOW services need a Kubernetes cluster: the local cluster does not run them.';
    default:
      return `${kind} services cannot run on the local cluster.`;
  }
}

class TaskCanceled extends Error {}

const CRASH_STATUSES: ReadonlySet<string> = new Set(['BACKOFF', 'FAILED']);

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Names a task's checkout and instance. A task leased again after an agent died mid-way (attempt 2…) gets names of
 * its own: the first attempt may have left an instance running from its checkout, which must not be deleted under it.
 */
function runKeyOf(session: TaskSession): string {
  return session.task.attempt > 1 ? `${session.task.id}-${session.task.attempt}` : session.task.id;
}

/** Whether two lists name the same hosts, whatever their order and case. */
function sameHostnames(routed: readonly string[], wanted: readonly string[]): boolean {
  const normalised = (list: readonly string[]) => [...new Set(list.map((hostname) => requestHostname(hostname) ?? hostname))].sort().join(' ');
  return normalised(routed) === normalised(wanted);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const { stateDir, proxy, git, sandbox } = options;
  const cgroups = options.cgroups;
  const trouble = options.onTrouble ?? (() => undefined);
  const cancelPollMs = options.cancelPollMs ?? 1_000;
  const records = new ServiceRecords(stateDir);
  const logs = new WorkloadLogBatcher(options.workloadLogs, trouble);
  /** Process name → the service it belongs to, for routing its output. */
  const owners = new Map<string, string>();
  /** Process name → the task whose deployment is starting it: until that settles, its output is the deployment's log. */
  const deploying = new Map<string, TaskSession>();
  /** Services with a task under way (the agent runs tasks of different services side by side). */
  const busy = new Set<string>();

  const supervisor = new ProcessSupervisor({
    stateDir: join(stateDir, 'processes'),
    onLog(name, entry) {
      const cronLine = entry.line.startsWith(CRON_MARKER);
      const stream = cronLine ? 'system' : entry.stream;
      const line = cronLine ? entry.line.slice(CRON_MARKER.length) : entry.line;
      const session = deploying.get(name);
      if (session !== undefined) {
        session.log(stream, line);
        return;
      }
      const serviceId = owners.get(name);
      if (serviceId !== undefined) logs.add(serviceId, { at: entry.at.toISOString(), stream, line });
    },
    onStatus(state: ProcessState) {
      const serviceId = owners.get(state.name);
      // A crash loop shows in the service's logs and status; a first start that fails is the deployment's error instead.
      if (serviceId === undefined || deploying.has(state.name)) return;
      const crashed = CRASH_STATUSES.has(state.status);
      if (crashed && state.message !== undefined) logs.add(serviceId, { at: new Date().toISOString(), stream: 'system', line: state.message });
      if (crashed || (state.status === 'RUNNING' && state.restarts > 0)) {
        const health = state.status === 'RUNNING' ? 'RUNNING' : state.status === 'FAILED' ? 'FAILED' : 'RESTARTING';
        // Restarts so far, the one a backoff waits for included.
        const restarts = state.status === 'BACKOFF' ? state.restarts + 1 : state.restarts;
        options
          .workloadHealth?.(serviceId, { health, restarts, ...(state.message === undefined || health === 'RUNNING' ? {} : { message: state.message }) })
          .catch((error: unknown) => trouble(`the health of ${serviceId} was not reported: ${messageOf(error)}`));
      }
    },
  });
  const internalAddresses = new InternalAddresses({ onError: trouble });
  const applications = new LocalApplications({
    supervisor,
    proxy,
    internal: internalAddresses,
    // During a deployment the note is its log's; otherwise the service's own.
    onNote: (serviceId, line) => {
      const session = [...deploying.entries()].find(([processName]) => owners.get(processName) === serviceId)?.[1];
      if (session !== undefined) session.log('system', line);
      else note(serviceId, line);
    },
  });
  const databases = new LocalDatabaseServers({ supervisor, engines: LOCAL_DATABASE_ENGINES });
  /** Builds and job runs under way, for the next agent to end if this one dies (command-registry.ts). */
  const commands = new CommandRegistry(join(stateDir, 'commands'));

  const sourcesOf = (serviceId: string): string => join(stateDir, 'sources', serviceId);
  const filesOf = (serviceId: string): string => join(stateDir, 'files', serviceId);
  const homeOf = (serviceId: string): string => join(stateDir, 'homes', serviceId);

  /** What a confined service may touch; undefined when workloads are not confined. */
  function accessOf(serviceId: string): WorkloadAccess | undefined {
    const identity = sandbox.identityOf(serviceId);
    if (identity === undefined) return undefined;
    return { identity, writable: [sourcesOf(serviceId), homeOf(serviceId)], readable: [filesOf(serviceId)] };
  }

  function confinementSpec(serviceId: string, runtime: readonly string[] = [], limits?: CgroupPlacement): { confine?: (command: readonly string[]) => string[] } {
    const confine = confinementOf(serviceId, runtime, limits);
    return confine === undefined ? {} : { confine };
  }

  /**
   * The argv transformation that runs a service's commands in its confinement, and inside its control groups when
   * `limits` placed it in some (joined first, so the sandbox and everything in it is counted).
   */
  function confinementOf(serviceId: string, runtime: readonly string[] = [], limits?: CgroupPlacement): ((command: readonly string[]) => string[]) | undefined {
    const access = accessOf(serviceId);
    const confined = access === undefined ? undefined : (command: readonly string[]) => sandbox.wrap(command, { ...access, runtime });
    if (limits === undefined || cgroups === undefined) return confined;
    return (command) => cgroups.joinArgv(limits, confined === undefined ? command : confined(command));
  }

  /** The service's control groups with its limits, when it has limits and this host lets the agent hold them so. */
  function placeLimits(serviceId: string, limits: ResourceLimits): CgroupPlacement | undefined {
    return cgroups?.place(serviceId, limits);
  }

  /** The environment every process of a service starts from: confined, its own home and the private /tmp. */
  function serviceBaseEnvironment(serviceId: string): Record<string, string> {
    return sandbox.confined ? { ...baseEnvironment(), HOME: homeOf(serviceId), TMPDIR: '/tmp' } : baseEnvironment();
  }

  /**
   * Before a service's processes run: strict isolation must be possible here; the service's directories exist and
   * belong to its uid (`handOver`: what the agent just wrote for it — a checkout, file variables — with all inside).
   */
  function prepareConfinement(session: TaskSession, serviceId: string, handOver: readonly string[] = [], limits: ResourceLimits = {}): void {
    sandbox.requireAvailable();
    const access = accessOf(serviceId);
    session.log('system', sandbox.describe(access?.identity));
    const held = describeLimits(limits, placeLimits(serviceId, limits), cgroups?.unavailable ?? 'the agent holds no control groups');
    if (held !== undefined) session.log('system', held);
    if (access !== undefined) sandbox.prepareDirectories(access, handOver);
  }
  const cronProcessOf = (serviceId: string): string => `cron-${serviceId}`;

  /** Removes what earlier deployments of a service left under `root` (checkouts, file variables) except `keep`. */
  function removeSuperseded(root: string, keep: string | undefined): void {
    if (!existsSync(root)) return;
    for (const entry of readdirSync(root)) {
      if (join(root, entry) !== keep) rmSync(join(root, entry), { recursive: true, force: true });
    }
  }

  /** Once a deployment serves: only its checkout (or the one it reuses) and its file variables stay. */
  function removeOldSources(serviceId: string, keep: string | undefined, session: TaskSession): void {
    removeSuperseded(sourcesOf(serviceId), keep);
    removeSuperseded(filesOf(serviceId), join(filesOf(serviceId), runKeyOf(session)));
  }

  /** Polls the control plane for a cancel while `work` runs; a cancel aborts the signal `work` was given. */
  async function cancellable<T>(session: TaskSession, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let polling = false;
    const timer = setInterval(() => {
      if (polling || controller.signal.aborted) return;
      polling = true;
      session
        .cancelRequested()
        .then((canceled) => {
          if (canceled) controller.abort();
        })
        .catch((error: unknown) => trouble(`task ${session.task.id}: could not ask whether it was canceled: ${messageOf(error)}`))
        .finally(() => {
          polling = false;
        });
    }, cancelPollMs);
    try {
      const result = await work(controller.signal);
      if (controller.signal.aborted) throw new TaskCanceled();
      return result;
    } catch (error) {
      if (controller.signal.aborted) throw new TaskCanceled();
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  interface Checkout {
    /** The task's checkout directory (removed when the deployment fails). */
    workDir: string;
    /** The directory to build and run in: the repository's root path inside the checkout. */
    buildDir: string;
  }

  /** Checks the spec's commit out into a fresh directory and runs the build plan; logs go to the deployment. */
  async function checkoutAndBuild(session: TaskSession, spec: ServiceSpec, startCommand: string | undefined, env: Record<string, string>): Promise<Checkout & { startCommand: string }> {
    const source = spec.git;
    if (source === undefined) throw new Error(`the deployment spec of ${spec.kind} ${spec.name} names no git repository`);
    const workDir = join(sourcesOf(spec.serviceId), runKeyOf(session));
    rmSync(workDir, { recursive: true, force: true });
    try {
      return await cancellable(session, async (signal) => {
        session.log('system', `checking out ${source.url} at ${source.commitId ?? (source.branch === undefined ? 'the default branch' : `the head of ${source.branch}`)}`);
        const commit = await git.checkout({ url: source.url, branch: source.branch, commitId: source.commitId, credentials: source.credentials, destination: workDir, signal });
        session.log('system', `checked out commit ${commit}`);
        const access = accessOf(spec.serviceId);
        if (access !== undefined) sandbox.prepareDirectories(access, [workDir]);
        const rootPath = normaliseRepositoryPath(source.rootPath);
        const buildDir = rootPath === '' ? workDir : join(workDir, rootPath);
        const plan = planBuild(buildDir, { startCommand });
        const confine = confinementOf(spec.serviceId);
        await runBuild(plan, { sourceDir: buildDir, env, signal, registry: commands, onLine: (stream, line) => session.log(stream, line), ...(confine === undefined ? {} : { confine }) });
        return { workDir, buildDir, startCommand: plan.startCommand };
      });
    } catch (error) {
      rmSync(workDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Reports `built` on a deploy or redeploy (a restart has no build phase); false when the deployment was canceled. */
  async function reportBuilt(session: TaskSession): Promise<boolean> {
    if (session.task.action === 'restart') return true;
    const answer = await session.report('built');
    return answer.subjectStatus !== 'CANCELING';
  }

  interface WorkloadEnvironment {
    env: Record<string, string>;
    /** The paths the task's file variables were written to, by key. */
    mounted: Record<string, string>;
    /** Removes the task's file variables (the deployment failed). */
    discard(): void;
  }

  /** The environment of the task's workload: its variables, file variables written under files/<serviceId>/<task>/. */
  function workloadEnvironment(session: TaskSession, spec: ServiceSpec): WorkloadEnvironment {
    const dir = join(filesOf(spec.serviceId), runKeyOf(session));
    const discard = () => rmSync(dir, { recursive: true, force: true });
    try {
      const mounted = writeFileVariables(dir, spec.variables);
      return { env: { ...serviceBaseEnvironment(spec.serviceId), ...variablesEnvironment(spec.variables, mounted) }, mounted, discard };
    } catch (error) {
      discard();
      throw error;
    }
  }

  // ---------------------------------------------------------------- applications

  function applicationInstance(serviceId: string, record: ApplicationRecord, env: Record<string, string>): ApplicationInstanceSpec {
    const placement = placeLimits(serviceId, { memoryMb: record.memoryLimitMb, cpuMillicores: record.cpuMillicores });
    const confine = confinementOf(serviceId, [], placement);
    return {
      ...(confine === undefined ? {} : { confine }),
      ...(placement?.limits.memoryMb === undefined ? {} : { memoryCgroup: placement }),
      serviceKey: serviceId,
      instanceId: record.instanceId,
      sourceDir: record.sourceDir,
      startCommand: record.startCommand,
      env,
      hostnames: record.hostnames,
      internal: record.internal,
      ...(record.readiness === undefined ? {} : { readiness: record.readiness }),
      ...(record.memoryLimitMb === undefined ? {} : { memoryLimitMb: record.memoryLimitMb }),
    };
  }

  async function deployApplication(session: TaskSession, spec: ServiceSpec, { env }: WorkloadEnvironment): Promise<void> {
    const previous = records.read(spec.serviceId)?.application;
    const limits = resourceLimitsOf(spec.settings);
    prepareConfinement(session, spec.serviceId, [filesOf(spec.serviceId)], limits);
    const configuredStart = commandLine(spec.settings.entrypoint, spec.settings.arguments);
    let workDir: string | undefined;
    let sourceDir: string;
    let startCommand: string;
    if (session.task.action === 'restart' && previous !== undefined && existsSync(previous.sourceDir)) {
      // A restart runs the deployed build again, in a new instance: nothing is checked out or built.
      sourceDir = previous.sourceDir;
      startCommand = configuredStart ?? previous.startCommand;
    } else {
      const built = await checkoutAndBuild(session, spec, configuredStart, env);
      workDir = built.workDir;
      sourceDir = built.buildDir;
      startCommand = built.startCommand;
      if (!(await reportBuilt(session))) {
        rmSync(built.workDir, { recursive: true, force: true });
        throw new TaskCanceled();
      }
    }
    const record: ApplicationRecord = {
      instanceId: runKeyOf(session),
      sourceDir,
      startCommand,
      hostnames: spec.hostnames,
      internal: spec.internal,
      readiness: readinessOf(spec.settings),
      memoryLimitMb: limits.memoryMb,
      cpuMillicores: limits.cpuMillicores,
    };
    const processName = LocalApplications.processName(spec.serviceId, record.instanceId);
    owners.set(processName, spec.serviceId);
    deploying.set(processName, session);
    try {
      session.log('system', `starting ${startCommand}`);
      await applications.deploy(applicationInstance(spec.serviceId, record, env));
    } catch (error) {
      owners.delete(processName);
      if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
      throw error;
    } finally {
      deploying.delete(processName);
    }
    records.write({ serviceId: spec.serviceId, kind: 'APPLICATION', name: spec.name, running: true, application: record });
    if (previous !== undefined && previous.instanceId !== record.instanceId) owners.delete(LocalApplications.processName(spec.serviceId, previous.instanceId));
    removeOldSources(spec.serviceId, workDir ?? workDirOf(spec.serviceId, sourceDir), session);
    session.log('system', `${spec.name} serves${spec.hostnames.length > 0 ? ` on ${spec.hostnames.join(', ')}` : ' (no public hostname)'}`);
    if (spec.internal !== undefined) session.log('system', `${spec.name} is reached inside its environment on ${spec.internal.ports.map((port) => `${spec.internal?.address}:${port}`).join(', ')}`);
  }

  /** The task directory under sources/<serviceId>/ that holds `sourceDir`. */
  function workDirOf(serviceId: string, sourceDir: string): string | undefined {
    const root = sourcesOf(serviceId);
    if (!sourceDir.startsWith(`${root}/`)) return undefined;
    const taskDir = sourceDir.slice(root.length + 1).split('/')[0];
    return taskDir === undefined ? undefined : join(root, taskDir);
  }

  async function stopApplication(serviceId: string, record: ApplicationRecord | undefined): Promise<void> {
    await applications.stop(serviceId);
    if (record !== undefined) {
      // Also a process left by a previous agent that was never re-adopted.
      const name = LocalApplications.processName(serviceId, record.instanceId);
      await supervisor.stop(name);
      owners.delete(name);
    }
    proxy.removeRoute(serviceId);
  }

  // ---------------------------------------------------------------- databases

  async function deployDatabase(session: TaskSession, spec: ServiceSpec): Promise<void> {
    const record = databaseRecordOf(spec, stateDir, options.externalPostgresUrl);
    const credentials = { username: record.username, password: spec.database?.password ?? '' };
    // Nothing to build: the server (or the shared server's database) is what this deployment starts.
    if (!(await reportBuilt(session))) throw new TaskCanceled();
    if (record.mode === 'EXTERNAL') {
      const connection = await provisionExternalPostgres(options.externalPostgresUrl ?? '', { credentials, databaseName: record.databaseName });
      session.log('system', `database ${connection.database} and role ${connection.username} are ready on ${connection.host}:${connection.port}`);
      records.write({ serviceId: spec.serviceId, kind: 'DATABASE', name: spec.name, running: true, database: { ...record, port: connection.port } });
      return;
    }
    const serverSpec: DatabaseServerSpec = {
      engine: record.engine,
      name: record.processName,
      dataDir: record.dataDir,
      credentials,
      databaseName: record.databaseName,
      ...(record.port === undefined ? {} : { port: record.port }),
    };
    owners.set(record.processName, spec.serviceId);
    deploying.set(record.processName, session);
    try {
      // Servers run as the engine's account when the agent is root: it must pass through this directory.
      mkdirSync(join(stateDir, 'databases'), { recursive: true, mode: 0o711 });
      if (session.task.action === 'restart') await databases.stop(record.processName);
      const connection = await databases.start(serverSpec);
      session.log('system', `${record.engine} listens on ${connection.host}:${connection.port}`);
      records.write({ serviceId: spec.serviceId, kind: 'DATABASE', name: spec.name, running: true, database: { ...record, port: connection.port } });
    } finally {
      deploying.delete(record.processName);
    }
  }

  async function stopDatabase(record: DatabaseRecord): Promise<void> {
    if (record.mode === 'LOCAL') await databases.stop(record.processName);
  }

  async function destroyDatabase(record: DatabaseRecord): Promise<void> {
    if (record.mode === 'EXTERNAL') {
      if (options.externalPostgresUrl === undefined || options.externalPostgresUrl === '') throw new Error('the database is on the shared PostgreSQL server, which is no longer configured (SLIPWAY_LOCAL_POSTGRES_URL)');
      await dropExternalPostgres(options.externalPostgresUrl, { databaseName: record.databaseName, username: record.username });
      return;
    }
    await databases.destroy({ name: record.processName, dataDir: record.dataDir });
    owners.delete(record.processName);
  }

  // ---------------------------------------------------------------- jobs

  /** Runs one lifecycle command to its end; rejects when it does not exit with code 0. */
  async function runLifecycle(serviceId: string, limits: ResourceLimits, event: string, command: string, cwd: string, env: Record<string, string>, maxSeconds: number, log: (stream: 'stdout' | 'stderr' | 'system', line: string) => void, signal?: AbortSignal): Promise<void> {
    log('system', `${event}: $ ${command}`);
    const confine = confinementOf(serviceId, [], placeLimits(serviceId, limits));
    const argv = ['/bin/sh', '-c', command];
    const result = await runCommand({
      command: confine === undefined ? argv : confine(argv),
      registry: commands,
      cwd,
      env,
      timeoutMs: maxSeconds * 1000,
      ...(signal === undefined ? {} : { signal }),
      onLine: (stream, line) => log(stream, line),
    });
    if (result.aborted) throw new TaskCanceled();
    if (result.timedOut) throw new Error(`${event} ran longer than ${maxSeconds} s and was killed`);
    const ending = result.code === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with code ${result.code}`;
    log('system', `${event} ${ending}`);
    if (result.code !== 0) throw new Error(`${event} (${command}) ${ending}`);
  }

  async function deployJob(session: TaskSession, spec: ServiceSpec, workload: WorkloadEnvironment): Promise<void> {
    const commands = jobCommandsOf(spec.settings);
    if (commands.source === 'image') throw new Error(unsupportedKindMessage('JOB_IMAGE'));
    const previous = records.read(spec.serviceId)?.job;
    const limits = resourceLimitsOf(spec.settings);
    prepareConfinement(session, spec.serviceId, [filesOf(spec.serviceId)], limits);
    const env = workload.env;
    let workDir: string | undefined;
    let sourceDir: string;
    let defaultCommand: string;
    const configured = commands.cron?.command ?? commands.onStart?.command ?? commands.onStop?.command ?? commands.onDelete?.command;
    if (session.task.action === 'restart' && previous !== undefined && existsSync(previous.sourceDir)) {
      sourceDir = previous.sourceDir;
      defaultCommand = configured ?? previous.defaultCommand;
    } else {
      // The build plan's start command is the job's default command: what an event without a command runs.
      const built = await checkoutAndBuild(session, spec, configured, env);
      workDir = built.workDir;
      sourceDir = built.buildDir;
      defaultCommand = built.startCommand;
      if (!(await reportBuilt(session))) {
        rmSync(built.workDir, { recursive: true, force: true });
        throw new TaskCanceled();
      }
    }
    const record: JobRecord = {
      sourceDir,
      defaultCommand,
      cron: undefined,
      onStop: commands.onStop === undefined ? undefined : (commands.onStop.command ?? defaultCommand),
      onDelete: commands.onDelete === undefined ? undefined : (commands.onDelete.command ?? defaultCommand),
      maxDurationSeconds: commands.maxDurationSeconds,
      limits,
      environment: { ...serviceBaseEnvironment(spec.serviceId), ...nonSecretEnvironment(spec.variables, workload.mounted) },
    };
    const failed = (error: unknown): never => {
      if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
      throw error;
    };
    const processName = cronProcessOf(spec.serviceId);
    // A new schedule replaces the old one; a job that was a cron job before this deployment keeps none.
    await supervisor.stop(processName);
    if (commands.cron !== undefined) {
      record.cron = { processName, pattern: commands.cron.pattern, timezone: commands.cron.timezone, command: commands.cron.command ?? defaultCommand };
      owners.set(processName, spec.serviceId);
      deploying.set(processName, session);
      try {
        await supervisor.start(cronRunnerProcess({ sourceDir, ...record.cron, maxDurationSeconds: record.maxDurationSeconds, env, ...confinementSpec(spec.serviceId, [cronerPackageDirectory()], placeLimits(spec.serviceId, limits)) }));
      } catch (error) {
        failed(error);
      } finally {
        deploying.delete(processName);
      }
    } else if (commands.onStart !== undefined) {
      const onStart = commands.onStart.command ?? defaultCommand;
      try {
        await cancellable(session, (signal) => runLifecycle(spec.serviceId, limits, 'on_start', onStart, sourceDir, env, record.maxDurationSeconds, (stream, line) => session.log(stream, line), signal));
      } catch (error) {
        failed(error);
      }
    }
    records.write({ serviceId: spec.serviceId, kind: 'JOB', name: spec.name, running: true, job: record });
    removeOldSources(spec.serviceId, workDir ?? workDirOf(spec.serviceId, sourceDir), session);
  }

  async function stopJob(session: TaskSession | undefined, record: ServiceRecord, event: 'on_stop' | 'on_delete', env: Record<string, string> | undefined): Promise<void> {
    const job = record.job;
    if (job === undefined) return;
    if (job.cron !== undefined) {
      await supervisor.stop(job.cron.processName);
      owners.delete(job.cron.processName);
    }
    const command = event === 'on_stop' ? job.onStop : job.onDelete;
    if (command === undefined || !existsSync(job.sourceDir)) return;
    const log = (stream: 'stdout' | 'stderr' | 'system', line: string): void => {
      if (session !== undefined) session.log(stream, line);
      else logs.add(record.serviceId, { at: new Date().toISOString(), stream, line });
    };
    await runLifecycle(record.serviceId, job.limits ?? {}, event, command, job.sourceDir, env ?? job.environment, job.maxDurationSeconds, log);
  }

  // ---------------------------------------------------------------- actions

  async function deploy(session: TaskSession, spec: ServiceSpec): Promise<void> {
    switch (spec.kind) {
      case 'APPLICATION':
        return withWorkloadEnvironment(session, spec, deployApplication);
      case 'DATABASE':
        return deployDatabase(session, spec);
      case 'JOB':
        return withWorkloadEnvironment(session, spec, deployJob);
      default:
        throw new Error(unsupportedKindMessage(spec.kind));
    }
  }

  /** Runs a deployment with its workload's environment; a deployment that fails leaves no file variable behind. */
  async function withWorkloadEnvironment(
    session: TaskSession,
    spec: ServiceSpec,
    deployWith: (session: TaskSession, spec: ServiceSpec, workload: WorkloadEnvironment) => Promise<void>,
  ): Promise<void> {
    const workload = workloadEnvironment(session, spec);
    try {
      await deployWith(session, spec, workload);
    } catch (error) {
      workload.discard();
      throw error;
    }
  }

  async function stop(session: TaskSession, serviceId: string): Promise<void> {
    const record = records.read(serviceId);
    if (record === undefined) {
      session.log('system', 'nothing of this service runs on this host');
      return;
    }
    if (record.kind === 'APPLICATION') await stopApplication(serviceId, record.application);
    if (record.kind === 'DATABASE' && record.database !== undefined) await stopDatabase(record.database);
    if (record.kind === 'JOB') {
      // on_stop runs with the deployment's variables when the control plane gives a spec, else the non-secret ones.
      const spec = await session.spec().then(parseServiceSpec, () => undefined);
      await stopJob(session, record, 'on_stop', spec === undefined ? undefined : workloadEnvironment(session, spec).env);
    }
    records.write({ ...record, running: false });
  }

  async function teardown(session: TaskSession, serviceId: string): Promise<void> {
    const record = records.read(serviceId);
    try {
      if (record?.kind === 'APPLICATION') await stopApplication(serviceId, record.application);
      if (record?.kind === 'DATABASE' && record.database !== undefined) await destroyDatabase(record.database);
      if (record?.kind === 'JOB') await stopJob(session, record, 'on_delete', undefined);
    } finally {
      // The service is gone whatever its on_delete did: nothing of it stays on this host.
      rmSync(sourcesOf(serviceId), { recursive: true, force: true });
      rmSync(filesOf(serviceId), { recursive: true, force: true });
      rmSync(homeOf(serviceId), { recursive: true, force: true });
      records.remove(serviceId);
      sandbox.releaseIdentity(serviceId);
      cgroups?.release(serviceId);
    }
    session.log('system', record === undefined ? 'nothing of this service was on this host' : `${record.name} was removed from this host`);
  }

  async function performServiceTask(session: TaskSession, serviceId: string): Promise<void> {
    const task = session.task;
    // A deleted service's teardown: no spec any more (the payload and the driver's record say what to remove).
    if (task.action === 'delete' || task.subject_type === 'SERVICE_TEARDOWN') return teardown(session, serviceId);
    if (task.action === 'stop') return stop(session, serviceId);
    if (task.action !== 'deploy' && task.action !== 'redeploy' && task.action !== 'restart') throw new Error(`the local driver does not know the action ${task.action}`);
    return deploy(session, parseServiceSpec(await session.spec()));
  }

  async function perform(session: TaskSession): Promise<void> {
    await session.report('take');
    if (session.task.subject_type === 'ENVIRONMENT') {
      // The control plane fans an environment action out into service tasks of its own, and offers this one only
      // once they are done (docs/agent-protocol.md, "Order"). A deploy passes through its build phase.
      if (session.task.action === 'deploy' || session.task.action === 'redeploy') await session.report('built');
      await session.report('succeed');
      return;
    }
    const serviceId = stringOf(session.task.payload.service_id) ?? session.task.subject_id;
    busy.add(serviceId);
    try {
      await performServiceTask(session, serviceId);
    } catch (error) {
      if (error instanceof TaskCanceled) {
        await session.report('cancel_done');
        return;
      }
      await session.report('fail', messageOf(error));
      return;
    } finally {
      busy.delete(serviceId);
    }
    await session.report('succeed');
  }

  /**
   * Routes of deployed applications whose hostnames changed since their deployment (a custom domain verified or
   * removed). A service with a task under way is left to its task; the route is read and replaced with no await in
   * between, so it always keeps the instance the proxy sends to now.
   */
  async function reconcileRoutes(resolve: (serviceIds: readonly string[]) => Promise<ServiceRoute[]>): Promise<void> {
    const routed = records.list().filter((record) => record.kind === 'APPLICATION' && record.running && proxy.route(record.serviceId) !== undefined);
    if (routed.length === 0) return;
    for (const { service_id: serviceId, hostnames } of await resolve(routed.map((record) => record.serviceId))) {
      const route = proxy.route(serviceId);
      const record = records.read(serviceId);
      if (busy.has(serviceId) || route === undefined || record?.application === undefined || hostnames.length === 0) continue;
      if (sameHostnames(route.hostnames, hostnames)) continue;
      try {
        proxy.setRoute(serviceId, { hostnames, target: route.target });
      } catch (error) {
        note(serviceId, `could not route ${hostnames.join(', ')} to ${record.name}: ${messageOf(error)}`);
        continue;
      }
      records.write({ ...record, application: { ...record.application, hostnames } });
      note(serviceId, `${record.name} now serves on ${hostnames.join(', ')}`);
    }
  }

  // ---------------------------------------------------------------- agent restart

  /** The environment of a recorded process, from the live process itself; undefined when it no longer runs. */
  function liveEnvironment(processName: string): Record<string, string> | undefined {
    const pid = supervisor.recorded(processName)?.pid;
    return pid === undefined ? undefined : processEnvironment(pid, ENGINE_VARIABLES);
  }

  function note(serviceId: string, line: string): void {
    trouble(`service ${serviceId}: ${line}`);
    logs.add(serviceId, { at: new Date().toISOString(), stream: 'system', line });
  }

  async function recoverService(record: ServiceRecord): Promise<void> {
    if (record.kind === 'APPLICATION' && record.application !== undefined) {
      const name = LocalApplications.processName(record.serviceId, record.application.instanceId);
      const env = liveEnvironment(name);
      owners.set(name, record.serviceId);
      const adopted = env === undefined ? undefined : await applications.adopt(applicationInstance(record.serviceId, record.application, env));
      if (adopted === undefined) {
        owners.delete(name);
        note(record.serviceId, `${record.name} was not running when the agent started; deploy it again to start it`);
      }
      return;
    }
    if (record.kind === 'DATABASE' && record.database?.mode === 'LOCAL') {
      const processSpec = adoptableServerProcess(record.database);
      owners.set(record.database.processName, record.serviceId);
      const adopted = processSpec === undefined ? undefined : await supervisor.adopt(processSpec);
      if (adopted === undefined) {
        owners.delete(record.database.processName);
        note(record.serviceId, `the ${record.database.engine} server of ${record.name} was not running when the agent started; deploy it again to start it`);
      }
      return;
    }
    const cron = record.job?.cron;
    if (record.kind === 'JOB' && record.job !== undefined && cron !== undefined) {
      const env = liveEnvironment(cron.processName);
      if (env === undefined) {
        note(record.serviceId, `the cron schedule of ${record.name} was not running when the agent started; deploy it again to arm it`);
        return;
      }
      owners.set(cron.processName, record.serviceId);
      const runner = cronRunnerProcess({
        sourceDir: record.job.sourceDir,
        ...cron,
        maxDurationSeconds: record.job.maxDurationSeconds,
        env,
        ...confinementSpec(record.serviceId, [cronerPackageDirectory()], placeLimits(record.serviceId, record.job.limits ?? {})),
      });
      // A runner of an older agent (another script) is superseded by adopt; it starts again with the same environment.
      if ((await supervisor.adopt(runner)) === undefined) await supervisor.start(runner);
    }
  }

  return {
    name: 'local',
    perform,
    reconcileRoutes,
    async recover() {
      // What an earlier agent left running that no task owns any more: its tasks are leased again and start anew.
      for (const ended of await commands.endLeftovers()) trouble(`ended a command an earlier agent left running: ${ended}`);
      for (const record of records.list()) {
        if (!record.running) continue;
        try {
          await recoverService(record);
        } catch (error) {
          note(record.serviceId, `could not take ${record.name} over after the agent restart: ${messageOf(error)}`);
        }
      }
    },
    async detach() {
      supervisor.detachAll();
      // The listeners are this agent's: the next agent listens again when it takes the instances over.
      await internalAddresses.closeAll();
      await logs.close();
    },
    async stopAll() {
      for (const record of records.list()) {
        if (record.kind === 'APPLICATION') await applications.stop(record.serviceId);
      }
      await supervisor.stopAll();
      for (const record of records.list()) proxy.removeRoute(record.serviceId);
      await internalAddresses.closeAll();
      await logs.close();
    },
  };
}
