import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { createKubernetesCluster, loadKubeconfig, type KubernetesCluster } from '../../src/engine/kubernetes/kubernetes-cluster.ts';
import { startFakeKubelet, type FakeKubelet, type FakeKubeletOptions } from './fake-kubelet.ts';
import { startKubeCluster, type KubeCluster, type KubeClusterOptions } from './kube-cluster.ts';

/**
 * What every Kubernetes suite starts with: a real control plane (kube-cluster.ts) whose only node is the fake
 * kubelet (fake-kubelet.ts, a TEST DOUBLE), the admin's kubeconfig loaded, the driver's cluster port over it and the
 * typed clients a test checks objects with. stop() ends the kubelet, then the control plane, even when one fails.
 */
export interface KubeWorld {
  kube: KubeCluster;
  kubelet: FakeKubelet;
  config: KubeConfig;
  /** The driver's own access to the cluster (src/engine/kubernetes/kubernetes-cluster.ts), as the admin. */
  cluster: KubernetesCluster;
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  networking: NetworkingV1Api;
  stop(): Promise<void>;
}

export interface KubeWorldOptions extends KubeClusterOptions {
  /** The fake kubelet's options; its `outcome` is given the kubelet too (to write a pod's log lines, say). */
  kubelet?: Omit<FakeKubeletOptions, 'kubeconfig' | 'outcome'> & { outcome?: (pod: Parameters<NonNullable<FakeKubeletOptions['outcome']>>[0], kubelet: FakeKubelet) => ReturnType<NonNullable<FakeKubeletOptions['outcome']>> };
}

/** Starts the world; the first run on a machine builds the control plane's binaries (minutes: give beforeAll 20). */
export async function startKubeWorld(options: KubeWorldOptions = {}): Promise<KubeWorld> {
  const { kubelet: kubeletOptions, ...clusterOptions } = options;
  const kube = await startKubeCluster(clusterOptions);
  let kubelet: FakeKubelet | undefined;
  try {
    const outcome = kubeletOptions?.outcome;
    kubelet = await startFakeKubelet({
      ...kubeletOptions,
      kubeconfig: kube.kubeconfig,
      outcome: outcome === undefined ? undefined : (pod) => (kubelet === undefined ? undefined : outcome(pod, kubelet)),
    });
  } catch (error) {
    await kube.stop();
    throw error;
  }
  const config = new KubeConfig();
  config.loadFromString(kube.kubeconfig);
  const started = kubelet;
  return {
    kube,
    kubelet: started,
    config,
    cluster: createKubernetesCluster(loadKubeconfig({ kind: 'yaml', yaml: kube.kubeconfig })),
    core: config.makeApiClient(CoreV1Api),
    apps: config.makeApiClient(AppsV1Api),
    batch: config.makeApiClient(BatchV1Api),
    networking: config.makeApiClient(NetworkingV1Api),
    async stop() {
      try {
        await started.stop();
      } finally {
        await kube.stop();
      }
    },
  };
}
