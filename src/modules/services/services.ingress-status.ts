import { Type, type Static } from 'typebox';
import { DEPLOYMENT_STATES, type DeploymentState } from '../../engine/deployment-states.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * Whether a service's public route is in place (getIngressDeploymentStatus, docs/service-extras.md "Ingress status"):
 * Slipway's route is no object of its own but part of the service's deployment — the Kubernetes driver applies the
 * Ingress with the workload, the local apps proxy routes what runs — so a service with a public port answers its own
 * deployment state, and one without answers STOPPED: nothing is routed to it. Slipway has no router ids, so the
 * answer has no `routerId`.
 */

export const INGRESS_SERVICE_TYPES = ['CONTAINER', 'APPLICATION', 'HELM'] as const;
export type IngressServiceType = (typeof INGRESS_SERVICE_TYPES)[number];

export const IngressDeploymentStatusResponse = Type.Object(
  { status: Type.Enum(DEPLOYMENT_STATES) },
  { $id: 'IngressDeploymentStatusResponse', additionalProperties: false },
);

export interface IngressStatusDeps {
  kinds: readonly ServiceKindDefinition[];
  services: { requireService(kind: ServiceKind, serviceId: string): Promise<StoredService> };
  deployments: { getServiceStatus(kind: ServiceKind, serviceId: string): Promise<{ state: DeploymentState }> };
}

export function createIngressStatus(deps: IngressStatusDeps) {
  return {
    async getIngressDeploymentStatus(kind: IngressServiceType, serviceId: string): Promise<Static<typeof IngressDeploymentStatusResponse>> {
      const service = await deps.services.requireService(kind, serviceId);
      const routed = deps.kinds.find((definition) => definition.kind === kind)?.references(service.settings).publiclyReachable ?? false;
      if (!routed) return { status: 'STOPPED' };
      return { status: (await deps.deployments.getServiceStatus(kind, serviceId)).state };
    },
  };
}

export type IngressStatus = ReturnType<typeof createIngressStatus>;
