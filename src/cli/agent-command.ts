import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { createAgentClient, enrollAgent } from '../agent/agent.client.ts';
import { ControlPlaneRefusal } from '../protocol/agent-protocol.ts';
import { AGENT_DRIVERS, agentDriverNames, isAgentDriverName } from '../agent/agent.drivers.ts';
import { runAgentOnHost } from '../agent/agent.runtime.ts';
import type { Config } from '../config.ts';
import { createSystemGitAccess } from '../git/system-git.ts';
import { nodeHttp } from '../lib/node-http.ts';
import { startTracing } from '../lib/tracing.ts';
import { SLIPWAY_VERSION } from '../lib/version.ts';
import { writePrivateJson } from './credentials.ts';
import { CliError } from './sign-in.ts';
import { IMAGE_BUILDERS, type ImageBuilder, type ImageBuildOptions } from '../engine/kubernetes/kubernetes-build.ts';

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
  /** A file holding the one-time token (a mounted Secret): the token never shows in the process's arguments. */
  enrollmentTokenFile?: string | undefined;
  /** `host:port` of /healthz and /readyz (the pod's probes); none when unset. */
  healthAddress?: string | undefined;
  driver: string;
  stateDir?: string | undefined;
  /** Tasks run at once (1–20; the runtime's default when absent). */
  concurrency?: number | undefined;
  /** The Kubernetes driver's kubeconfig file and context. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  ingressClass?: string | undefined;
  certManagerIssuer?: string | undefined;
  helmBinary?: string | undefined;
  workflowRunnerImage?: string | undefined;
  /** The Kubernetes driver's image builds: the registry (host/path), its dockerconfigjson file, the builder, the clone's image. */
  buildRegistry?: string | undefined;
  buildRegistryAuth?: string | undefined;
  buildImageBuilder?: string | undefined;
  buildGitImage?: string | undefined;
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
  const enrollmentToken = options.enrollmentToken ?? (await tokenFromFile(options.enrollmentTokenFile));
  if (enrollmentToken === undefined) {
    throw new CliError(`no credential for ${baseUrl} in ${stateDir}: give the cluster's one-time --enrollment-token`);
  }
  try {
    const enrolled = await enrollAgent(baseUrl, enrollmentToken);
    const credential = { control_plane: baseUrl, cluster_id: enrolled.cluster_id, credential: enrolled.credential };
    await writePrivateJson(file, credential);
    return credential;
  } catch (error) {
    if (error instanceof ControlPlaneRefusal) throw new CliError(`enrollment refused: ${error.message}`);
    throw new CliError(`could not reach ${baseUrl}: ${(error as Error).message}`);
  }
}

async function tokenFromFile(file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`--enrollment-token-file ${file} cannot be read: ${(error as Error).message}`);
  }
  const token = text.trim();
  return token === '' ? undefined : token;
}

function healthAddressOf(raw: string): { host: string; port: number } {
  const colon = raw.lastIndexOf(':');
  const port = Number(raw.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--health-address "${raw}" is not host:port, e.g. 0.0.0.0:8081`);
  return { host: raw.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port };
}

/**
 * The probes' endpoint: /healthz answers 200 while the process runs; /readyz 200 once the agent is enrolled and its
 * last heartbeat was answered, 503 otherwise.
 */
async function startHealthServer(address: { host: string; port: number }, ready: () => boolean): Promise<Server> {
  const server = nodeHttp.createServer((request, response) => {
    const route = (request.url ?? '').split('?')[0];
    const ok = route === '/healthz' || (route === '/readyz' && ready());
    const known = route === '/healthz' || route === '/readyz';
    response.writeHead(ok ? 200 : known ? 503 : 404, { 'content-type': 'text/plain' });
    response.end(ok ? 'ok\n' : known ? 'not ready\n' : 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  return server;
}

/** The in-cluster image build's options; none without --build-registry (APPLICATIONs then fail naming it). */
async function imageBuildOf(options: AgentCommandOptions, configured: string | undefined): Promise<ImageBuildOptions | undefined> {
  const builder = options.buildImageBuilder ?? configured ?? 'kaniko';
  if (!(IMAGE_BUILDERS as readonly string[]).includes(builder)) throw new CliError(`--build-image-builder ${builder} is not one of: ${IMAGE_BUILDERS.join(', ')}`);
  if (options.buildRegistry === undefined) return undefined;
  if (!/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/.test(options.buildRegistry.replace(/\/+$/, ''))) {
    throw new CliError(`--build-registry "${options.buildRegistry}" is not a registry host and path such as registry.example.com/slipway`);
  }
  let registryAuth: string | undefined;
  if (options.buildRegistryAuth !== undefined) {
    try {
      registryAuth = await readFile(options.buildRegistryAuth, 'utf8');
      JSON.parse(registryAuth);
    } catch (error) {
      throw new CliError(`--build-registry-auth ${options.buildRegistryAuth} is not a readable dockerconfigjson: ${(error as Error).message}`);
    }
  }
  return { builder: builder as ImageBuilder, registry: options.buildRegistry.replace(/\/+$/, ''), registryAuth, gitImage: options.buildGitImage };
}

export async function runAgentCommand(config: Config, options: AgentCommandOptions, out: (line: string) => void): Promise<void> {
  const driverName = options.driver;
  if (!isAgentDriverName(driverName)) throw new CliError(`--driver ${driverName} is not one of: ${agentDriverNames().join(', ')}`);
  const baseUrl = controlPlaneUrl(options.controlPlane);
  const healthAddress = options.healthAddress === undefined ? undefined : healthAddressOf(options.healthAddress);
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
    certificateReports: (report) => client.reportCertificates(report),
    clusterEventReports: (report) => client.reportClusterEvents(report),
    ...(options.kubeconfig === undefined ? {} : { kubeconfig: { kind: 'file', path: path.resolve(options.kubeconfig), context: options.context } }),
    ingressClass: options.ingressClass,
    certManagerIssuer: options.certManagerIssuer,
    imageBuild: await imageBuildOf(options, config.kubernetesBuilder),
    helmBinary: options.helmBinary ?? config.helmBinary,
    workflowRunnerImage: options.workflowRunnerImage ?? config.workflowRunnerImage,
  });
  const concurrency = options.concurrency ?? config.agentConcurrency;
  // Each task's work is a span of the trace of the job that dispatched it (docs/operations.md, "Traces").
  const tracing =
    config.tracing === undefined
      ? undefined
      : await startTracing({ tracesUrl: config.tracing.tracesUrl, serviceName: config.tracing.serviceName ?? 'slipway-agent', serviceVersion: SLIPWAY_VERSION });
  const agent = runAgentOnHost(host, { client, version: SLIPWAY_VERSION, onTrouble, ...(concurrency === undefined ? {} : { concurrency }) });
  const health = healthAddress === undefined ? undefined : await startHealthServer(healthAddress, () => agent.heartbeating());
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
  if (health !== undefined) await new Promise((resolve) => health.close(resolve));
  await tracing?.shutdown();
  out('agent stopped; workloads keep running');
}
