import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TaskCanceled, type AgentDriver, type TaskSession } from '../../protocol/agent-driver.ts';
import { createServiceWorkspaces, runKeyOf, type WorkloadEnvironment } from './local-driver.workspace.ts';
import type { ServiceDeploymentSpec, ServiceRoute, ServiceTaskPayload, ServiceTeardownPayload, WorkloadHealth } from '../../protocol/agent-protocol.ts';
import type { GitAccess } from '../../git/git-access.ts';
import { LocalApplications, type ApplicationInstanceSpec } from './application-instances.ts';
import { InternalAddresses, type InternalEndpoint, type InternalForwarding } from './internal-addresses.ts';
import { LocalPlacement } from './local-placement.ts';
import { LOCAL_DATABASE_ENGINES } from './database-engines.ts';
import { LocalDatabaseServers } from './database-servers.ts';
import { CRON_MARKER, cronerPackageDirectory, cronRunnerProcess } from './local-driver.cron.ts';
import { createLocalDatabaseServices } from './local-driver.databases.ts';
import { WorkloadLogBatcher, type WorkloadLogSink } from '../workload-log-batcher.ts';
import {
  commandLine,
  ENGINE_VARIABLES,
  jobCommandsOf,
  resourceLimitsOf,
  nonSecretEnvironment,
  serviceSpecOf,
  readinessOf,
  type ServiceSpec,
} from './local-driver.spec.ts';
import { processEnvironment, ServiceRecords, type ApplicationRecord, type JobRecord, type ServiceRecord } from './local-driver.state.ts';
import { ProcessSupervisor, type ProcessState } from './process-supervisor.ts';
import { requestHostname, type AppsRouting } from './route-table.ts';
import { CommandRegistry } from './command-registry.ts';
import { runCommand } from './run-command.ts';
import type { ResourceLimits, WorkloadCgroups } from './workload-cgroups.ts';
import type { WorkloadSandbox } from './workload-sandbox.ts';
import { advancedBoolean, advancedInteger } from '../advanced-settings.ts';

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
  proxy: AppsRouting;
  /** Where internal addresses are listened on: the apps proxy process's, else listeners of the driver's own. */
  internalAddresses?: InternalForwarding;
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

/** What the local cluster runs (JOBs from git only: an image job fails with unsupportedKindMessage('JOB_IMAGE')). */
const LOCAL_SERVICE_KINDS: readonly string[] = ['APPLICATION', 'DATABASE', 'JOB'];

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

const CRASH_STATUSES: ReadonlySet<string> = new Set(['BACKOFF', 'FAILED']);

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether two lists name the same hosts, whatever their order and case. */
function sameHostnames(routed: readonly string[], wanted: readonly string[]): boolean {
  const normalised = (list: readonly string[]) => [...new Set(list.map((hostname) => requestHostname(hostname) ?? hostname))].sort().join(' ');
  return normalised(routed) === normalised(wanted);
}


/** deployment.termination_grace_period_seconds: how long a stopped instance has between SIGTERM and SIGKILL. */
function gracePeriodMs(settings: Record<string, unknown>): number | undefined {
  const seconds = advancedInteger(settings, 'deployment.termination_grace_period_seconds');
  return seconds === undefined ? undefined : seconds * 1000;
}

export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const { stateDir, proxy, git, sandbox } = options;
  const cgroups = options.cgroups;
  const trouble = options.onTrouble ?? (() => undefined);
  const cancelPollMs = options.cancelPollMs ?? 1_000;
  const records = new ServiceRecords(stateDir);
  const placement = new LocalPlacement(stateDir, () => records.list().map((record) => ({ serviceId: record.serviceId, address: record.application?.internal?.address })));
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
      if (serviceId !== undefined) logs.add(serviceId, { at: entry.at.toISOString(), stream, line, instance: name });
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
  const internalAddresses = options.internalAddresses ?? new InternalAddresses({ onError: trouble });
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
  /** Builds and job runs under way, for the next agent to end if this one dies (command-registry.ts). */
  const commands = new CommandRegistry(join(stateDir, 'commands'));

  const workspaces = createServiceWorkspaces({ stateDir, sandbox, cgroups, git, commands, cancelPollMs, trouble });
  const { sourcesOf, filesOf, confinementOf, confinementSpec, placeLimits, serviceBaseEnvironment, prepareConfinement, removeOldSources, cancellable, checkoutAndBuild, workloadEnvironment } = workspaces;
  const cronProcessOf = (serviceId: string): string => `cron-${serviceId}`;

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
      ...(record.stopTimeoutMs === undefined ? {} : { stopTimeoutMs: record.stopTimeoutMs }),
      ...(record.httpsRedirect === false ? { httpsRedirect: false } : {}),
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
      if (!(await session.built())) {
        rmSync(built.workDir, { recursive: true, force: true });
        throw new TaskCanceled();
      }
    }
    const record: ApplicationRecord = {
      instanceId: runKeyOf(session),
      sourceDir,
      startCommand,
      hostnames: spec.hostnames,
      internal: internalEndpointOf(spec),
      readiness: readinessOf(spec.settings),
      memoryLimitMb: limits.memoryMb,
      cpuMillicores: limits.cpuMillicores,
      stopTimeoutMs: gracePeriodMs(spec.settings),
      httpsRedirect: advancedBoolean(spec.settings, 'network.ingress.force_ssl_redirect'),
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
    logInternalEndpoint(session, spec, record.internal);
  }

  /** Where the service answers inside its environment on this host: its own address, on the ports it declares. */
  function internalEndpointOf(spec: ServiceSpec): { address: string; ports: number[] } | undefined {
    return spec.internal === undefined ? undefined : { address: placement.addressOf(spec.serviceId), ports: [...spec.internal.ports] };
  }

  function logInternalEndpoint(session: TaskSession, spec: ServiceSpec, endpoint: InternalEndpoint | undefined): void {
    if (endpoint === undefined) return;
    const at = endpoint.ports.map((port) => `${endpoint.address}:${port}`).join(', ');
    session.log('system', `${spec.name} is reached inside its environment as ${spec.internal?.hostname ?? spec.name}, on ${at}`);
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

  const databaseServices = createLocalDatabaseServices({
    stateDir,
    externalPostgresUrl: options.externalPostgresUrl,
    records,
    owners,
    deploying,
    supervisor,
    servers: new LocalDatabaseServers({ supervisor, engines: LOCAL_DATABASE_ENGINES }),
    internalAddresses,
    internalEndpointOf,
    logInternalEndpoint,
    note,
  });

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
      if (!(await session.built())) {
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

  /**
   * The spec as this host runs it: the internal hostnames its variables name (the built-ins, and any value a user
   * wrote with one) become the services' addresses here (local-placement.ts).
   */
  function placedSpecOf(protocolSpec: ServiceDeploymentSpec): ServiceSpec {
    const spec = serviceSpecOf(protocolSpec);
    const resolve = placement.resolver(spec.peers);
    return { ...spec, variables: spec.variables.map((variable) => ({ ...variable, value: resolve(variable.value) })) };
  }

  async function deploy(session: TaskSession, spec: ServiceSpec): Promise<void> {
    switch (spec.kind) {
      case 'APPLICATION':
        return withWorkloadEnvironment(session, spec, deployApplication);
      case 'DATABASE':
        return databaseServices.deploy(session, spec);
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
    if (record.kind === 'DATABASE' && record.database !== undefined) await databaseServices.stop(serviceId, record.database);
    if (record.kind === 'JOB') {
      // on_stop runs with the deployment's variables when the control plane gives a spec, else the non-secret ones.
      const spec = await session.spec().then(placedSpecOf, () => undefined);
      await stopJob(session, record, 'on_stop', spec === undefined ? undefined : workloadEnvironment(session, spec).env);
    }
    records.write({ ...record, running: false });
  }

  async function teardown(session: TaskSession, serviceId: string): Promise<void> {
    const record = records.read(serviceId);
    try {
      if (record?.kind === 'APPLICATION') await stopApplication(serviceId, record.application);
      if (record?.kind === 'DATABASE' && record.database !== undefined) await databaseServices.destroy(serviceId, record.database);
      if (record?.kind === 'JOB') {
        // on_delete runs with the last deployment's variables when the control plane still serves its spec, else the
        // non-secret ones. A failure is told and the removal goes on, as on Kubernetes: the service's record is gone,
        // so nothing would ever retry a teardown that a failing hook held up.
        const spec = await session.spec().then(placedSpecOf, () => undefined);
        const env = spec?.serviceId === serviceId ? workloadEnvironment(session, spec).env : undefined;
        await stopJob(session, record, 'on_delete', env).catch((error: unknown) => {
          if (error instanceof TaskCanceled) throw error;
          session.log('system', `${error instanceof Error ? error.message : String(error)}: the service is removed all the same`);
        });
      }
    } finally {
      // The service is gone whatever its on_delete did: nothing of it stays on this host.
      workspaces.removeWorkspace(serviceId);
      placement.release(serviceId);
      records.remove(serviceId);
    }
    session.log('system', record === undefined ? 'nothing of this service was on this host' : `${record.name} was removed from this host`);
  }

  /** Marks the service busy while `work` runs: routes are not reconciled under a task (reconcileRoutes). */
  async function whileBusy(serviceId: string, work: () => Promise<void>): Promise<void> {
    busy.add(serviceId);
    try {
      await work();
    } finally {
      busy.delete(serviceId);
    }
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
        proxy.setRoute(serviceId, { ...route, hostnames });
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
    if (record.kind === 'DATABASE' && record.database !== undefined) {
      await databaseServices.recover(record, record.database);
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
    serviceKinds: LOCAL_SERVICE_KINDS,
    unsupported: unsupportedKindMessage,
    deploy: (session: TaskSession, spec: ServiceDeploymentSpec) => whileBusy(spec.service.id, () => deploy(session, placedSpecOf(spec))),
    stop: (session: TaskSession, serviceId: string) => whileBusy(serviceId, () => stop(session, serviceId)),
    teardown: (session: TaskSession, payload: ServiceTeardownPayload | ServiceTaskPayload) => whileBusy(payload.service_id, () => teardown(session, payload.service_id)),
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
