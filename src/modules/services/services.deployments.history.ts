import { wireAction } from '../../engine/deployment-states.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import {
  countDeploymentsNewerThan,
  findDeployment,
  findRuntime,
  listDeploymentsPage,
  listOpenDeploymentIdsOfEnvironment,
  type ServiceDeploymentRow,
} from './services.deployments.repo.ts';
import { snapshotOf, stateOf, type DeploymentRecords } from './services.deployments.records.ts';
import type { ServiceDeploymentsDeps } from './services.deployments.service.ts';
import { actionStatusOf, type ServiceState } from './services.states.ts';

/** What a service's deployments show: its status, its history page by page, one deployment with what it carried. */

const DEFAULT_PAGE_SIZE = 20;
export const MAX_HISTORY_PAGE_SIZE = 100;

/** ISO-8601 duration of a deployment: until it finished, or until now while it runs or waits. */
function durationSeconds(record: ServiceDeploymentRow, now: Date): number {
  const end = record.finished_at === null ? now.getTime() : new Date(record.finished_at).getTime();
  return Math.max(0, (end - new Date(record.created_at).getTime()) / 1000);
}

export function createServiceDeploymentHistory(deps: Pick<ServiceDeploymentsDeps, 'db' | 'clock' | 'services'>, records: DeploymentRecords) {
  const { db, clock } = deps;
  const { requireService, runtimeOf, deploymentStatusOf, statusView } = records;

  async function historyPage(kind: ServiceKind, serviceId: string, pageSize: number | undefined, cursor: string | undefined, cursorField: string) {
    const size = pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(size) || size < 1 || size > MAX_HISTORY_PAGE_SIZE) {
      throw badRequest('invalid pageSize', [{ field: '/pageSize', message: `must be an integer from 1 to ${MAX_HISTORY_PAGE_SIZE}` }]);
    }
    const service = await requireService(serviceId, kind);
    if (cursor !== undefined) {
      const at = await findDeployment(db, cursor);
      if (at === undefined || at.service_id !== serviceId) throw badRequest('invalid cursor', [{ field: cursorField, message: 'names no deployment of this service' }]);
    }
    const rows = await listDeploymentsPage(db, serviceId, size + 1, cursor);
    const page = rows.slice(0, size);
    const before = cursor === undefined ? 0 : (await countDeploymentsNewerThan(db, serviceId, cursor)) + 1;
    return {
      service,
      rows: page,
      page: Math.floor(before / size) + 1,
      page_size: size,
      next_cursor: rows.length > size ? (page[page.length - 1]?.id ?? null) : null,
    };
  }

  return {
    async getServiceStatus(kind: ServiceKind, serviceId: string) {
      const service = await requireService(serviceId, kind);
      return statusView(service, await runtimeOf(db, serviceId));
    },

    /** Whether an action's deployment record still waits to be carried out (exists, this service's, not ended). */
    async isDeploymentOpen(serviceId: string, deploymentId: string): Promise<boolean> {
      const record = await findDeployment(db, deploymentId);
      return record !== undefined && record.service_id === serviceId && record.finished_at === null;
    },

    /** A service's state for the agents module; undefined once the service is gone. */
    async findServiceState(serviceId: string): Promise<ServiceState | undefined> {
      if ((await deps.services.findService(serviceId)) === undefined) return undefined;
      return stateOf(await runtimeOf(db, serviceId), serviceId);
    },

    /** The environment's service deployments still queued or under way (an environment's action waits on them). */
    openDeploymentIdsOfEnvironment(environmentId: string, options: { databaseStartsBefore?: string } = {}): Promise<string[]> {
      return listOpenDeploymentIdsOfEnvironment(db, environmentId, options);
    },

    async listServiceDeploymentHistory(kind: ServiceKind, serviceId: string, query: { startId?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(kind, serviceId, query.pageSize, query.startId, '/startId');
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => {
          const state = stateOf(r, r.id);
          const outcome = actionStatusOf(state);
          return {
            id: r.id,
            created_at: r.created_at,
            updated_at: r.updated_at,
            name: page.service.name,
            ...(r.git_commit_id === null ? {} : { commit: { git_commit_id: r.git_commit_id } }),
            // The reference answers an application's outcome (FAILED or SUCCESS; none while under way) and, for the
            // other kinds, the state reached (its StateEnum, which holds every service state).
            ...(kind !== 'APPLICATION'
              ? { status: state }
              : outcome === 'SUCCESS'
                ? { status: 'SUCCESS' as const }
                : outcome === 'ERROR' || outcome === 'CANCELED'
                  ? { status: 'FAILED' as const }
                  : {}),
            state,
            action: wireAction(r.action),
            message: r.message,
          };
        }),
      };
    },

    async listServiceDeploymentHistoryV2(kind: ServiceKind, serviceId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(kind, serviceId, query.pageSize, query.cursor, '/cursor');
      const now = clock.now();
      const { service } = page;
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => {
          const status = stateOf(r, r.id);
          const snapshot = snapshotOf(r);
          return {
            identifier: { name: snapshot.service.name, service_id: service.id, service_type: service.kind, execution_id: r.job_id },
            status,
            auditing_data: { created_at: r.created_at, updated_at: r.updated_at, triggered_by: r.triggered_by, origin: r.origin as 'API' },
            details: {
              ...(r.git_commit_id === null ? {} : { commit: { git_commit_id: r.git_commit_id } }),
              ...(r.image_tag === null ? {} : { tag: r.image_tag }),
            },
            status_details: { action: wireAction(r.action), status: actionStatusOf(status), sub_action: 'NONE' as const },
            icon_uri: `urn:slipway:service-kind:${service.kind.toLowerCase()}`,
            total_duration: `PT${durationSeconds(r, now).toFixed(3)}S`,
            deployment_id: r.id,
            message: r.message,
          };
        }),
      };
    },

    /**
     * One deployment with what it carries: the service's settings as deployed and its variables, each with the scope
     * that set it and its alias chain. Plain values are shown; secrets and hidden built-ins only as `sealed: true`.
     */
    async getServiceDeployment(kind: ServiceKind, serviceId: string, deploymentId: string) {
      await requireService(serviceId, kind);
      const record = await findDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      const snapshot = snapshotOf(record);
      const state = stateOf(record, record.id);
      return {
        id: record.id,
        service_id: serviceId,
        action: wireAction(record.action),
        state,
        message: record.message,
        triggered_by: record.triggered_by,
        execution_id: record.job_id,
        created_at: record.created_at,
        updated_at: record.updated_at,
        finished_at: record.finished_at,
        git_commit_id: record.git_commit_id,
        image_tag: record.image_tag,
        settings_hash: record.settings_hash,
        service: snapshot.service,
        variables:
          snapshot.variables === null
            ? null
            : {
                content_hash: snapshot.variables.content_hash,
                results: snapshot.variables.variables.map((variable) => ({
                  key: variable.key,
                  scope: variable.scope,
                  variable_id: variable.variable_id,
                  mount_path: variable.mount_path,
                  alias_chain: variable.alias_chain,
                  sealed: variable.sealed !== undefined,
                  ...(variable.sealed === undefined ? { value: variable.value ?? '' } : {}),
                })),
              },
      };
    },

    /** Of these services, those deployed whose settings or variables changed since their deployment. */
    async outOfDate(serviceIds: readonly string[]): Promise<Set<string>> {
      const found = new Set<string>();
      for (const serviceId of serviceIds) {
        const service = await deps.services.findService(serviceId);
        const runtime = await findRuntime(db, serviceId);
        if (service !== undefined && runtime !== undefined && (await deploymentStatusOf(service, runtime)) === 'OUT_OF_DATE') found.add(serviceId);
      }
      return found;
    },
  };
}
