import type { Kysely } from 'kysely';
import { wireAction, type DeploymentState } from '../../engine/deployment-states.ts';
import type { DB } from '../../db/db.schema.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { EnvironmentSummary } from '../environments/environments.service.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { LOG_PAGE_SIZE } from './deployments.logs.ts';
import { fannedOutDeployments } from './deployments.queue.ts';
import {
  findEnvironmentDeployment,
  findRuntime,
  findServiceDeployment,
  listEnvironmentDeploymentsPage,
  listLastLogLines,
  listRecentServiceDeploymentsOfEnvironment,
  type ServiceDeploymentLogRow,
  type ServiceDeploymentRow,
} from './deployments.repo.ts';
import { recordStateOf, snapshotOf } from './deployments.service-records.ts';
import { stateOf } from './deployments.states.ts';

/**
 * An environment's logs (docs/deployment-queue.md, "Environment logs"): the lines its services' deployments recorded
 * (listEnvironmentLogs), and its activity — one entry per action of the environment or of one of its services, with
 * the state it reached (listEnvironmentLog). Both read what the deployments keep anyway; nothing is stored twice.
 */

/** How many activity entries listEnvironmentLog answers, newest first. */
export const ENVIRONMENT_ACTIVITY_SIZE = 100;

export interface EnvironmentLogsDeps {
  db: Kysely<DB>;
  services: { listEnvironmentServices(environmentId: string): Promise<StoredService[]> };
  environments: { findEnvironmentSummary(environmentId: string): Promise<EnvironmentSummary | undefined> };
}

/** The reference's StatusKindEnum of a deployment state. */
function statusKindOf(state: DeploymentState) {
  switch (state) {
    case 'READY':
    case 'QUEUED':
      return 'WAITING' as const;
    case 'BUILDING':
    case 'DEPLOYING':
    case 'RESTARTING':
      return 'DEPLOYMENT_IN_PROGRESS' as const;
    case 'DEPLOYED':
    case 'RESTARTED':
      return 'DEPLOYED' as const;
    case 'BUILD_ERROR':
    case 'DEPLOYMENT_ERROR':
    case 'RESTART_ERROR':
      return 'DEPLOYMENT_ERROR' as const;
    case 'STOPPING':
      return 'PAUSE_IN_PROGRESS' as const;
    case 'STOPPED':
      return 'PAUSED' as const;
    case 'STOP_ERROR':
      return 'PAUSE_ERROR' as const;
    case 'DELETING':
      return 'DELETE_IN_PROGRESS' as const;
    case 'CANCELED':
    case 'CANCELING':
    case 'DELETED':
    case 'DELETE_ERROR':
      return state;
  }
}

/** The kinds the reference's EnvironmentLogTypeEnum names; the others' entries carry their scope without a type. */
function scopeTypeOf(kind: string): 'APPLICATION' | 'DATABASE' | undefined {
  return kind === 'APPLICATION' || kind === 'DATABASE' ? kind : undefined;
}

export function createEnvironmentLogs(deps: EnvironmentLogsDeps) {
  const { db } = deps;

  async function requireEnvironment(environmentId: string): Promise<EnvironmentSummary> {
    const environment = await deps.environments.findEnvironmentSummary(environmentId);
    if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
    return environment;
  }

  /** The deployments a read covers: a request's (an environment action's fan-out, or a service's own), or each service's newest. */
  async function deploymentsOf(environmentId: string, services: ReadonlyMap<string, StoredService>, version: string | undefined): Promise<ServiceDeploymentRow[]> {
    if (version === undefined) {
      const newest: ServiceDeploymentRow[] = [];
      for (const service of services.values()) {
        const lastId = (await findRuntime(db, service.id))?.last_deployment_id ?? null;
        const record = lastId === null ? undefined : await findServiceDeployment(db, lastId);
        if (record !== undefined) newest.push(record);
      }
      return newest;
    }
    const environmentRecord = await findEnvironmentDeployment(db, version);
    if (environmentRecord?.environment_id === environmentId) return fannedOutDeployments(db, environmentRecord);
    const serviceRecord = await findServiceDeployment(db, version);
    if (serviceRecord !== undefined && services.has(serviceRecord.service_id)) return [serviceRecord];
    throw badRequest('invalid version', [{ field: '/version', message: 'names no deployment request of this environment' }]);
  }

  return {
    /**
     * The recorded lines of the environment's services' deployments, in the order they were printed, at most the last
     * LOG_PAGE_SIZE: of the deployment request `version`, or of each service's newest deployment.
     */
    async listEnvironmentLogs(environmentId: string, version: string | undefined) {
      await requireEnvironment(environmentId);
      const services = new Map((await deps.services.listEnvironmentServices(environmentId)).map((service) => [service.id, service]));
      const lines: Array<{ row: ServiceDeploymentLogRow; record: ServiceDeploymentRow }> = [];
      for (const record of await deploymentsOf(environmentId, services, version)) {
        for (const row of await listLastLogLines(db, record.id, { afterSeq: 0 }, LOG_PAGE_SIZE)) lines.push({ row, record });
      }
      lines.sort((a, b) => a.row.logged_at.localeCompare(b.row.logged_at) || a.record.id.localeCompare(b.record.id) || a.row.seq - b.row.seq);
      return lines.slice(-LOG_PAGE_SIZE).map(({ row, record }) => {
        const { service } = snapshotOf(record);
        return {
          type: row.stream.toUpperCase(),
          timestamp: row.logged_at,
          details: {
            organization_id: service.organizationId,
            cluster_id: service.clusterId,
            execution_id: record.job_id,
            transmitter: { id: service.id, name: services.get(service.id)?.name ?? service.name, type: service.kind },
            stage: { step: wireAction(record.action) },
          },
          error: row.stream === 'stderr' ? { tag: 'STDERR', user_log_message: row.message } : null,
          message: { safe_message: row.message },
          deployment_id: record.id,
          seq: row.seq,
        };
      });
    },

    /** The environment's activity, newest first: each action of the environment or of its services, with the state it reached. */
    async listEnvironmentLog(environmentId: string) {
      const environment = await requireEnvironment(environmentId);
      const services = new Map((await deps.services.listEnvironmentServices(environmentId)).map((service) => [service.id, service]));
      const environmentRecords = await listEnvironmentDeploymentsPage(db, environmentId, ENVIRONMENT_ACTIVITY_SIZE, undefined);
      const serviceRecords = await listRecentServiceDeploymentsOfEnvironment(db, environmentId, ENVIRONMENT_ACTIVITY_SIZE);
      const entries = [
        ...environmentRecords.map((record) => {
          const state = stateOf('environment', record.id, record.status);
          return {
            id: record.id,
            created_at: record.created_at,
            scope: { type: 'ENVIRONMENT' as const, name: environment.name, id: environmentId },
            state: statusKindOf(state),
            message: record.message,
            execution_id: record.job_id,
            service: null,
            status: state,
            action: wireAction(record.action),
          };
        }),
        ...serviceRecords.flatMap((record) => {
          const service = services.get(record.service_id);
          if (service === undefined) return [];
          const state = recordStateOf(record);
          const type = scopeTypeOf(service.kind);
          return [
            {
              id: record.id,
              created_at: record.created_at,
              scope: { ...(type === undefined ? {} : { type }), name: service.name, id: service.id },
              state: statusKindOf(state),
              message: record.message,
              execution_id: record.job_id,
              service: { id: service.id, name: service.name, service_type: service.kind },
              status: state,
              action: wireAction(record.action),
            },
          ];
        }),
      ];
      entries.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
      return { results: entries.slice(0, ENVIRONMENT_ACTIVITY_SIZE) };
    },
  };
}

export type EnvironmentLogs = ReturnType<typeof createEnvironmentLogs>;
