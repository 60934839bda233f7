import type { Kysely } from 'kysely';
import type { Grant } from '../../auth/permissions.ts';
import type { Placement, Principal } from '../../auth/principal.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import { AGENT_PROTOCOL_VERSION, type AgentClusterEventReport, type AgentClusterEventReportAnswer } from '../../protocol/agent-protocol.ts';
import { AGENT_CHART } from '../clusters/clusters.operators.ts';
import type { EventPublisher, PublishedEvent } from '../webhooks/webhooks.events.ts';
import { currentUserToken, kubeconfigWithTokenFromCli, parseKubeconfig } from './cluster-insight.kubeconfig.ts';
import { endpointKind, matchesLogQuery, parseDuration, parseLogQuery, parseLokiTime } from './cluster-insight.queries.ts';
import {
  findLiveCluster,
  findLiveClusterById,
  findOperatorTarget,
  findSealedKubeconfig,
  hasOperatorEnrollment,
  insertClusterLogs,
  insertOperatorTarget,
  listClusterEnvironments,
  listClusterEvents,
  listClusterLogRows,
  listMemberOrganizationIds,
  listOperatorTargets,
  listSelfManagedClusters,
  listServicesOfEnvironments,
  pruneClusterRows,
  updateOperatorTarget,
  upsertClusterEvent,
  upsertKubeconfig,
  type ClusterFacts,
  type ClusterLogRow,
  type ClusterOperatorTargetRow,
} from './cluster-insight.repo.ts';
import { LINKED_SERVICE_TYPES, type ClusterOperatorFleetStatus } from './cluster-insight.schemas.ts';

/**
 * What Slipway knows of a cluster beyond its settings (docs/cluster-insight.md): the kubeconfig of a self-managed
 * cluster (sealed), the Kubernetes events and log lines its agent reports, its deploys' own log lines, whether it is
 * ready, the environments on it, and its operator — which in Slipway is the cluster's agent: attached when it has
 * an enrollment, connected while it heartbeats, current when it runs the version it should.
 */

/** Rows kept per cluster: the newest events and log lines; older ones are pruned as new ones arrive. */
export const EVENTS_KEPT_PER_CLUSTER = 2000;
export const LOGS_KEPT_PER_CLUSTER = 2000;
/** The most a read answers. */
const EVENTS_READ_MAX = 1000;
const LOGS_READ_MAX = 1000;
const LOKI_DEFAULT_LIMIT = 100;
const LOKI_MAX_LIMIT = 5000;
const LOKI_DEFAULT_RANGE_MS = 60 * 60_000;
/** How long a token handed to kubectl is to be used before it asks again. */
const EXEC_CREDENTIAL_TTL_MS = 10 * 60_000;
/** The cluster states in which its workloads can run. */
const RUNNING_STATES: ReadonlySet<string> = new Set(['DEPLOYED', 'RESTARTED']);

export interface ClusterAgentPresence {
  connected: boolean;
  reachable: boolean;
  last_seen_at: string | null;
  agent_version: string | null;
}

export interface ClusterInsightDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** Where the API is reached (the token exec of a kubeconfig without credentials calls it). */
  publicUrl: string;
  /** The agents module's view of the cluster's agent. */
  agentStatus(clusterId: string): Promise<ClusterAgentPresence>;
  /** The authorizer's rule: what the principal may do where `placement` lives (undefined: not there at all). */
  grantsAt(principal: Principal, placement: Placement): Promise<ReadonlySet<Grant> | undefined>;
}

function sealingContext(clusterId: string): string {
  return `cluster-kubeconfig:${clusterId}`;
}

const FLEET_KINDS: Record<string, 'EKS_SELF_MANAGED' | 'SCW_SELF_MANAGED' | 'GKE_SELF_MANAGED' | 'AKS_SELF_MANAGED'> = {
  AWS: 'EKS_SELF_MANAGED',
  SCW: 'SCW_SELF_MANAGED',
  GCP: 'GKE_SELF_MANAGED',
  AZURE: 'AKS_SELF_MANAGED',
};

/**
 * Where the operator stands against its target. The agent reports its own version (the image it runs); it does not
 * report the chart it was installed with, so the chart is compared only once a version of it is known.
 */
export function fleetStatusOf(input: {
  attached: boolean;
  connected: boolean;
  desiredImage: string | null;
  desiredChart: string | null;
  reportedImage: string | null;
  reportedChart: string | null;
}): ClusterOperatorFleetStatus {
  if (!input.attached) return 'NOT_ATTACHED';
  if (!input.connected) return 'DISCONNECTED';
  if (input.desiredImage === null && input.desiredChart === null) return 'TARGET_UNKNOWN';
  if (input.reportedImage === null) return 'REPORTED_VERSION_UNKNOWN';
  const imageBehind = input.desiredImage !== null && input.reportedImage !== input.desiredImage;
  const chartBehind = input.desiredChart !== null && input.reportedChart !== null && input.reportedChart !== input.desiredChart;
  if (imageBehind && chartBehind) return 'OUTDATED_IMAGE_AND_CHART';
  if (imageBehind) return 'OUTDATED_IMAGE';
  if (chartBehind) return 'OUTDATED_CHART';
  return 'CURRENT';
}

/** The step and type of a cluster log line written for a deploy's move (the cluster action job's published events). */
function transitionLine(event: PublishedEvent): { step: string; type: string; message: string; error: string | null } | undefined {
  const to = String(event.data.status ?? '');
  const reason = typeof event.data.message === 'string' && event.data.message !== '' ? event.data.message : undefined;
  switch (event.type) {
    case 'DEPLOYMENT_STARTED':
      return { step: 'Create', type: 'info', message: `Deploying cluster ${event.resource.name}`, error: null };
    case 'DEPLOYMENT_SUCCESSFUL':
      return { step: 'Created', type: 'info', message: to === 'DRY_RUN' ? 'Dry run done: nothing was changed' : `Cluster ${event.resource.name} is deployed`, error: null };
    case 'DEPLOYMENT_FAILURE':
      return {
        step: 'CreateError',
        type: 'error',
        message: `Deploying cluster ${event.resource.name} failed (${to})`,
        error: writeJson({ tag: to, user_log_message: reason ?? `the deploy ended in ${to}` }),
      };
    case 'DEPLOYMENT_CANCELLED':
      return { step: 'Unknown', type: 'warning', message: `Deploying cluster ${event.resource.name} was canceled`, error: null };
    default:
      return undefined;
  }
}

export function createClusterInsightService(deps: ClusterInsightDeps) {
  const { db, clock, secrets } = deps;

  async function requireCluster(organizationId: string, clusterId: string): Promise<ClusterFacts> {
    const cluster = await findLiveCluster(db, organizationId, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    return cluster;
  }

  /** A cluster addressed without its organization (the authorizer placed it already; a deleted one is gone). */
  async function requireClusterById(clusterId: string): Promise<ClusterFacts> {
    const cluster = await findLiveClusterById(db, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    return cluster;
  }

  function requireSelfManaged(cluster: ClusterFacts, what: string): void {
    if (cluster.kubernetes !== 'SELF_MANAGED') throw badRequest(`only self-managed clusters have ${what}; this cluster is ${cluster.kubernetes}`);
  }

  async function openKubeconfig(cluster: ClusterFacts) {
    requireSelfManaged(cluster, 'a kubeconfig');
    const sealed = await findSealedKubeconfig(db, cluster.id);
    if (sealed === undefined) throw notFound(`no kubeconfig was given for cluster ${cluster.id}: editClusterKubeconfig stores one`);
    return secrets.open(sealed, sealingContext(cluster.id));
  }

  function refuseReadOnly(readOnly: boolean | undefined): void {
    if (readOnly === true) {
      throw badRequest('read-only cluster credentials are not available: Slipway holds only the kubeconfig it was given and cannot narrow it', [
        { field: '/read_only', message: 'must be false' },
      ]);
    }
  }

  async function pruneLogs(executor: Queryable, clusterId: string): Promise<void> {
    await pruneClusterRows(executor, 'cluster_insight_logs', clusterId, LOGS_KEPT_PER_CLUSTER);
  }

  async function operatorView(cluster: ClusterFacts, target: ClusterOperatorTargetRow | undefined) {
    const presence = await deps.agentStatus(cluster.id);
    const attached = target !== undefined || (await hasOperatorEnrollment(db, cluster.id));
    const desiredImage = attached ? (target?.desired_image_version ?? SLIPWAY_VERSION) : null;
    const desiredChart = attached ? (target?.desired_chart_version ?? AGENT_CHART.version) : null;
    const status = fleetStatusOf({
      attached,
      connected: presence.reachable,
      desiredImage,
      desiredChart,
      reportedImage: presence.agent_version,
      reportedChart: null,
    });
    return { attached, presence, desiredImage, desiredChart, status };
  }

  /** The organizations whose fleet the principal sees: those it holds the admin grant in. */
  async function administeredOrganizations(principal: Principal): Promise<string[]> {
    // A policy token holds no grants of its own: its policy decides requests addressed to its organization, and this
    // listing addresses none.
    if (principal.kind === 'policy_token') return [];
    const candidates = principal.kind === 'user' ? await listMemberOrganizationIds(db, principal.userId) : [principal.organizationId];
    const administered: string[] = [];
    for (const organizationId of candidates) {
      if ((await deps.grantsAt(principal, { organizationId }))?.has('admin') === true) administered.push(organizationId);
    }
    return administered;
  }

  return {
    // ------------------------------------------------------------ kubeconfig

    async getClusterKubeconfig(organizationId: string, clusterId: string, options: { withTokenFromCli: boolean; readOnly: boolean | undefined }): Promise<string> {
      refuseReadOnly(options.readOnly);
      const cluster = await requireCluster(organizationId, clusterId);
      const text = await openKubeconfig(cluster);
      if (!options.withTokenFromCli) return text;
      return kubeconfigWithTokenFromCli(parseKubeconfig(text), new URL(`/cluster/${cluster.id}/token`, deps.publicUrl).toString());
    },

    async editClusterKubeconfig(organizationId: string, clusterId: string, text: string): Promise<void> {
      const cluster = await requireCluster(organizationId, clusterId);
      requireSelfManaged(cluster, 'a kubeconfig');
      parseKubeconfig(text);
      await upsertKubeconfig(db, { cluster_id: cluster.id, kubeconfig_sealed: secrets.seal(text, sealingContext(cluster.id)), updated_at: clock.now().toISOString() });
    },

    /** The current context user's token, as the ExecCredential kubectl's exec plugins print. */
    async getClusterToken(clusterId: string, readOnly: boolean | undefined) {
      refuseReadOnly(readOnly);
      const cluster = await requireClusterById(clusterId);
      const token = currentUserToken(parseKubeconfig(await openKubeconfig(cluster)));
      if (token === undefined) {
        throw badRequest("the kubeconfig's current user authenticates without a bearer token (a client certificate or an exec plugin): there is no token to hand out");
      }
      return {
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        kind: 'ExecCredential',
        spec: { interactive: false },
        status: { token, expirationTimestamp: new Date(clock.now().getTime() + EXEC_CREDENTIAL_TTL_MS).toISOString() },
      };
    },

    // ------------------------------------------------------------ what the agent reports

    /** An agent's report of Kubernetes events and its own lines (the route authenticated it for `clusterId`). */
    async recordAgentReport(clusterId: string, report: AgentClusterEventReport): Promise<AgentClusterEventReportAnswer> {
      const events = report.events ?? [];
      const logs = report.logs ?? [];
      const now = clock.now().toISOString();
      await db.transaction().execute(async (trx) => {
        for (const event of events) {
          await upsertClusterEvent(trx, {
            id: newId(),
            cluster_id: clusterId,
            uid: event.uid,
            kind: event.kind,
            namespace: event.namespace,
            name: event.name,
            reason: event.reason,
            message: event.message,
            type: event.type,
            reporting_component: event.reporting_component,
            node_name: event.node_name ?? null,
            pod_name: event.kind === 'Pod' ? event.name : null,
            count: event.count,
            first_occurrence: new Date(event.first_occurrence).toISOString(),
            last_occurrence: new Date(event.last_occurrence).toISOString(),
            created_at: now,
          });
        }
        await insertClusterLogs(
          trx,
          logs.map((line) => ({
            id: newId(),
            cluster_id: clusterId,
            at: new Date(line.at).toISOString(),
            type: line.type,
            step: line.step ?? 'Unknown',
            message: line.message,
            error: line.type === 'error' ? writeJson({ tag: 'AGENT', user_log_message: line.message }) : null,
            source: 'AGENT',
          })),
        );
        if (events.length > 0) await pruneClusterRows(trx, 'cluster_insight_events', clusterId, EVENTS_KEPT_PER_CLUSTER);
        if (logs.length > 0) await pruneLogs(trx, clusterId);
      });
      return { events: events.length, logs: logs.length };
    },

    /**
     * The publisher the cluster action job publishes its deploys' moves through: each also becomes a line of the
     * cluster's logs, in the transaction of the move.
     */
    withClusterLogs(publisher: EventPublisher): EventPublisher {
      return {
        async publish(executor, event) {
          const queued = await publisher.publish(executor, event);
          if (event.resource.type !== 'CLUSTER') return queued;
          const line = transitionLine(event);
          if (line === undefined) return queued;
          await insertClusterLogs(executor, [{ id: newId(), cluster_id: event.resource.id, at: clock.now().toISOString(), ...line, source: 'WORKER' }]);
          await pruneLogs(executor, event.resource.id);
          return queued;
        },
      };
    },

    // ------------------------------------------------------------ reads

    async listClusterEvents(clusterId: string, query: { from_date_time: string; to_date_time: string; node_name?: string | undefined; pod_name?: string | undefined; reporting_component?: string | undefined }) {
      const from = Date.parse(query.from_date_time);
      const to = Date.parse(query.to_date_time);
      const problems = [
        ...(Number.isNaN(from) ? [{ field: '/from_date_time', message: 'must be an ISO-8601 date-time' }] : []),
        ...(Number.isNaN(to) ? [{ field: '/to_date_time', message: 'must be an ISO-8601 date-time' }] : []),
      ];
      if (problems.length > 0) throw badRequest('from_date_time and to_date_time must be ISO-8601 date-times', problems);
      if (from > to) throw badRequest('from_date_time is after to_date_time', [{ field: '/from_date_time', message: 'must not be after to_date_time' }]);
      await requireClusterById(clusterId);
      const rows = await listClusterEvents(db, clusterId, {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        nodeName: query.node_name,
        podName: query.pod_name,
        reportingComponent: query.reporting_component,
        limit: EVENTS_READ_MAX,
      });
      return rows.map((row) => ({
        created_at: row.first_occurrence,
        kind: row.kind,
        namespace: row.namespace,
        name: row.name,
        reason: row.reason,
        message: row.message,
        type: row.type,
        reporting_component: row.reporting_component,
        count: row.count,
        first_occurrence: row.first_occurrence,
        last_occurrence: row.last_occurrence,
      }));
    },

    /** The cluster's newest log lines, oldest first, in the reference's ClusterLogs shape. */
    async listClusterLogs(organizationId: string, clusterId: string) {
      const cluster = await requireCluster(organizationId, clusterId);
      const rows = await listClusterLogRows(db, cluster.id, LOGS_READ_MAX);
      const details = { provider_kind: cluster.cloud_provider, region: cluster.region, transmitter: { type: 'Cluster', id: cluster.id, name: cluster.name } };
      return rows.reverse().map((row) => {
        const error = row.error === null ? undefined : readJson<{ tag: string; user_log_message: string }>(row.error);
        return {
          type: row.type,
          timestamp: row.at,
          step: row.step as 'Unknown',
          message: { safe_message: row.message },
          ...(error === undefined ? {} : { error: { ...error, event_details: details } }),
          details,
        };
      });
    },

    /** A Loki query over the cluster's log lines (cluster-insight.queries.ts), answered in Loki's shape as text. */
    async queryClusterLogs(
      clusterId: string,
      query: { endpoint: string; query: string; start?: string | undefined; end?: string | undefined; limit?: string | undefined; since?: string | undefined; direction?: string | undefined; time?: string | undefined },
    ): Promise<string> {
      const kind = endpointKind(query.endpoint);
      if (kind === undefined) throw badRequest('endpoint must be query_range or query: Slipway answers log queries only', [{ field: '/endpoint', message: 'must be query_range or query' }]);
      const parsed = parseLogQuery(query.query);
      const limit = query.limit === undefined || query.limit === '' ? LOKI_DEFAULT_LIMIT : Number(query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LOKI_MAX_LIMIT) {
        throw badRequest(`limit must be an integer from 1 to ${LOKI_MAX_LIMIT}`, [{ field: '/limit', message: 'out of range' }]);
      }
      const direction = query.direction ?? 'backward';
      if (direction !== 'backward' && direction !== 'forward') throw badRequest('direction must be backward or forward', [{ field: '/direction', message: 'must be backward or forward' }]);
      const end = (kind === 'query' ? parseLokiTime(query.time, 'time') : parseLokiTime(query.end, 'end')) ?? clock.now().getTime();
      const start = parseLokiTime(query.start, 'start') ?? end - (parseDuration(query.since, 'since') ?? LOKI_DEFAULT_RANGE_MS);
      if (start > end) throw badRequest('start is after end', [{ field: '/start', message: 'must not be after end' }]);
      await requireClusterById(clusterId);
      const rows = await listClusterLogRows(db, clusterId, LOGS_KEPT_PER_CLUSTER);
      const streams = new Map<string, { stream: Record<string, string>; values: Array<[string, string]> }>();
      let kept = 0;
      // Newest first; `forward` reverses what the limit kept, as Loki does.
      for (const row of rows) {
        if (kept >= limit) break;
        const at = Date.parse(row.at);
        if (at < start || at > end) continue;
        const labels = { source: row.source.toLowerCase(), type: row.type, step: row.step };
        if (!matchesLogQuery(parsed, labels, row.message)) continue;
        const key = `${labels.source}|${labels.type}|${labels.step}`;
        const stream = streams.get(key) ?? { stream: labels, values: [] as Array<[string, string]> };
        stream.values.push([`${BigInt(at) * 1_000_000n}`, row.message]);
        streams.set(key, stream);
        kept += 1;
      }
      const result = [...streams.values()].map((stream) => ({ ...stream, values: direction === 'forward' ? stream.values.reverse() : stream.values }));
      return JSON.stringify({ status: 'success', data: { resultType: 'streams', result, stats: {} } });
    },

    /**
     * No metrics are collected: Slipway runs no Prometheus and no driver reports metrics, so a query gets
     * Prometheus's empty answer (a vector or a matrix) rather than an error a dashboard would show.
     */
    async queryClusterMetrics(clusterId: string, query: { endpoint: string; query: string }): Promise<string> {
      const kind = endpointKind(query.endpoint);
      if (kind === undefined) throw badRequest('endpoint must be query or query_range', [{ field: '/endpoint', message: 'must be query or query_range' }]);
      await requireClusterById(clusterId);
      return JSON.stringify({ status: 'success', data: { resultType: kind === 'query' ? 'vector' : 'matrix', result: [] } });
    },

    /** The environments on the cluster the principal may read, with their project and services. */
    async listClusterEnvironments(principal: Principal, clusterId: string) {
      await requireClusterById(clusterId);
      const environments = await listClusterEnvironments(db, clusterId);
      const readable: typeof environments = [];
      for (const environment of environments) {
        const placement: Placement = {
          organizationId: environment.organization_id,
          projectId: environment.project_id,
          environmentId: environment.environment_id,
          environmentMode: environment.mode as NonNullable<Placement['environmentMode']>,
          clusterId,
        };
        if ((await deps.grantsAt(principal, placement))?.has('read') === true) readable.push(environment);
      }
      const services = await listServicesOfEnvironments(
        db,
        readable.map((environment) => environment.environment_id),
      );
      const linked: ReadonlySet<string> = new Set(LINKED_SERVICE_TYPES);
      return readable.map((environment) => ({
        environment_id: environment.environment_id,
        environment_name: environment.environment_name,
        project_id: environment.project_id,
        project_name: environment.project_name,
        // The reference's linked service types have no agentic workflows: those are left out here.
        services: services
          .filter((service) => service.environment_id === environment.environment_id && linked.has(service.kind))
          .map((service) => ({ id: service.id, name: service.name, type: service.kind as (typeof LINKED_SERVICE_TYPES)[number] })),
      }));
    },

    /** Ready: deployed (DEPLOYED or RESTARTED) with its agent heartbeating. */
    async getClusterReadiness(organizationId: string, clusterId: string): Promise<{ is_ready: boolean }> {
      const cluster = await requireCluster(organizationId, clusterId);
      if (!RUNNING_STATES.has(cluster.status)) return { is_ready: false };
      return { is_ready: (await deps.agentStatus(cluster.id)).reachable };
    },

    // ------------------------------------------------------------ the operator

    async attachClusterOperator(organizationId: string, clusterId: string): Promise<void> {
      const cluster = await requireCluster(organizationId, clusterId);
      requireSelfManaged(cluster, 'an operator to attach (the agent of the other kinds is Slipway\'s own)');
      const now = clock.now().toISOString();
      await insertOperatorTarget(db, { cluster_id: cluster.id, attached_at: now, desired_image_version: null, desired_chart_version: null, execution_id: null, updated_at: now });
    },

    async getClusterOperatorStatus(organizationId: string, clusterId: string) {
      const cluster = await requireCluster(organizationId, clusterId);
      requireSelfManaged(cluster, 'an operator');
      const view = await operatorView(cluster, await findOperatorTarget(db, cluster.id));
      return {
        organization_id: cluster.organization_id,
        cluster_id: cluster.id,
        operator_connected: view.presence.reachable,
        last_heartbeat: view.presence.last_seen_at,
        operator_version: view.presence.agent_version,
        controller_version: view.presence.agent_version,
        request_schema_version: view.presence.connected ? String(AGENT_PROTOCOL_VERSION) : null,
        desired_image_version: view.desiredImage,
        desired_chart_version: view.desiredChart,
        status: view.status,
        reported_chart_version: null,
        reported_identity: null,
      };
    },

    /**
     * Records the versions the operator should run. Slipway does not reach into a self-managed cluster: the owner
     * upgrades the release (the bootstrap's helm command with the new version), and the status reads OUTDATED until
     * the agent heartbeats with the new version. 409 when no operator is attached.
     */
    async updateClusterOperator(organizationId: string, clusterId: string, request: { chart_version: string; image_version?: string | null | undefined }) {
      const cluster = await requireCluster(organizationId, clusterId);
      requireSelfManaged(cluster, 'an operator');
      const target = await findOperatorTarget(db, cluster.id);
      if (target === undefined && !(await hasOperatorEnrollment(db, cluster.id))) {
        throw conflict(`no operator is attached to cluster ${cluster.id}: attach it (attachClusterOperator) or install it with the operator bootstrap first`);
      }
      const imageVersion = request.image_version ?? SLIPWAY_VERSION;
      const executionId = newId();
      const now = clock.now().toISOString();
      await db.transaction().execute(async (trx) => {
        await insertOperatorTarget(trx, { cluster_id: cluster.id, attached_at: now, desired_image_version: null, desired_chart_version: null, execution_id: null, updated_at: now });
        await updateOperatorTarget(trx, cluster.id, { desired_image_version: imageVersion, desired_chart_version: request.chart_version, execution_id: executionId, updated_at: now });
        const line: ClusterLogRow = {
          id: newId(),
          cluster_id: cluster.id,
          at: now,
          type: 'info',
          step: 'Unknown',
          message: `Operator update requested: chart ${request.chart_version}, image ${imageVersion}`,
          error: null,
          source: 'API',
        };
        await insertClusterLogs(trx, [line]);
        await pruneLogs(trx, cluster.id);
      });
      return { execution_id: executionId, image_version: imageVersion, chart_version: request.chart_version };
    },

    /** The self-managed clusters of every organization the principal administers; 403 when it administers none. */
    async listClusterOperatorFleet(principal: Principal) {
      const organizations = await administeredOrganizations(principal);
      if (organizations.length === 0) throw forbidden('the operator fleet is listed to organization admins: this caller administers no organization');
      const clusters = await listSelfManagedClusters(db, organizations);
      const targets = new Map((await listOperatorTargets(db, clusters.map((cluster) => cluster.id))).map((row) => [row.cluster_id, row]));
      const results = [];
      for (const cluster of clusters) {
        const view = await operatorView(cluster, targets.get(cluster.id));
        results.push({
          organization_id: cluster.organization_id,
          cluster_id: cluster.id,
          cluster_name: cluster.name,
          cluster_kind: FLEET_KINDS[cluster.cloud_provider] ?? ('SELF_MANAGED' as const),
          attached: view.attached,
          connected: view.presence.reachable,
          last_heartbeat: view.presence.last_seen_at,
          desired_image_version: view.desiredImage,
          reported_image_version: view.presence.agent_version,
          desired_chart_version: view.desiredChart,
          reported_chart_version: null,
          status: view.status,
        });
      }
      return results;
    },
  };
}

export type ClusterInsightService = ReturnType<typeof createClusterInsightService>;
