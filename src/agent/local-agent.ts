import { chmod, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AppsPortInUseError, startAppsProxy, type AppsProxy } from '../engine/local/apps-proxy.client.ts';
import { appsProxySocketFits, appsProxySocketPath } from '../engine/local/apps-proxy.protocol.ts';
import { createLocalDriver } from '../engine/local/local-driver.ts';
import { WorkloadCgroups } from '../engine/local/workload-cgroups.ts';
import { WorkloadSandbox } from '../engine/local/workload-sandbox.ts';
import { makePrivateDirectory } from '../lib/private-files.ts';
import type { AgentClient } from './agent.client.ts';
import { runAgentOnHost, type DriverHost, type DriverHostOptions } from './agent.runtime.ts';

export { AppsPortInUseError, HttpsPortUnusableError } from '../engine/local/apps-proxy.client.ts';

/**
 * The local driver's host (docs/local-engine.md): the apps proxy on the apps port (a process of its own that outlives
 * the agent, found again or started), the workload sandbox and control groups, and the driver re-adopting whatever
 * its state directory says still runs. `slipway server` runs an agent over it for its LOCAL clusters (in-process
 * client, startLocalAgent); `slipway agent --driver local` runs one against a control plane over HTTPS (the registry,
 * agent.drivers.ts). Stopping it leaves the workloads running: the next agent over the same state directory takes
 * them over, and the apps proxy keeps routing to them meanwhile.
 */
export interface LocalAgentOptions extends DriverHostOptions {
  client: AgentClient;
  version: string;
  /** Long-poll wait per lease request (the runtime's default when absent). */
  pollWaitSeconds?: number;
  /** Tasks run at once (the runtime's default when absent). */
  concurrency?: number | undefined;
}

export interface RunningLocalAgent {
  appsAddress: AddressInfo;
  /** Stops leasing and following; workloads keep running. */
  stop(): Promise<void>;
  /** Stops every workload too (tests and benchmarks): no process or port left. */
  stopWithWorkloads(): Promise<void>;
}
/**
 * The state directory holds the agent's records, logs and every service's files: it is this account's alone (0700),
 * as the data directory holding it is, and is narrowed so at every start. One exception: running as root (as in
 * containers), the agent runs database servers as their engines' own accounts, which must pass through the state
 * directory and the one holding it to reach their data. Those two get the search bit for group and others — never
 * the read bit, so nobody else can list them — and nothing more.
 */
async function prepareStateDirectory(stateDir: string, trouble: (message: string) => void): Promise<void> {
  makePrivateDirectory(stateDir);
  const asRoot = process.getuid?.() === 0;
  const wanted = asRoot ? 0o711 : 0o700;
  if (((await stat(stateDir)).mode & 0o777) !== wanted) await chmod(stateDir, wanted);
  if (!asRoot) return;
  // The directory holding it only ever gains the search bit here: it may be the operator's (--state-dir).
  const holder = path.dirname(stateDir);
  const { mode } = await stat(holder);
  if ((mode & 0o011) !== 0o011) await chmod(holder, (mode & 0o7777) | 0o011);
  // Directories further up are the machine owner's to open, not Slipway's: say which one stops the servers.
  for (let dir = path.dirname(holder); ; dir = path.dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      trouble(`database servers run as their own accounts and cannot pass through ${dir} (mode without o+x): databases will fail to start until it is opened (chmod o+x) or SLIPWAY_DATA_DIR moves`);
      return;
    }
    if (dir === path.dirname(dir)) return;
  }
}

/**
 * The apps proxy, with the services' internal addresses: a process of its own that outlives the agent
 * (apps-proxy.process.ts), found again or started; in this process only where its control socket's path would be too
 * long for a Unix socket (a deep state directory), the internal addresses then being the driver's own.
 */
async function startProxy(options: DriverHostOptions): Promise<AppsProxy> {
  const onTrouble = (message: string): void => options.onTrouble(`proxy: ${message}`);
  if (appsProxySocketFits(options.stateDir)) return startAppsProxy({ stateDir: options.stateDir, host: options.appsHost, port: options.appsPort, onTrouble });
  onTrouble(`${appsProxySocketPath(options.stateDir)} is too long a path for a Unix socket: the apps proxy runs in the agent's process and stops with it`);
  // Loaded only here: the proxy's forwarding library is the proxy process's, not the agent's, to load.
  const { LocalReverseProxy } = await import('../engine/local/reverse-proxy.ts');
  const proxy = new LocalReverseProxy({ onError: onTrouble });
  const address = await proxy.listen(options.appsPort, options.appsHost).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new AppsPortInUseError(options.appsHost, options.appsPort, error);
    throw error;
  });
  return Object.assign(proxy, {
    address,
    resync: () => Promise.resolve(),
    detach: () => proxy.close(),
    shutdown: () => proxy.close(),
  });
}

export async function startLocalDriverHost(options: DriverHostOptions): Promise<DriverHost & { appsAddress: AddressInfo }> {
  await prepareStateDirectory(options.stateDir, options.onTrouble);
  const proxy = await startProxy(options);
  const appsAddress = proxy.address;
  const sandbox = new WorkloadSandbox({
    isolation: options.isolation,
    protectedPaths: [...new Set([...options.protectedPaths, options.stateDir])],
    identitiesFile: path.join(options.stateDir, 'identities.json'),
  });
  if (!sandbox.confined) options.onTrouble(sandbox.describe(undefined));
  else if (sandbox.unavailable !== undefined) options.onTrouble(`workload isolation is strict, but this host cannot confine workloads (${sandbox.unavailable}): deployments of applications and jobs will fail until it can, or SLIPWAY_WORKLOAD_ISOLATION=none`);
  const cgroups = new WorkloadCgroups();
  if (cgroups.unavailable !== undefined) {
    options.onTrouble(`memory limits are held by sampling and CPU is not limited: this host gives the agent no control groups (${cgroups.unavailable})`);
  }
  const driver = createLocalDriver({
    stateDir: options.stateDir,
    sandbox,
    cgroups,
    proxy,
    ...(proxy.internal === undefined ? {} : { internalAddresses: proxy.internal }),
    git: options.git,
    externalPostgresUrl: options.externalPostgresUrl,
    // Without a sink (no control plane to tell), runtime output stays in the driver's own log files.
    workloadLogs: options.workloadLogs ?? (async () => undefined),
    ...(options.workloadHealth === undefined ? {} : { workloadHealth: options.workloadHealth }),
    onTrouble: options.onTrouble,
  });
  try {
    await driver.recover();
  } catch (error) {
    options.onTrouble(`re-adopting workloads failed: ${(error as Error).message}`);
  }
  // What the previous agent routed was served meanwhile; now the proxy serves what this one took over, and only that.
  await proxy.resync();
  return {
    driver,
    appsAddress,
    describe: () => `serving apps on http://${appsAddress.address}:${appsAddress.port}`,
    async stop(withWorkloads) {
      if (withWorkloads) await driver.stopAll();
      else await driver.detach();
      cgroups.tidy();
      // The proxy keeps serving the workloads that keep running; with them stopped, it stops too.
      if (withWorkloads) await proxy.shutdown();
      else await proxy.detach();
    },
  };
}

/** The server's in-process agent for its LOCAL clusters: the local driver's host with the agent runtime over it. */
export async function startLocalAgent(options: LocalAgentOptions): Promise<RunningLocalAgent> {
  const host = await startLocalDriverHost({
    ...options,
    workloadLogs: async (serviceId, lines) => void (await options.client.appendWorkloadLogs(serviceId, lines)),
    workloadHealth: async (serviceId, report) => void (await options.client.reportWorkloadHealth(serviceId, report)),
  });
  const running = runAgentOnHost(host, options);
  return { appsAddress: host.appsAddress, stop: () => running.stop(false), stopWithWorkloads: () => running.stop(true) };
}
