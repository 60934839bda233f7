import { Counter } from 'prom-client';
import type { MetricsRegistry } from '../../lib/metrics-registry.ts';

/**
 * Service deployments by how they ended: counted where the deployments module settles a service's action
 * (deployments.transitions.ts), by the service's kind (APPLICATION, DATABASE, …) and the state it settled in
 * (DEPLOYED, BUILD_ERROR, DEPLOYMENT_ERROR, STOPPED, RESTARTED, CANCELED, DELETED, and the other *_ERROR states).
 */
export interface DeploymentOutcomeMetrics {
  serviceActionSettled(serviceKind: string, status: string): void;
}

export function registerDeploymentMetrics(registry: MetricsRegistry): DeploymentOutcomeMetrics {
  const outcomes = new Counter({
    name: 'slipway_service_deployment_outcomes_total',
    help: "Service actions (deploy, stop, restart, delete) by the service's kind and the state they settled in, counted by the replica that applied the settling move.",
    labelNames: ['service_kind', 'status'],
    registers: [registry],
  });
  return {
    serviceActionSettled(serviceKind, status) {
      outcomes.inc({ service_kind: serviceKind, status });
    },
  };
}
