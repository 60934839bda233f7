import type { KubeConfig } from '@kubernetes/client-node';
import { createKubernetesCluster, kubernetesErrorMessage, loadKubeconfig, type KubeconfigSource } from '../engine/kubernetes/kubernetes-cluster.ts';
import { createKubernetesDriver } from '../engine/kubernetes/kubernetes-driver.ts';
import { reviewPermissions } from '../engine/kubernetes/kubernetes-permissions.ts';
import { startCertificateReports } from '../engine/kubernetes/kubernetes-certificates.ts';
import { startClusterEventReports } from '../engine/kubernetes/kubernetes-events.ts';
import { startJobRunReports } from '../engine/kubernetes/kubernetes-job-runs.ts';
import { startKubernetesRuntime } from '../engine/kubernetes/kubernetes-runtime.ts';
import type { AgentClusterFacts } from '../protocol/agent-protocol.ts';
import type { DriverHost, DriverHostOptions } from './agent.runtime.ts';

/** How long the cluster's facts are kept before the next heartbeat reads them again: a review is a few requests. */
const FACTS_REFRESH_MS = 5 * 60_000;

/**
 * The Kubernetes driver's host (`slipway agent --driver kubernetes`): the cluster from a kubeconfig (file and context)
 * or, inside a pod, its service account; the API versions it serves, read once; then the driver over it. Nothing
 * runs on the agent's own host: stopping the agent leaves the workloads to the cluster. At start, and every few
 * minutes after, it reviews its own permissions against what it needs (kubernetes-permissions.ts) and counts the
 * nodes; the heartbeat carries both with the server's version (docs/kubernetes.md, "Installing the agent").
 */
export async function startKubernetesDriverHost(options: DriverHostOptions): Promise<DriverHost> {
  const source: KubeconfigSource = options.kubeconfig ?? (process.env.KUBERNETES_SERVICE_HOST === undefined ? { kind: 'file', path: defaultKubeconfigPath() } : { kind: 'in-cluster' });
  let config: KubeConfig;
  try {
    config = loadKubeconfig(source);
  } catch (error) {
    throw new Error(`the Kubernetes driver has no usable kubeconfig (${describeSource(source)}): ${(error as Error).message}`, { cause: error });
  }
  const cluster = createKubernetesCluster(config);
  let served;
  let version;
  try {
    served = await cluster.servedKinds();
    version = await cluster.serverVersion();
  } catch (error) {
    throw new Error(`the Kubernetes API of ${config.getCurrentCluster()?.server ?? describeSource(source)} cannot be reached: ${kubernetesErrorMessage(error)}`, { cause: error });
  }
  const driver = createKubernetesDriver({ cluster, served, ingressClass: options.ingressClass, certManagerIssuer: options.certManagerIssuer, helmBinary: options.helmBinary, workflowRunnerImage: options.workflowRunnerImage, build: options.imageBuild, git: options.git, onTrouble: options.onTrouble });
  const server = config.getCurrentCluster()?.server ?? 'in-cluster';
  const serverVersion = version;

  /** The facts as read now; a part the agent may not read is unknown (null), never a reason to fail the heartbeat. */
  async function readFacts(): Promise<AgentClusterFacts> {
    const [review, nodes] = await Promise.allSettled([reviewPermissions(config), cluster.nodeCount()]);
    if (review.status === 'rejected') options.onTrouble(`reviewing the agent's permissions failed: ${kubernetesErrorMessage(review.reason)}`);
    return {
      kubernetes_version: serverVersion,
      node_count: nodes.status === 'fulfilled' ? nodes.value : null,
      missing_permissions: review.status === 'fulfilled' ? review.value.missing : [],
      ...(options.certManagerIssuer === undefined ? {} : { cert_manager_issuer: options.certManagerIssuer }),
    };
  }
  let facts: { at: number; value: AgentClusterFacts } = { at: Date.now(), value: await readFacts() };
  if (facts.value.missing_permissions.length > 0) options.onTrouble(`the agent lacks permissions: ${facts.value.missing_permissions.join(', ')}`);
  // The pods' logs and health, from a watch of Slipway's pods, while the agent runs (kubernetes-runtime.ts).
  const runtime =
    options.workloadLogs === undefined && options.workloadHealth === undefined
      ? undefined
      : startKubernetesRuntime({ config, workloadLogs: options.workloadLogs, workloadHealth: options.workloadHealth, onTrouble: options.onTrouble });
  // Each cron run's start and end with its exit code, in the same logs (kubernetes-job-runs.ts).
  const jobRuns = options.workloadLogs === undefined ? undefined : startJobRunReports({ config, workloadLogs: options.workloadLogs, onTrouble: options.onTrouble });
  // Where cert-manager's certificates of the Ingresses' hostnames stand, for the domains' certificate state (kubernetes-certificates.ts).
  const certificates =
    options.certManagerIssuer === undefined || options.certificateReports === undefined
      ? undefined
      : startCertificateReports({ config, report: options.certificateReports, onTrouble: options.onTrouble, periodMs: options.certificateReportMs });
  // The Kubernetes events of Slipway's namespaces, for the cluster's events (kubernetes-events.ts).
  const clusterEvents =
    options.clusterEventReports === undefined
      ? undefined
      : startClusterEventReports({ config, report: options.clusterEventReports, onTrouble: options.onTrouble, periodMs: options.clusterEventReportMs });
  return {
    driver,
    describe: () => `deploying onto Kubernetes ${version} at ${server}`,
    async facts() {
      if (Date.now() - facts.at >= FACTS_REFRESH_MS) facts = { at: Date.now(), value: await readFacts() };
      return facts.value;
    },
    async stop() {
      // The workloads are the cluster's to run: nothing of them lives in this process, only the streams that follow them.
      await Promise.all([runtime?.stop(), jobRuns?.stop(), certificates?.stop(), clusterEvents?.stop()]);
    },
  };
}

function defaultKubeconfigPath(): string {
  return process.env.KUBECONFIG ?? `${process.env.HOME ?? ''}/.kube/config`;
}

function describeSource(source: KubeconfigSource): string {
  if (source.kind === 'in-cluster') return 'the pod service account';
  if (source.kind === 'file') return `${source.path}${source.context === undefined ? '' : `, context ${source.context}`}`;
  return 'the given kubeconfig';
}
