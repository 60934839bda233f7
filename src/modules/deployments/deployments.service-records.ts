import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { referenceStatus, type DeploymentState } from '../../engine/deployment-states.ts';
import type { WorkloadHealth } from '../../protocol/agent-protocol.ts';
import { readJson } from '../../db/db.json.ts';
import type { Queryable } from '../../db/db.schema.ts';
import { notFound } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { findServiceDeployment, findRuntime, type ServiceDeploymentRow, type ServiceRuntimeRow } from './deployments.repo.ts';
import type { DeploymentSnapshot, DeploymentsDeps } from './deployments.service.ts';
import { stateOf } from './deployments.states.ts';

/**
 * What every part of a service's deployments reads (deployments.service.ts assembles the parts): the service's
 * runtime row (READY until it first acts), its deployment records and their snapshots, the status view with
 * OUT_OF_DATE, and the in-process wake-up of live log streams. An environment's: deployments.environment-records.ts.
 */

export const NO_WORKLOAD_HEALTH = { workload_health: null, workload_restarts: null, workload_message: null, workload_reported_at: null };

/** A service's state, as its runtime row holds it. */
export function serviceStateOf(runtime: Pick<ServiceRuntimeRow, 'service_id' | 'status'>): DeploymentState {
  return stateOf('service', runtime.service_id, runtime.status);
}

/** The state a service's deployment record reached. */
export function recordStateOf(record: Pick<ServiceDeploymentRow, 'id' | 'status'>): DeploymentState {
  return stateOf('service', record.id, record.status);
}

/** JSON with object keys sorted at every level: the same settings always hash the same, whatever the database's key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What a deployment of the service would carry of its own configuration; a change makes a deployed service OUT_OF_DATE. */
export function settingsHashOf(service: Pick<StoredService, 'kind' | 'name' | 'settings'>): string {
  return createHash('sha256').update(canonicalJson({ kind: service.kind, name: service.name, settings: service.settings }), 'utf8').digest('hex');
}

export function snapshotOf(record: ServiceDeploymentRow): DeploymentSnapshot {
  return readJson<DeploymentSnapshot>(record.snapshot);
}

/** The signal channel of "a deployment got log lines or moved": its payload is the deployment's id. */
export const DEPLOYMENT_CHANGES_SIGNAL_CHANNEL = 'deployment_changes';

/**
 * Wakes the live log streams of a deployment when it gets lines or changes state (`emit` after the commit): with
 * change signals, the streams of every process sharing the database (a line reported to one replica reaches a reader
 * of another at once); without, this process's. Streams poll as well.
 */
function createDeploymentChanges(signals: DeploymentsDeps['signals']) {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  signals?.subscribe(DEPLOYMENT_CHANGES_SIGNAL_CHANNEL, (deploymentId) => {
    if (deploymentId !== undefined) local.emit(deploymentId);
    else for (const id of local.eventNames()) local.emit(id);
  });
  return {
    emit(deploymentId: string): void {
      if (signals === undefined) local.emit(deploymentId);
      else signals.publish(DEPLOYMENT_CHANGES_SIGNAL_CHANNEL, deploymentId);
    },
    on(deploymentId: string, listener: () => void): void {
      local.on(deploymentId, listener);
    },
    off(deploymentId: string, listener: () => void): void {
      local.off(deploymentId, listener);
    },
  };
}

export function createServiceRecords(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'services' | 'variables' | 'signals'>) {
  const { db, clock } = deps;
  const changes = createDeploymentChanges(deps.signals);

  /** The service an id names; with a kind (the path's), 404 unless it is of that kind, as the services module answers. */
  async function requireService(serviceId: string, kind?: ServiceKind): Promise<StoredService> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined || (kind !== undefined && service.kind !== kind)) {
      throw notFound(`${kind === undefined ? 'service' : kind.toLowerCase().replace('_', ' ')} ${serviceId} not found`);
    }
    return service;
  }

  /** The runtime of a service never asked to act: READY, with no deployment. */
  function neverActed(serviceId: string): ServiceRuntimeRow {
    return {
      service_id: serviceId,
      status: 'READY',
      last_deployment_id: null,
      deployed_deployment_id: null,
      ...NO_WORKLOAD_HEALTH,
      updated_at: clock.now().toISOString(),
    };
  }

  async function runtimeOf(executor: Queryable, serviceId: string): Promise<ServiceRuntimeRow> {
    return (await findRuntime(executor, serviceId)) ?? neverActed(serviceId);
  }

  /** Whether what would be deployed now differs from what runs: settings, or the variables' content hash. */
  async function deploymentStatusOf(service: StoredService, runtime: ServiceRuntimeRow): Promise<'NEVER_DEPLOYED' | 'UP_TO_DATE' | 'OUT_OF_DATE'> {
    if (runtime.deployed_deployment_id === null) return 'NEVER_DEPLOYED';
    const deployed = await findServiceDeployment(db, runtime.deployed_deployment_id);
    if (deployed === undefined) return 'NEVER_DEPLOYED';
    if (deployed.settings_hash !== settingsHashOf(service)) return 'OUT_OF_DATE';
    if (deployed.variables_hash !== null) {
      const current = await deps.variables.explain(service.environmentId, service.id, false);
      if (current.content_hash !== deployed.variables_hash) return 'OUT_OF_DATE';
    }
    return 'UP_TO_DATE';
  }

  async function statusView(service: StoredService, runtime: ServiceRuntimeRow) {
    const state = serviceStateOf(runtime);
    const last = runtime.last_deployment_id === null ? undefined : await findServiceDeployment(db, runtime.last_deployment_id);
    return {
      ...referenceStatus(service.id, state, await deploymentStatusOf(service, runtime), last),
      /** Slipway's addition: why the service waits or failed, or why its running workload is not well. */
      message: (runtime.workload_health !== null && runtime.workload_health !== 'RUNNING' ? runtime.workload_message : null) ?? last?.message ?? null,
      /** Slipway's addition: how the deployed workload runs, as its agent last said; null until it said anything. */
      workload:
        runtime.workload_health === null
          ? null
          : {
              health: runtime.workload_health as WorkloadHealth,
              restarts: runtime.workload_restarts ?? 0,
              message: runtime.workload_message,
              reported_at: runtime.workload_reported_at ?? runtime.updated_at,
            },
    };
  }

  return { changes, requireService, neverActed, runtimeOf, deploymentStatusOf, statusView };
}

export type ServiceRecords = ReturnType<typeof createServiceRecords>;
export type StatusView = Awaited<ReturnType<ServiceRecords['statusView']>>;
