import { chmod, mkdir, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLocalDriver } from '../engine/local/local-driver.ts';
import { LocalReverseProxy } from '../engine/local/reverse-proxy.ts';
import type { GitAccess } from '../git/git-access.ts';
import type { AgentClient } from './agent.client.ts';
import { startAgent } from './agent.runtime.ts';

/**
 * An agent with the local driver (docs/local-engine.md): the reverse proxy on the apps port, the driver re-adopting
 * whatever its state directory says still runs, and the agent loop. `slipway server` runs one for its LOCAL clusters
 * (in-process client); `slipway agent --driver local` runs one against a control plane over HTTPS. Stopping it
 * leaves the workloads running: the next agent over the same state directory takes them over.
 */
export interface LocalAgentOptions {
  client: AgentClient;
  /** Where workloads, sources, database data and the driver's records live. */
  stateDir: string;
  appsHost: string;
  /** 0: any free port (tests); the address is answered. */
  appsPort: number;
  git: GitAccess;
  externalPostgresUrl?: string | undefined;
  version: string;
  /** The agent's and the proxy's complaints (network trouble, a refused report, an instance not answering). */
  onTrouble(message: string): void;
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
 * Running as root (as in containers), the agent runs database servers as their engines' own accounts, which must
 * pass through the state directory and the one holding it: those two get the execute (search) bit for everyone —
 * no read bit, so nobody else can list them — when they lack it.
 */
async function letServerAccountsThrough(stateDir: string, trouble: (message: string) => void): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o711 });
  if (process.getuid?.() !== 0) return;
  for (const dir of [path.dirname(stateDir), stateDir]) {
    const { mode } = await stat(dir);
    if ((mode & 0o011) !== 0o011) await chmod(dir, (mode & 0o7777) | 0o011);
  }
  // Directories further up are the machine owner's to open, not Slipway's: say which one stops the servers.
  for (let dir = path.dirname(path.dirname(stateDir)); ; dir = path.dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      trouble(`database servers run as their own accounts and cannot pass through ${dir} (mode without o+x): databases will fail to start until it is opened (chmod o+x) or SLIPWAY_DATA_DIR moves`);
      return;
    }
    if (dir === path.dirname(dir)) return;
  }
}

export async function startLocalAgent(options: LocalAgentOptions): Promise<RunningLocalAgent> {
  await letServerAccountsThrough(options.stateDir, options.onTrouble);
  const proxy = new LocalReverseProxy({ onError: (message) => options.onTrouble(`proxy: ${message}`) });
  const appsAddress = await proxy.listen(options.appsPort, options.appsHost).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new Error(`the apps port ${options.appsHost}:${options.appsPort} is in use: choose another with SLIPWAY_APPS_PORT`);
    throw error;
  });
  const driver = createLocalDriver({
    stateDir: options.stateDir,
    proxy,
    git: options.git,
    externalPostgresUrl: options.externalPostgresUrl,
    workloadLogs: async (serviceId, lines) => void (await options.client.appendWorkloadLogs(serviceId, lines)),
    workloadHealth: async (serviceId, report) => void (await options.client.reportWorkloadHealth(serviceId, report)),
    onTrouble: options.onTrouble,
  });
  try {
    await driver.recover();
  } catch (error) {
    options.onTrouble(`re-adopting workloads failed: ${(error as Error).message}`);
  }
  const agent = startAgent({
    client: options.client,
    driver,
    version: options.version,
    onTrouble: options.onTrouble,
    ...(options.pollWaitSeconds === undefined ? {} : { pollWaitSeconds: options.pollWaitSeconds }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
  let stopped: Promise<void> | undefined;
  const stop = (withWorkloads: boolean) =>
    (stopped ??= (async () => {
      await agent.stop();
      if (withWorkloads) await driver.stopAll();
      else await driver.detach();
      await proxy.close();
    })());
  return { appsAddress, stop: () => stop(false), stopWithWorkloads: () => stop(true) };
}
