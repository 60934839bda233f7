import { startCommandArgv } from './app-builder.ts';
import type { CgroupPlacement } from './workload-cgroups.ts';
import { findFreePort } from '../../lib/free-port.ts';
import type { InternalEndpoint, InternalForwarding } from './internal-addresses.ts';
import type { ReadinessCheck } from './probes.ts';
import type { ProcessState, ProcessSupervisor, RestartPolicy } from './process-supervisor.ts';
import type { AppsRouting } from './route-table.ts';

/**
 * Application instances: the supervisor and the reverse proxy put together for one service. An instance is one
 * deployment of the service running as a supervised process on a port of its own, named `<serviceKey>.<instanceId>`.
 *
 * Deploying a new instance never interrupts the current one: the new process starts on a fresh port and must pass
 * its readiness check; only then does the proxy switch the service's hostnames to it, wait until the previous
 * instance has no request in flight, and stop it. A new instance that fails to start is stopped and the error
 * thrown: the previous instance keeps serving, untouched. A service without hostnames (no public port) is not routed;
 * its previous instance stops once the new one is ready. A service with an internal endpoint (its own loopback
 * address and ports: internal-addresses.ts) is reachable there by the other services, switched at the same moment;
 * an address or port this host cannot give is a note, not a failure.
 */
export interface ApplicationInstanceSpec {
  /** Stable per service (its id): the proxy's route key and the prefix of its process names. */
  serviceKey: string;
  /** Per deployment (its id; a restart uses a new one): tells the instances of one service apart. */
  instanceId: string;
  /** The built source directory. */
  sourceDir: string;
  /** A shell line, from the build plan. */
  startCommand: string;
  /** The whole environment: the base environment and the deployment's variable snapshot. */
  env: Readonly<Record<string, string>>;
  /** Default: a TCP connection to PORT. */
  readiness?: ReadinessCheck;
  /** Where the proxy routes from; empty for a service without a public port. */
  hostnames: readonly string[];
  /** false: plain HTTP is not redirected to HTTPS (network.ingress.force_ssl_redirect); absent: it is. */
  httpsRedirect?: boolean;
  /** Where the other services reach it (PLATFORM_APPLICATION_<NAME>_HOSTNAME and its internal ports). */
  internal?: InternalEndpoint | undefined;
  memoryLimitMb?: number;
  /** The control groups that hold the memory limit, when the kernel holds it (workload-cgroups.ts). */
  memoryCgroup?: CgroupPlacement;
  startTimeoutMs?: number;
  /** How long a stop waits after SIGTERM before SIGKILL (the service's termination grace period). */
  stopTimeoutMs?: number;
  restart?: RestartPolicy | false;
  /** The service's confinement (workload-sandbox.ts), for the instance and its exec readiness checks. */
  confine?: (command: readonly string[]) => string[];
}

interface CurrentInstance {
  name: string;
  port: number;
}

export class LocalApplications {
  private readonly current = new Map<string, CurrentInstance>();

  private readonly deps: {
      supervisor: ProcessSupervisor;
      proxy: AppsRouting;
      internal?: InternalForwarding;
      /** What a deployment should know but does not fail for (an internal address this host does not have). */
      onNote?: (serviceKey: string, message: string) => void;
    };
  constructor(
    deps: {
      supervisor: ProcessSupervisor;
      proxy: AppsRouting;
      internal?: InternalForwarding;
      /** What a deployment should know but does not fail for (an internal address this host does not have). */
      onNote?: (serviceKey: string, message: string) => void;
    },
  ) {
    this.deps = deps;
  }

  static processName(serviceKey: string, instanceId: string): string {
    return `${serviceKey}.${instanceId}`;
  }

  /** Starts the new instance, moves traffic to it, stops the previous one; resolves with the new instance's state. */
  async deploy(spec: ApplicationInstanceSpec): Promise<ProcessState> {
    // A retried deploy of the instance that already serves (the agent retries a job) only refreshes its route.
    const current = this.current.get(spec.serviceKey);
    const running = current === undefined ? undefined : this.deps.supervisor.state(current.name);
    if (current !== undefined && current.name === LocalApplications.processName(spec.serviceKey, spec.instanceId) && running?.status === 'RUNNING') {
      await this.switchTo(spec, current);
      return running;
    }
    const port = await findFreePort();
    const state = await this.deps.supervisor.start(this.processSpec(spec, port));
    await this.switchTo(spec, { name: LocalApplications.processName(spec.serviceKey, spec.instanceId), port });
    return state;
  }

  /**
   * Takes over the instance a previous agent left running (same spec, port from its pid file) and routes to it;
   * undefined when it no longer runs — the agent then deploys it again.
   */
  async adopt(spec: ApplicationInstanceSpec): Promise<ProcessState | undefined> {
    const name = LocalApplications.processName(spec.serviceKey, spec.instanceId);
    const port = this.deps.supervisor.recorded(name)?.port;
    if (port === undefined) return undefined;
    const state = await this.deps.supervisor.adopt(this.processSpec(spec, port));
    if (state === undefined) return undefined;
    await this.switchTo(spec, { name, port });
    return state;
  }

  /** Stops routing to the service, lets requests in flight finish, stops its instance. */
  async stop(serviceKey: string): Promise<void> {
    const instance = this.current.get(serviceKey);
    const route = this.deps.proxy.removeRoute(serviceKey);
    await this.deps.internal?.remove(serviceKey);
    if (route !== undefined) await this.deps.proxy.drain(route.target);
    if (instance !== undefined) await this.deps.supervisor.stop(instance.name);
    this.current.delete(serviceKey);
  }

  /** The running instance of a service, as the supervisor sees it. */
  instance(serviceKey: string): ProcessState | undefined {
    const instance = this.current.get(serviceKey);
    return instance === undefined ? undefined : this.deps.supervisor.state(instance.name);
  }

  private processSpec(spec: ApplicationInstanceSpec, port: number): Parameters<ProcessSupervisor['start']>[0] {
    return {
      name: LocalApplications.processName(spec.serviceKey, spec.instanceId),
      command: startCommandArgv(spec.startCommand),
      cwd: spec.sourceDir,
      env: spec.env,
      port,
      readiness: spec.readiness ?? { kind: 'tcp' },
      ...(spec.memoryLimitMb === undefined ? {} : { memoryLimitMb: spec.memoryLimitMb }),
      ...(spec.memoryCgroup === undefined ? {} : { memoryCgroup: spec.memoryCgroup }),
      ...(spec.startTimeoutMs === undefined ? {} : { startTimeoutMs: spec.startTimeoutMs }),
      ...(spec.stopTimeoutMs === undefined ? {} : { stopTimeoutMs: spec.stopTimeoutMs }),
      ...(spec.restart === undefined ? {} : { restart: spec.restart }),
      ...(spec.confine === undefined ? {} : { confine: spec.confine }),
    };
  }

  private async exposeInternally(spec: ApplicationInstanceSpec, port: number): Promise<void> {
    const internal = this.deps.internal;
    if (internal === undefined) return;
    if (spec.internal === undefined || spec.internal.ports.length === 0) {
      await internal.remove(spec.serviceKey);
      return;
    }
    for (const note of await internal.expose(spec.serviceKey, spec.internal, port)) this.deps.onNote?.(spec.serviceKey, note);
  }

  private async switchTo(spec: ApplicationInstanceSpec, next: CurrentInstance): Promise<void> {
    const previous = this.current.get(spec.serviceKey);
    const target = { host: '127.0.0.1', port: next.port };
    const previousRoute = this.deps.proxy.route(spec.serviceKey);
    try {
      await this.exposeInternally(spec, next.port);
      if (spec.hostnames.length > 0) this.deps.proxy.setRoute(spec.serviceKey, { hostnames: spec.hostnames, target, ...(spec.httpsRedirect === false ? { httpsRedirect: false } : {}) });
      else this.deps.proxy.removeRoute(spec.serviceKey);
    } catch (error) {
      // A hostname taken by another service: the new instance must not replace the one that still serves.
      await this.deps.supervisor.stop(next.name);
      throw error;
    }
    this.current.set(spec.serviceKey, next);
    // Served before the deployment says so (the apps proxy of another process applies it a moment later).
    await this.deps.proxy.applied();
    if (previousRoute !== undefined && previousRoute.target.port !== next.port) await this.deps.proxy.drain(previousRoute.target);
    if (previous !== undefined && previous.name !== next.name) await this.deps.supervisor.stop(previous.name);
  }
}
