import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createAgentClient, enrollAgent } from '../agent/agent.client.ts';
import { ControlPlaneRefusal } from '../protocol/agent-protocol.ts';
import { AGENT_DRIVERS, agentDriverNames, isAgentDriverName } from '../agent/agent.drivers.ts';
import { runAgentOnHost } from '../agent/agent.runtime.ts';
import type { Config } from '../config.ts';
import { createSystemGitAccess } from '../git/system-git.ts';
import { SLIPWAY_VERSION } from '../lib/version.ts';
import { writePrivateJson } from './credentials.ts';
import { CliError } from './sign-in.ts';

/**
 * `slipway agent`: an agent as a process of its own, for a cluster registered with the control plane (a
 * self-managed cluster's operator bootstrap gives the one-time enrollment token). It enrolls once and keeps the
 * credential it receives in `<state-dir>/agent-credential.json` (0600), so a restart needs no new token; then it runs
 * the driver named by --driver (agent.drivers.ts) until SIGINT/SIGTERM, which stop the agent and leave the workloads
 * running for the next start to take over. Git access, the apps port and a shared PostgreSQL come from the same SLIPWAY_* variables
 * as the server's.
 */
export interface AgentCommandOptions {
  controlPlane: string;
  enrollmentToken?: string | undefined;
  driver: string;
  stateDir?: string | undefined;
  /** Tasks run at once (1–20; the runtime's default when absent). */
  concurrency?: number | undefined;
  /** The Kubernetes driver's kubeconfig file and context. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  ingressClass?: string | undefined;
}

interface StoredAgentCredential {
  control_plane: string;
  cluster_id: string;
  credential: string;
}

function controlPlaneUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`--control-plane "${raw}" is not a URL such as https://slipway.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CliError(`--control-plane must be an http(s) URL, got "${url.protocol}//"`);
  return url.origin;
}

async function storedCredential(file: string): Promise<StoredAgentCredential | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as StoredAgentCredential;
  } catch {
    throw new CliError(`${file} is not valid JSON; delete it and enroll again with a new --enrollment-token`);
  }
}

/** The credential for this control plane: the stored one, or one enrollment with the token. */
async function agentCredential(options: AgentCommandOptions, baseUrl: string, stateDir: string): Promise<StoredAgentCredential> {
  const file = path.join(stateDir, 'agent-credential.json');
  const stored = await storedCredential(file);
  if (stored !== undefined && stored.control_plane === baseUrl) return stored;
  if (options.enrollmentToken === undefined) {
    throw new CliError(`no credential for ${baseUrl} in ${stateDir}: give the cluster's one-time --enrollment-token`);
  }
  try {
    const enrolled = await enrollAgent(baseUrl, options.enrollmentToken);
    const credential = { control_plane: baseUrl, cluster_id: enrolled.cluster_id, credential: enrolled.credential };
    await writePrivateJson(file, credential);
    return credential;
  } catch (error) {
    if (error instanceof ControlPlaneRefusal) throw new CliError(`enrollment refused: ${error.message}`);
    throw new CliError(`could not reach ${baseUrl}: ${(error as Error).message}`);
  }
}

export async function runAgentCommand(config: Config, options: AgentCommandOptions, out: (line: string) => void): Promise<void> {
  const driverName = options.driver;
  if (!isAgentDriverName(driverName)) throw new CliError(`--driver ${driverName} is not one of: ${agentDriverNames().join(', ')}`);
  const baseUrl = controlPlaneUrl(options.controlPlane);
  const stateDir = path.resolve(options.stateDir ?? path.join(config.dataDir, 'agent'));
  const { cluster_id: clusterId, credential } = await agentCredential(options, baseUrl, stateDir);
  const client = createAgentClient({ controlPlaneUrl: baseUrl, credential });
  const onTrouble = (message: string) => out(`agent: ${message}`);
  const host = await AGENT_DRIVERS[driverName]({
    stateDir,
    appsHost: config.host,
    appsPort: config.appsPort,
    git: createSystemGitAccess({ allowPrivateHosts: config.gitAllowPrivateHosts, allowedHosts: config.gitAllowedHosts }),
    externalPostgresUrl: config.localPostgresUrl,
    isolation: config.workloadIsolation,
    protectedPaths: [config.dataDir],
    onTrouble,
    workloadLogs: async (serviceId, lines) => void (await client.appendWorkloadLogs(serviceId, lines)),
    workloadHealth: async (serviceId, report) => void (await client.reportWorkloadHealth(serviceId, report)),
    ...(options.kubeconfig === undefined ? {} : { kubeconfig: { kind: 'file', path: path.resolve(options.kubeconfig), context: options.context } }),
    ingressClass: options.ingressClass,
  });
  const concurrency = options.concurrency ?? config.agentConcurrency;
  const agent = runAgentOnHost(host, { client, version: SLIPWAY_VERSION, onTrouble, ...(concurrency === undefined ? {} : { concurrency }) });
  out(`agent for cluster ${clusterId} (driver ${driverName}) ${host.describe()}`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void agent.stop(false).then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  out('agent stopped; workloads keep running');
}
