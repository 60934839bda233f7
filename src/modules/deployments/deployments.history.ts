import { actionStatusOf, wireAction, type DeploymentState } from '../../engine/deployment-states.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { RequestOrigin } from '../../lib/request-origin.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { EnvironmentRecords } from './deployments.environment-records.ts';
import {
  countEnvironmentDeploymentsNewerThan,
  countServiceDeploymentsNewerThan,
  findEnvironmentDeployment,
  findServiceDeployment,
  findRuntime,
  listEnvironmentDeploymentsPage,
  listServiceDeploymentsPage,
  listServiceDeploymentsOfEnvironmentDeployment,
  listOpenDeploymentIdsOfEnvironment,
  type EnvironmentDeploymentRow,
  type ServiceDeploymentRow,
} from './deployments.repo.ts';
import { MAX_HISTORY_PAGE_SIZE } from './deployments.schemas.ts';
import { recordStateOf, serviceStateOf, snapshotOf, type ServiceRecords } from './deployments.service-records.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { durationSeconds, stateOf, type DeploymentSubject } from './deployments.states.ts';

/**
 * What deployments show: an environment's or a service's status, its history page by page (the reference's two
 * listings, the older `deploymentHistory` and `deploymentHistoryV2`, over the same records and the same keyset
 * cursor), and a service's deployment with what it carried.
 */

const DEFAULT_PAGE_SIZE = 20;

/** One service deployment as the reference's DeploymentHistoryService shows it (a service's history, a stage's entry). */
function serviceHistoryEntry(r: ServiceDeploymentRow, now: Date) {
  const status = recordStateOf(r);
  const snapshot = snapshotOf(r);
  return {
    identifier: { name: snapshot.service.name, service_id: r.service_id, service_type: snapshot.service.kind, execution_id: r.job_id },
    status,
    auditing_data: { created_at: r.created_at, updated_at: r.updated_at, triggered_by: r.triggered_by, origin: r.origin as RequestOrigin },
    details: {
      ...(r.git_commit_id === null ? {} : { commit: { git_commit_id: r.git_commit_id } }),
      ...(r.image_tag === null ? {} : { tag: r.image_tag }),
    },
    status_details: { action: wireAction(r.action), status: actionStatusOf(status), sub_action: 'NONE' as const },
    icon_uri: `urn:slipway:service-kind:${snapshot.service.kind.toLowerCase()}`,
    total_duration: `PT${durationSeconds(r, now).toFixed(3)}S`,
    deployment_id: r.id,
    message: r.message,
  };
}

type StageHistoryStatus = 'QUEUED' | 'ONGOING' | 'DONE' | 'ERROR' | 'SKIPPED' | 'CANCELED';

/** A stage's status in an environment's history: under way while any of its deployments is, else the worst outcome. */
function stageHistoryStatus(records: ServiceDeploymentRow[]): StageHistoryStatus {
  const outcomes = new Set(records.map((record) => actionStatusOf(recordStateOf(record))));
  if (outcomes.has('ONGOING') || outcomes.has('CANCELING')) return 'ONGOING';
  if (outcomes.has('QUEUED')) return 'QUEUED';
  if (outcomes.has('ERROR')) return 'ERROR';
  if (outcomes.has('CANCELED')) return 'CANCELED';
  return 'DONE';
}

/**
 * The stages of an environment action (docs/deployment-stages.md): the service deployments its fan-out requested,
 * grouped by the stage each service was in then, in the stages' order; a stage's duration runs from its first
 * request to its last end (now while one is open).
 */
function historyStages(records: ServiceDeploymentRow[], now: Date) {
  const stages = new Map<string, ServiceDeploymentRow[]>();
  for (const record of records) {
    const key = `${record.deployment_stage_order ?? ''}:${record.deployment_stage_name ?? ''}`;
    stages.set(key, [...(stages.get(key) ?? []), record]);
  }
  return [...stages.values()].map((group) => {
    const start = Math.min(...group.map((record) => Date.parse(record.created_at)));
    const end = Math.max(...group.map((record) => (record.finished_at === null ? now.getTime() : Date.parse(record.finished_at))));
    return {
      name: group[0]?.deployment_stage_name ?? '',
      status: stageHistoryStatus(group),
      duration: `PT${(Math.max(0, end - start) / 1000).toFixed(3)}S`,
      services: group.map((record) => serviceHistoryEntry(record, now)),
    };
  });
}

/** One subject's deployment records, as a history page reads them. */
interface HistorySource<Row extends { id: string }, Subject> {
  subject: DeploymentSubject;
  /** The subject; 404 unless it exists. */
  require(): Promise<Subject>;
  /** The record named, when it is one of this subject's. */
  ownRecord(id: string): Promise<Row | undefined>;
  /** Newest first, older than `beforeId` (all when undefined), at most `limit`. */
  page(limit: number, beforeId: string | undefined): Promise<Row[]>;
  countNewerThan(id: string): Promise<number>;
}

/**
 * A page of history, newest first: `pageSize` records (default 20) older than `cursor`, each as `view` shows it,
 * with the page's number and the cursor of the next page.
 */
async function historyPage<Row extends { id: string }, Subject, View>(
  source: HistorySource<Row, Subject>,
  query: { pageSize?: number | undefined; cursor?: string | undefined },
  cursorField: string,
  view: (row: Row, subject: Subject) => View | Promise<View>,
) {
  const { pageSize, cursor } = query;
  const size = pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_HISTORY_PAGE_SIZE) {
    throw badRequest('invalid pageSize', [{ field: '/pageSize', message: `must be an integer from 1 to ${MAX_HISTORY_PAGE_SIZE}` }]);
  }
  const subject = await source.require();
  if (cursor !== undefined && (await source.ownRecord(cursor)) === undefined) {
    throw badRequest('invalid cursor', [{ field: cursorField, message: `names no deployment of this ${source.subject}` }]);
  }
  const rows = await source.page(size + 1, cursor);
  const page = rows.slice(0, size);
  const before = cursor === undefined ? 0 : (await source.countNewerThan(cursor)) + 1;
  return {
    page: Math.floor(before / size) + 1,
    page_size: size,
    next_cursor: rows.length > size ? (page[page.length - 1]?.id ?? null) : null,
    results: await Promise.all(page.map((row) => view(row, subject))),
  };
}

export function createDeploymentHistory(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'services' | 'environments'>, services: ServiceRecords, environments: EnvironmentRecords) {
  const { db, clock } = deps;
  const { requireService, runtimeOf, deploymentStatusOf, statusView } = services;

  const serviceHistory = (kind: ServiceKind, serviceId: string): HistorySource<ServiceDeploymentRow, StoredService> => ({
    subject: 'service',
    require: () => requireService(serviceId, kind),
    ownRecord: async (id) => {
      const record = await findServiceDeployment(db, id);
      return record?.service_id === serviceId ? record : undefined;
    },
    page: (limit, beforeId) => listServiceDeploymentsPage(db, serviceId, limit, beforeId),
    countNewerThan: (id) => countServiceDeploymentsNewerThan(db, serviceId, id),
  });

  const environmentHistory = (environmentId: string): HistorySource<EnvironmentDeploymentRow, unknown> => ({
    subject: 'environment',
    require: () => environments.requireEnvironment(db, environmentId),
    ownRecord: async (id) => {
      const record = await findEnvironmentDeployment(db, id);
      return record?.environment_id === environmentId ? record : undefined;
    },
    page: (limit, beforeId) => listEnvironmentDeploymentsPage(db, environmentId, limit, beforeId),
    countNewerThan: (id) => countEnvironmentDeploymentsNewerThan(db, environmentId, id),
  });

  return {
    async getServiceStatus(kind: ServiceKind, serviceId: string) {
      const service = await requireService(serviceId, kind);
      return statusView(service, await runtimeOf(db, serviceId));
    },

    /** Whether an action's deployment record still waits to be carried out (exists, this subject's, not ended). */
    async isDeploymentOpen(subject: DeploymentSubject, subjectId: string, deploymentId: string): Promise<boolean> {
      const record = subject === 'service' ? await findServiceDeployment(db, deploymentId) : await findEnvironmentDeployment(db, deploymentId);
      const owner = record === undefined ? undefined : 'service_id' in record ? record.service_id : record.environment_id;
      return record !== undefined && owner === subjectId && record.finished_at === null;
    },

    /** A service's state for the agents module; undefined once the service is gone. */
    async findServiceState(serviceId: string): Promise<DeploymentState | undefined> {
      if ((await deps.services.findService(serviceId)) === undefined) return undefined;
      return serviceStateOf(await runtimeOf(db, serviceId));
    },

    async getEnvironmentStatus(environmentId: string) {
      return environments.statusView(await environments.requireEnvironment(db, environmentId));
    },

    /** The environment's state, undefined once it is gone (what the cluster's agent asks before going on). */
    async findEnvironmentState(environmentId: string): Promise<DeploymentState | undefined> {
      const row = await deps.environments.deploymentStateOf(db, environmentId);
      return row === undefined ? undefined : stateOf('environment', row.id, row.status);
    },

    /** The environment's service deployments still queued or under way (an environment's action waits on them). */
    openDeploymentIdsOfEnvironment(environmentId: string, options: { startsBefore?: { at: string; serviceIds: readonly string[] } } = {}): Promise<string[]> {
      return listOpenDeploymentIdsOfEnvironment(db, environmentId, options);
    },

    async listServiceDeploymentHistory(kind: ServiceKind, serviceId: string, query: { startId?: string | undefined; pageSize?: number | undefined }) {
      return historyPage(serviceHistory(kind, serviceId), { pageSize: query.pageSize, cursor: query.startId }, '/startId', (r, service) => {
        const state = recordStateOf(r);
        const outcome = actionStatusOf(state);
        return {
          id: r.id,
          created_at: r.created_at,
          updated_at: r.updated_at,
          name: service.name,
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
      });
    },

    async listServiceDeploymentHistoryV2(kind: ServiceKind, serviceId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      const now = clock.now();
      return historyPage(serviceHistory(kind, serviceId), query, '/cursor', (r) => serviceHistoryEntry(r, now));
    },

    /**
     * One deployment with what it carries: the service's settings as deployed and its variables, each with the scope
     * that set it and its alias chain. Plain values are shown; secrets and hidden built-ins only as `sealed: true`.
     */
    async getServiceDeployment(kind: ServiceKind, serviceId: string, deploymentId: string) {
      await requireService(serviceId, kind);
      const record = await findServiceDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      const snapshot = snapshotOf(record);
      const state = recordStateOf(record);
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

    async listEnvironmentDeploymentHistory(environmentId: string, query: { startId?: string | undefined; pageSize?: number | undefined }) {
      return historyPage(environmentHistory(environmentId), { pageSize: query.pageSize, cursor: query.startId }, '/startId', (r) => ({
        id: r.id,
        created_at: r.created_at,
        updated_at: r.updated_at,
        status: stateOf('environment', r.id, r.status),
        origin: r.origin as RequestOrigin,
        triggered_by: r.triggered_by,
        applications: [],
        containers: [],
        databases: [],
        jobs: [],
        helms: [],
      }));
    },

    async listEnvironmentDeploymentHistoryV2(environmentId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      const now = clock.now();
      return historyPage(environmentHistory(environmentId), query, '/cursor', async (r) => {
        const status = stateOf('environment', r.id, r.status);
        return {
          identifier: { execution_id: r.job_id, environment_id: r.environment_id },
          auditing_data: { created_at: r.created_at, updated_at: r.updated_at, triggered_by: r.triggered_by, origin: r.origin as RequestOrigin },
          status,
          trigger_action: wireAction(r.action),
          total_duration: `PT${durationSeconds(r, now).toFixed(3)}S`,
          stages: historyStages(await listServiceDeploymentsOfEnvironmentDeployment(db, r.id), now),
          action_status: actionStatusOf(status),
          message: r.message,
        };
      });
    },
  };
}
