import { createKubernetesCluster, kubernetesErrorMessage, loadKubeconfig, type KubeconfigSource } from '../engine/kubernetes/kubernetes-cluster.ts';
import { createKubernetesDriver } from '../engine/kubernetes/kubernetes-driver.ts';
import { startKubernetesRuntime } from '../engine/kubernetes/kubernetes-runtime.ts';
import type { DriverHost, DriverHostOptions } from './agent.runtime.ts';

/**
 * The Kubernetes driver's host (`slipway agent --driver kubernetes`): the cluster from a kubeconfig (file and context)
 * or, inside a pod, its service account; the API versions it serves, read once; then the driver over it. Nothing
 * runs on the agent's own host: stopping the agent leaves the workloads to the cluster.
 */
export async function startKubernetesDriverHost(options: DriverHostOptions): Promise<DriverHost> {
  const source: KubeconfigSource = options.kubeconfig ?? (process.env.KUBERNETES_SERVICE_HOST === undefined ? { kind: 'file', path: defaultKubeconfigPath() } : { kind: 'in-cluster' });
  let config;
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
  const driver = createKubernetesDriver({ cluster, served, ingressClass: options.ingressClass, onTrouble: options.onTrouble });
  const server = config.getCurrentCluster()?.server ?? 'in-cluster';
  // The pods' logs and health, from a watch of Slipway's pods, while the agent runs (kubernetes-runtime.ts).
  const runtime =
    options.workloadLogs === undefined && options.workloadHealth === undefined
      ? undefined
      : startKubernetesRuntime({ config, workloadLogs: options.workloadLogs, workloadHealth: options.workloadHealth, onTrouble: options.onTrouble });
  return {
    driver,
    describe: () => `deploying onto Kubernetes ${version} at ${server}`,
    async stop() {
      // The workloads are the cluster's to run: nothing of them lives in this process, only the streams that follow them.
      await runtime?.stop();
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
