import { installHelmValues, installHelmValuesYaml, installManifestsYaml } from '../../engine/kubernetes/kubernetes-install.ts';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import type { ClusterOperators } from './clusters.operators.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * What installs a self-managed cluster's Kubernetes agent (docs/kubernetes.md, "Installing the agent"): the values of
 * the charts/slipway-agent chart (the reference's getInstallationHelmValues) and the same install as plain manifests
 * (Slipway's own getInstallationManifests). Each answer carries a new one-time enrollment token, minted as the
 * operator bootstrap mints it (24 hours; earlier unused tokens stop working): a token is stored hashed and cannot
 * be read back. Both answers are YAML text; neither is logged.
 */
export function createClusterInstallation(deps: Pick<ClustersDeps, 'publicUrl'>, operators: Pick<ClusterOperators, 'mintEnrollment'>) {
  async function valuesFor(organizationId: string, clusterId: string, createNamespace: boolean) {
    const enrollment = await operators.mintEnrollment(organizationId, clusterId, 'the Slipway agent');
    return installHelmValues({ controlPlaneUrl: deps.publicUrl, clusterId, enrollmentToken: enrollment.token, version: SLIPWAY_VERSION, createNamespace });
  }

  return {
    /** For `helm install --namespace slipway-system --create-namespace -f values.yaml`: the namespace is Helm's to create. */
    async getInstallationHelmValues(organizationId: string, clusterId: string): Promise<string> {
      return installHelmValuesYaml(await valuesFor(organizationId, clusterId, false));
    },
    async getInstallationManifests(organizationId: string, clusterId: string): Promise<string> {
      return installManifestsYaml(await valuesFor(organizationId, clusterId, true));
    },
  };
}
