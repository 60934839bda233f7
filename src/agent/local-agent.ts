import { chmod, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLocalDriver } from '../engine/local/local-driver.ts';
import { LocalReverseProxy } from '../engine/local/reverse-proxy.ts';
import { WorkloadCgroups } from '../engine/local/workload-cgroups.ts';
import { WorkloadSandbox } from '../engine/local/workload-sandbox.ts';
import { makePrivateDirectory } from '../lib/private-files.ts';
import type { AgentClient } from './agent.client.ts';
import { runAgentOnHost, type DriverHost, type DriverHostOptions } from './agent.runtime.ts';

/**
 * The local driver's host (docs/local-engine.md): the reverse proxy on the apps port, the workload sandbox and control
 * groups, and the driver re-adopting whatever its state directory says still runs. `slipway server` runs an agent
 * over it for its LOCAL clusters (in-process client, startLocalAgent); `slipway agent --driver local` runs one against
 * a control plane over HTTPS (the registry, agent.drivers.ts). Stopping it leaves the workloads running: the next
 * agent over the same state directory takes them over.
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

/** The apps port is taken: its message is the one line `slipway server` ends with (main.ts). */
export class AppsPortInUseError extends Error {
  constructor(host: string, port: number, cause: Error) {
    super(`the apps port ${host.includes(':') ? `[${host}]` : host}:${port} is in use: choose another with SLIPWAY_APPS_PORT`, { cause });
    this.name = 'AppsPortInUseError';
  }
}

export async function startLocalDriverHost(options: DriverHostOptions): Promise<DriverHost & { appsAddress: AddressInfo }> {
  await prepareStateDirectory(options.stateDir, options.onTrouble);
  const proxy = new LocalReverseProxy({ onError: (message) => options.onTrouble(`proxy: ${message}`) });
  const appsAddress = await proxy.listen(options.appsPort, options.appsHost).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new AppsPortInUseError(options.appsHost, options.appsPort, error);
    throw error;
  });
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
  return {
    driver,
    appsAddress,
    describe: () => `serving apps on http://${appsAddress.address}:${appsAddress.port}`,
    async stop(withWorkloads) {
      if (withWorkloads) await driver.stopAll();
      else await driver.detach();
      cgroups.tidy();
      await proxy.close();
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
