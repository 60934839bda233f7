import type { Placement } from '../../auth/principal.ts';
import type { Kysely, Transaction } from 'kysely';
import { principalDisplayName, type Access, type Principal } from '../../auth/principal.ts';
import { hashToken, mintToken, recogniseToken } from '../../auth/tokens.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJob, cancelQueuedJob } from '../../jobs/job-queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, paymentRequired, unauthenticated } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import { NO_EVENTS, publishClusterTransition, type EventPublisher } from '../webhooks/webhooks.events.ts';
import {
  consumeEnrollment,
  isEnrollmentUsable,
  deleteLock,
  expireEnrollments,
  findCluster,
  findClusterById,
  findLock,
  listClusterIdsOfKind,
  findOperatorByCredential,
  insertCluster,
  insertEnrollment,
  listClusters,
  listLocks,
  recordOperatorReport,
  replaceLock,
  replaceOperator,
  updateCluster,
  updateClusterInStatus,
  type ClusterLockRow,
  type ClusterRow,
} from './clusters.repo.ts';
import { createLocalClusterGrants } from './clusters.local-grants.ts';
import type { ClusterRequestBody } from './clusters.schemas.ts';
import { isClusterState, requestedState, transitionOf, type ClusterAction, type ClusterState } from './clusters.states.ts';

/** What other modules may know of a cluster (billing prices it, platform configuration scopes to it). */
export interface ClusterSummary {
  id: string;
  organizationId: string;
  name: string;
  cloudProvider: string;
  kubernetes: string;
  region: string;
  instanceType: string | null;
  minRunningNodes: number;
  maxRunningNodes: number;
  status: string;
}

/** Kubernetes versions Slipway deploys, oldest first; upgrades go one minor version at a time. */
export const SUPPORTED_KUBERNETES_VERSIONS = ['1.29', '1.30', '1.31', '1.32'] as const;
/** New clusters start one version behind the newest, so an upgrade path exists from day one. */
const DEFAULT_KUBERNETES_VERSION = '1.31';

const ENROLLMENT_TTL_MS = 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export const CLUSTER_ACTION_JOB = 'cluster.action';

/** Actions that start or keep infrastructure running; stopping, deleting and cancelling stay possible while billing is invalid. */
const COSTS_MONEY: ReadonlySet<ClusterAction> = new Set(['deploy', 'upgrade', 'restart']);

export interface ClusterActionPayload {
  clusterId: string;
  action: Exclude<ClusterAction, 'cancel'>;
  requestedAt: string;
  dryRun: boolean;
  targetVersion: string;
  deleteMode: string;
  skipReconcile: boolean;
}

export interface ClustersDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** Called after a transaction that enqueued cluster work commits, so a worker picks it up at once. */
  wakeWorkers: () => void;
  /** Removes a cluster's stored platform configuration (deleteMode DELETE_PLATFORM_CONFIG). */
  deletePlatformConfiguration: (trx: Transaction<DB>, clusterId: string) => Promise<void>;
  /** Where operators reach this control plane, and the chart that installs them. */
  publicUrl: string;
  /**
   * Whether the organization's billing lets it deploy (billing's deploymentsAllowed); refused deploys answer 402.
   * admitDeployment asks it for every deployment, the environments' and services' included.
   */
  deploymentGate: (organizationId: string) => Promise<{ allowed: boolean; reason: string }>;
  /** Checks that labels group ids name groups of the organization (400 naming the unknown ones). */
  labelsGroups: { resolveLabelsGroups(organizationId: string, ids: readonly string[], pointer?: string): Promise<unknown> };
  /** Deployment events: a deploy cancelled while still queued is published here, in the cancel's transaction. */
  events?: EventPublisher;
}

export function nextKubernetesVersion(version: string): string | null {
  const index = SUPPORTED_KUBERNETES_VERSIONS.indexOf(version as (typeof SUPPORTED_KUBERNETES_VERSIONS)[number]);
  if (index === -1) return null;
  return SUPPORTED_KUBERNETES_VERSIONS[index + 1] ?? null;
}

export function summaryOf(row: ClusterRow): ClusterSummary {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    cloudProvider: row.cloud_provider,
    kubernetes: row.kubernetes,
    region: row.region,
    instanceType: row.instance_type,
    minRunningNodes: row.min_running_nodes,
    maxRunningNodes: row.max_running_nodes,
    status: row.status,
  };
}

interface StoredSettings {
  ssh_keys?: string[];
  features?: Record<string, unknown>[];
  metrics_parameters?: Record<string, unknown>;
  infrastructure_charts_parameters?: Record<string, unknown>;
  keda?: Record<string, unknown>;
  labels_groups?: { id: string }[];
  secret_manager_accesses?: Record<string, unknown>[];
  disk_iops?: number;
  disk_throughput?: number;
  cloud_provider_credentials?: Record<string, unknown>;
}

function deploymentStatus(row: ClusterRow): 'NEVER_DEPLOYED' | 'OUT_OF_DATE' | 'UP_TO_DATE' {
  if (row.deployed_revision === null) return 'NEVER_DEPLOYED';
  return row.deployed_revision === row.config_revision ? 'UP_TO_DATE' : 'OUT_OF_DATE';
}

function clusterView(row: ClusterRow) {
  const settings = readJson<StoredSettings>(row.settings);
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    organization: { id: row.organization_id },
    name: row.name,
    description: row.description,
    region: row.region,
    cloud_provider: row.cloud_provider,
    min_running_nodes: row.min_running_nodes,
    max_running_nodes: row.max_running_nodes,
    disk_size: row.disk_size,
    ...(settings.disk_iops === undefined ? {} : { disk_iops: settings.disk_iops }),
    ...(settings.disk_throughput === undefined ? {} : { disk_throughput: settings.disk_throughput }),
    instance_type: row.instance_type,
    kubernetes: row.kubernetes,
    status: stateOf(row),
    has_access: true,
    version: row.version,
    is_default: false,
    is_demo: false,
    production: row.production === 1,
    ssh_keys: settings.ssh_keys ?? [],
    features: settings.features ?? [],
    deployment_status: deploymentStatus(row),
    ...(settings.metrics_parameters === undefined ? {} : { metrics_parameters: settings.metrics_parameters }),
    ...(settings.infrastructure_charts_parameters === undefined ? {} : { infrastructure_charts_parameters: settings.infrastructure_charts_parameters }),
    ...(settings.keda === undefined ? {} : { keda: settings.keda }),
    labels_groups: settings.labels_groups ?? [],
    secret_manager_accesses: settings.secret_manager_accesses ?? [],
  };
}
export type ClusterView = ReturnType<typeof clusterView>;

function stateOf(row: ClusterRow): ClusterState {
  if (!isClusterState(row.status)) throw new Error(`cluster ${row.id} holds an unknown status ${row.status}`);
  return row.status;
}

function lockIsLive(lock: ClusterLockRow, now: Date): boolean {
  return lock.ttl_in_days === null || new Date(lock.locked_at).getTime() + lock.ttl_in_days * DAY_MS > now.getTime();
}

function lockView(lock: ClusterLockRow) {
  return {
    reason: lock.reason,
    cluster_id: lock.cluster_id,
    locked_at: lock.locked_at,
    owner_name: lock.owner_name,
    ttl_in_days: lock.ttl_in_days,
  };
}

const SETTINGS_FIELDS = [
  'ssh_keys',
  'features',
  'metrics_parameters',
  'infrastructure_charts_parameters',
  'keda',
  'labels_groups',
  'secret_manager_accesses',
  'disk_iops',
  'disk_throughput',
  'cloud_provider_credentials',
] as const satisfies ReadonlyArray<keyof StoredSettings & keyof ClusterRequestBody>;

/** The request's fields that have no column of their own, kept as given. */
function settingsOf(body: ClusterRequestBody): StoredSettings {
  const settings: Record<string, unknown> = {};
  for (const field of SETTINGS_FIELDS) if (body[field] !== undefined) settings[field] = body[field];
  return settings as StoredSettings;
}

function nodeRange(body: { min_running_nodes?: number | undefined; max_running_nodes?: number | undefined }): { min: number; max: number } {
  const min = body.min_running_nodes ?? 1;
  const max = body.max_running_nodes ?? Math.max(1, min);
  if (min > max) {
    throw badRequest('invalid cluster size', [{ field: '/min_running_nodes', message: `must not exceed max_running_nodes (${max})` }]);
  }
  return { min, max };
}

function nameTaken(name: string): string {
  return `a cluster named "${name}" already exists in this organization`;
}

function lockedMessage(lock: ClusterLockRow): string {
  const until = lock.ttl_in_days === null ? 'until unlocked' : `until ${new Date(new Date(lock.locked_at).getTime() + lock.ttl_in_days * DAY_MS).toISOString()}`;
  return `cluster is locked by ${lock.owner_name} since ${lock.locked_at} (${until}): ${lock.reason}`;
}

export function createClustersService(deps: ClustersDeps) {
  const { db, clock } = deps;
  const localGrants = createLocalClusterGrants({ db, clock });

  /**
   * The one check every deployment passes before it starts workloads on a cluster: the cluster's own deploy, upgrade
   * and restart, and the environment and service actions that start workloads (their modules ask admitDeployment).
   * On a LOCAL cluster the organization needs the installation operator's grant (403); then its billing must be valid
   * (402). Stopping, deleting and cancelling never ask: they end workloads.
   */
  async function admit(organizationId: string, cluster: Pick<ClusterRow, 'kubernetes' | 'name'> | undefined): Promise<void> {
    if (cluster?.kubernetes === 'LOCAL') await localGrants.refuseUnlessAllowed(organizationId, `deploying onto the LOCAL cluster "${cluster.name}"`);
    const gate = await deps.deploymentGate(organizationId);
    if (!gate.allowed) throw paymentRequired(`deployments are suspended while the organization's billing is not valid: ${gate.reason}`);
  }

  async function requireCluster(executor: Kysely<DB> | Transaction<DB>, organizationId: string, clusterId: string): Promise<ClusterRow> {
    const row = await findCluster(executor, organizationId, clusterId);
    if (row === undefined || row.status === 'DELETED') throw notFound(`cluster ${clusterId} not found`);
    return row;
  }

  async function liveLock(executor: Kysely<DB> | Transaction<DB>, clusterId: string): Promise<ClusterLockRow | undefined> {
    const lock = await findLock(executor, clusterId);
    return lock !== undefined && lockIsLive(lock, clock.now()) ? lock : undefined;
  }

  async function refuseIfLocked(executor: Kysely<DB> | Transaction<DB>, clusterId: string): Promise<void> {
    const lock = await liveLock(executor, clusterId);
    if (lock !== undefined) throw conflict(lockedMessage(lock));
  }

  async function statusView(row: ClusterRow) {
    const lock = await liveLock(db, row.id);
    return {
      cluster_id: row.id,
      status: stateOf(row),
      is_deployed: row.is_deployed === 1,
      next_k8s_available_version: nextKubernetesVersion(row.version),
      last_execution_id: row.last_execution_id,
      cluster_lock: lock === undefined ? null : lockView(lock),
      last_deployment_date: row.last_deployment_date,
      reason: 'UNSPECIFIED' as const,
      message: row.status_message,
    };
  }

  /**
   * Moves a cluster into an action's queued state and enqueues the job that carries it out, in one transaction;
   * the job id is the action's execution id.
   */
  async function requestAction(
    organizationId: string | undefined,
    clusterId: string,
    action: Exclude<ClusterAction, 'cancel'>,
    options: { dryRun?: boolean; deleteMode?: string; skipReconcile?: boolean } = {},
  ): Promise<ClusterRow> {
    // Asked before the transaction: billing reads its own tables, and SQLite has one connection, held by a transaction.
    // A cluster that is not there is left to the transaction's 404.
    if (COSTS_MONEY.has(action)) {
      const cluster = organizationId === undefined ? await findClusterById(db, clusterId) : await findCluster(db, organizationId, clusterId);
      if (cluster !== undefined && cluster.status !== 'DELETED') await admit(cluster.organization_id, cluster);
    }
    const row = await db.transaction().execute(async (trx) => {
      const current = organizationId === undefined ? await findClusterById(trx, clusterId) : await findCluster(trx, organizationId, clusterId);
      if (current === undefined || current.status === 'DELETED') throw notFound(`cluster ${clusterId} not found`);
      await refuseIfLocked(trx, clusterId);
      const from = stateOf(current);
      const to = requestedState(from, action, current.is_deployed === 1);
      let targetVersion = current.version;
      if (action === 'upgrade') {
        const next = nextKubernetesVersion(current.version);
        if (next === null) throw conflict(`cluster already runs Kubernetes ${current.version}, the newest version Slipway supports`);
        targetVersion = next;
      }
      const now = clock.now().toISOString();
      const payload: ClusterActionPayload = {
        clusterId,
        action,
        requestedAt: now,
        dryRun: options.dryRun ?? false,
        targetVersion,
        deleteMode: options.deleteMode ?? 'DEFAULT',
        skipReconcile: options.skipReconcile ?? false,
      };
      const jobId = await enqueueJob(trx, clock, { kind: CLUSTER_ACTION_JOB, payload: { ...payload }, serialKey: `cluster:${clusterId}` });
      const moved = await updateClusterInStatus(trx, clusterId, from, {
        status: to,
        status_message: null,
        last_execution_id: jobId,
        updated_at: now,
      });
      if (!moved) throw conflict(`cannot ${action} cluster: its state changed meanwhile; read it again`);
      return { ...current, status: to, status_message: null, last_execution_id: jobId, updated_at: now };
    });
    deps.wakeWorkers();
    return row;
  }

  /** The cluster an operator (or agent) credential acts for; 401 for anything else, deleted clusters included. */
  async function authenticateOperator(credential: string): Promise<{ clusterId: string; organizationId: string }> {
    if (recogniseToken(credential) !== 'operator') throw unauthenticated('invalid operator credential');
    const operator = await findOperatorByCredential(db, hashToken(credential));
    const cluster = operator === undefined ? undefined : await findClusterById(db, operator.cluster_id);
    if (cluster === undefined || cluster.status === 'DELETED') throw unauthenticated('invalid operator credential');
    return { clusterId: cluster.id, organizationId: cluster.organization_id };
  }

  return {
    async listOrganizationCluster(organizationId: string): Promise<ClusterView[]> {
      return (await listClusters(db, organizationId)).filter((r) => r.status !== 'DELETED').map(clusterView);
    },

    async getOrganizationClusterStatus(organizationId: string) {
      const rows = (await listClusters(db, organizationId)).filter((r) => r.status !== 'DELETED');
      return rows.map((r) => ({ cluster_id: r.id, status: stateOf(r) }));
    },

    async getCluster(organizationId: string, clusterId: string): Promise<ClusterView> {
      return clusterView(await requireCluster(db, organizationId, clusterId));
    },

    async findClusterSummary(organizationId: string, clusterId: string): Promise<ClusterSummary | undefined> {
      const row = await findCluster(db, organizationId, clusterId);
      return row === undefined || row.status === 'DELETED' ? undefined : summaryOf(row);
    },

    /**
     * For the environments and services modules, before an action that starts workloads on the cluster: throws the
     * 403 of a LOCAL cluster the organization holds no grant for, or the 402 of invalid billing. A cluster gone
     * meanwhile leaves only the billing check (the caller refuses what has no cluster).
     */
    async admitDeployment(organizationId: string, clusterId: string): Promise<void> {
      const cluster = await findClusterById(db, clusterId);
      await admit(organizationId, cluster === undefined || cluster.status === 'DELETED' ? undefined : cluster);
    },

    /** Whether the cluster is a LOCAL one: its workloads run on this host, by the in-process agent's local driver. */
    async isLocalCluster(clusterId: string): Promise<boolean> {
      const row = await findClusterById(db, clusterId);
      return row !== undefined && row.status !== 'DELETED' && row.kubernetes === 'LOCAL';
    },

    /** Every LOCAL cluster of the installation, for the in-process agent. */
    listLocalClusterIds(): Promise<string[]> {
      return listClusterIdsOfKind(db, 'LOCAL');
    },

    /** Where a cluster addressed without its organization in the path (`/cluster/{clusterId}/…`) lives. */
    async placementOf(clusterId: string): Promise<Placement | undefined> {
      const row = await findClusterById(db, clusterId);
      return row === undefined || row.status === 'DELETED' ? undefined : { organizationId: row.organization_id };
    },

    /** The clusters a labels group is attached to (the labels groups module refuses to delete such a group). */
    async clustersUsingLabelsGroup(organizationId: string, groupId: string) {
      const rows = await listClusters(db, organizationId);
      return rows
        .filter((row) => row.status !== 'DELETED' && (readJson<StoredSettings>(row.settings).labels_groups ?? []).some((group) => group.id === groupId))
        .map((row) => ({ item_id: row.id, item_name: row.name, item_type: 'CLUSTER' }));
    },

    async createCluster(access: Access, body: ClusterRequestBody): Promise<ClusterView> {
      const kubernetes = body.kubernetes ?? 'MANAGED';
      if (kubernetes === 'SELF_MANAGED') {
        throw badRequest('self-managed clusters are created with createSelfManagedCluster (POST /v1/organization/{organizationId}/selfManagedCluster)', [
          { field: '/kubernetes', message: 'SELF_MANAGED is not created here' },
        ]);
      }
      if (kubernetes === 'LOCAL' && body.cloud_provider !== 'ON_PREMISE') {
        throw badRequest('a LOCAL cluster runs on this host', [{ field: '/cloud_provider', message: 'must be ON_PREMISE for a LOCAL cluster' }]);
      }
      if (kubernetes === 'LOCAL') await localGrants.refuseUnlessAllowed(access.organizationId, 'creating a LOCAL cluster');
      const { min, max } = nodeRange(body);
      if (body.labels_groups !== undefined) await deps.labelsGroups.resolveLabelsGroups(access.organizationId, body.labels_groups.map((g) => g.id));
      const now = clock.now().toISOString();
      const id = newId();
      const name = cleanName(body.name);
      await uniqueOrConflict(
        () =>
          insertCluster(db, {
            id,
            organization_id: access.organizationId,
            name,
            name_key: nameKey(name),
            description: body.description ?? null,
            region: body.region,
            cloud_provider: body.cloud_provider,
            kubernetes,
            instance_type: body.instance_type ?? null,
            min_running_nodes: min,
            max_running_nodes: max,
            disk_size: body.disk_size ?? 40,
            production: body.production === true ? 1 : 0,
            credentials_id: body.cloud_provider_credentials?.credentials?.id ?? null,
            dns_provider: null,
            build_provider: null,
            settings: writeJson(settingsOf(body)),
            version: DEFAULT_KUBERNETES_VERSION,
            status: 'READY',
            status_message: null,
            deployed_revision: null,
            last_execution_id: null,
            last_deployment_date: null,
            created_at: now,
            updated_at: now,
          }),
        nameTaken(name),
      );
      return this.getCluster(access.organizationId, id);
    },

    /**
     * Edits a cluster. Where it runs (cloud, region, kind) is fixed at creation; any other change makes a deployed
     * cluster OUT_OF_DATE until its next deploy. A locked cluster refuses changes.
     */
    async editCluster(organizationId: string, clusterId: string, body: ClusterRequestBody): Promise<ClusterView> {
      const current = await requireCluster(db, organizationId, clusterId);
      await refuseIfLocked(db, clusterId);
      const fixed: Array<[string, string, string]> = [
        ['cloud_provider', current.cloud_provider, body.cloud_provider],
        ['region', current.region, body.region],
        ['kubernetes', current.kubernetes, body.kubernetes ?? current.kubernetes],
      ];
      const changedFixed = fixed.filter(([, was, now]) => was !== now);
      if (changedFixed.length > 0) {
        throw badRequest(
          'a cluster cannot move to another cloud, region or kind; create a new cluster instead',
          changedFixed.map(([field, was]) => ({ field: `/${field}`, message: `cannot change from ${was}` })),
        );
      }
      const { min, max } = nodeRange(body);
      if (body.labels_groups !== undefined) await deps.labelsGroups.resolveLabelsGroups(organizationId, body.labels_groups.map((g) => g.id));
      const name = cleanName(body.name);
      await uniqueOrConflict(
        () =>
          updateCluster(db, clusterId, {
            name,
            name_key: nameKey(name),
            description: body.description ?? null,
            instance_type: body.instance_type ?? null,
            min_running_nodes: min,
            max_running_nodes: max,
            disk_size: body.disk_size ?? current.disk_size,
            production: body.production === true ? 1 : 0,
            credentials_id: body.cloud_provider_credentials?.credentials?.id ?? current.credentials_id,
            settings: writeJson(settingsOf(body)),
            config_revision: current.config_revision + 1,
            updated_at: clock.now().toISOString(),
          }),
        nameTaken(name),
      );
      return this.getCluster(organizationId, clusterId);
    },

    /**
     * deleteMode DEFAULT and DELETE_CLUSTER_AND_PLATFORM_CONFIG tear the cluster down through the delete action;
     * DELETE_PLATFORM_CONFIG removes only the stored platform configuration, at once. skipReconcile skips the
     * pre-destroy apply, so it cannot go with a mode that keeps the cluster (SPEC.md deletion rule 2).
     */
    async deleteCluster(organizationId: string, clusterId: string, mode: string, skipReconcile: boolean): Promise<void> {
      if (skipReconcile && mode === 'DELETE_PLATFORM_CONFIG') {
        throw badRequest('skipReconcile=true cannot be combined with deleteMode=DELETE_PLATFORM_CONFIG', [
          { field: '/skipReconcile', message: 'not allowed with deleteMode DELETE_PLATFORM_CONFIG' },
        ]);
      }
      if (mode === 'DELETE_PLATFORM_CONFIG') {
        await requireCluster(db, organizationId, clusterId);
        await refuseIfLocked(db, clusterId);
        await db.transaction().execute(async (trx) => {
          await deps.deletePlatformConfiguration(trx, clusterId);
          const current = await requireCluster(trx, organizationId, clusterId);
          await updateCluster(trx, clusterId, { config_revision: current.config_revision + 1, updated_at: clock.now().toISOString() });
        });
        return;
      }
      await requestAction(organizationId, clusterId, 'delete', { deleteMode: mode, skipReconcile });
    },

    async deployCluster(organizationId: string, clusterId: string, dryRun: boolean) {
      return statusView(await requestAction(organizationId, clusterId, 'deploy', { dryRun }));
    },

    async stopCluster(organizationId: string, clusterId: string) {
      return statusView(await requestAction(organizationId, clusterId, 'stop'));
    },

    async restartCluster(organizationId: string, clusterId: string) {
      return statusView(await requestAction(organizationId, clusterId, 'restart'));
    },

    /** SPEC.md's upgrade: 200 with the cluster upgrade status; a locked cluster answers 409 naming the lock. */
    async upgradeCluster(clusterId: string) {
      return statusView(await requestAction(undefined, clusterId, 'upgrade'));
    },

    /**
     * Cancels the action under way: a queued one at once (its job is withdrawn), a deploy in progress when the
     * worker reaches its next step.
     */
    async cancelClusterAction(organizationId: string, clusterId: string) {
      const row = await db.transaction().execute(async (trx) => {
        const current = await requireCluster(trx, organizationId, clusterId);
        const from = stateOf(current);
        const to = transitionOf(from, 'cancel');
        if (to === undefined) throw conflict(`cannot cancel: cluster is ${from}, with no cancellable action under way`);
        if (to === 'CANCELED' && current.last_execution_id !== null) await cancelQueuedJob(trx, clock, current.last_execution_id);
        const now = clock.now().toISOString();
        const moved = await updateClusterInStatus(trx, clusterId, from, { status: to, updated_at: now });
        if (!moved) throw conflict('cannot cancel: the cluster state changed meanwhile; read it again');
        await publishClusterTransition(deps.events ?? NO_EVENTS, trx, current, from, to, null);
        return { ...current, status: to, updated_at: now };
      });
      deps.wakeWorkers();
      return statusView(row);
    },

    async getClusterStatus(organizationId: string, clusterId: string) {
      return statusView(await requireCluster(db, organizationId, clusterId));
    },

    async lockCluster(principal: Principal, clusterId: string, body: { reason: string; ttl_in_days?: number | null | undefined }) {
      const existing = await liveLock(db, clusterId);
      if (existing !== undefined) throw conflict(`cluster is already locked: ${lockedMessage(existing)}`);
      const row = await findClusterById(db, clusterId);
      if (row === undefined) throw notFound(`cluster ${clusterId} not found`);
      const lock: ClusterLockRow = {
        cluster_id: clusterId,
        organization_id: row.organization_id,
        reason: body.reason.trim(),
        owner_name: principalDisplayName(principal),
        ttl_in_days: body.ttl_in_days ?? null,
        locked_at: clock.now().toISOString(),
      };
      // The cluster id is the lock's key: of two concurrent lock requests, the second's insert collides.
      await uniqueOrConflict(
        () =>
          db.transaction().execute(async (trx) => {
            const current = await findLock(trx, clusterId);
            if (current !== undefined && lockIsLive(current, clock.now())) throw conflict('cluster is already locked');
            await replaceLock(trx, lock, current);
          }),
        'cluster is already locked',
      );
      return lockView(lock);
    },

    async unlockCluster(clusterId: string): Promise<void> {
      const lock = await liveLock(db, clusterId);
      if (lock === undefined) throw notFound(`cluster ${clusterId} is not locked`);
      await deleteLock(db, clusterId);
    },

    async listClusterLocks(organizationId: string) {
      const now = clock.now();
      return (await listLocks(db, organizationId)).filter((l) => lockIsLive(l, now)).map(lockView);
    },

    /**
     * Mints a one-time enrollment token for the cluster's operator (24 hours; earlier unused tokens stop working)
     * and answers what installs the operator with it.
     */
    async getClusterOperatorBootstrap(organizationId: string, clusterId: string) {
      const cluster = await requireCluster(db, organizationId, clusterId);
      if (cluster.kubernetes !== 'SELF_MANAGED') throw badRequest(`only self-managed clusters run the Slipway operator; this cluster is ${cluster.kubernetes}`);
      const token = mintToken('enrollment');
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + ENROLLMENT_TTL_MS).toISOString();
      await db.transaction().execute(async (trx) => {
        await expireEnrollments(trx, clusterId, now.toISOString());
        await insertEnrollment(trx, { id: newId(), cluster_id: clusterId, token_hash: token.hash, expires_at: expiresAt, created_at: now.toISOString() });
      });
      return bootstrapView(deps.publicUrl, clusterId, token.value, expiresAt);
    },

    /** For createSelfManagedCluster: the cluster and its first enrollment, inside the caller's transaction. */
    async createSelfManagedClusterRecords(
      trx: Transaction<DB>,
      input: {
        organizationId: string;
        name: string;
        description: string | null;
        region: string;
        credentialsId: string;
        dnsProvider: string;
        buildProvider: string;
        production: boolean;
        createdBy: Principal;
      },
    ): Promise<{ clusterId: string; enrollmentToken: string; enrollmentExpiresAt: string }> {
      const now = clock.now();
      const id = newId();
      const name = cleanName(input.name);
      await uniqueOrConflict(
        () =>
          insertCluster(trx, {
            id,
            organization_id: input.organizationId,
            name,
            name_key: nameKey(name),
            description: input.description,
            region: input.region,
            cloud_provider: 'AWS',
            kubernetes: 'SELF_MANAGED',
            instance_type: null,
            min_running_nodes: 1,
            max_running_nodes: 1,
            disk_size: 40,
            production: input.production ? 1 : 0,
            credentials_id: input.credentialsId,
            dns_provider: input.dnsProvider,
            build_provider: input.buildProvider,
            settings: writeJson({}),
            version: DEFAULT_KUBERNETES_VERSION,
            status: 'READY',
            status_message: null,
            deployed_revision: null,
            last_execution_id: null,
            last_deployment_date: null,
            created_at: now.toISOString(),
            updated_at: now.toISOString(),
          }),
        nameTaken(name),
      );
      const token = mintToken('enrollment');
      const expiresAt = new Date(now.getTime() + ENROLLMENT_TTL_MS).toISOString();
      await insertEnrollment(trx, { id: newId(), cluster_id: id, token_hash: token.hash, expires_at: expiresAt, created_at: now.toISOString() });
      return { clusterId: id, enrollmentToken: token.value, enrollmentExpiresAt: expiresAt };
    },

    bootstrapView(clusterId: string, enrollmentToken: string, expiresAt: string) {
      return bootstrapView(deps.publicUrl, clusterId, enrollmentToken, expiresAt);
    },

    authenticateOperator,

    /**
     * Whether an enrollment token could be used now (401 otherwise), without using it: the enrollment route asks
     * before it validates the rest of the request, so a caller without a live token learns nothing of its shape.
     * enrollOperator still uses the token up atomically; this only answers sooner.
     */
    async checkEnrollmentToken(enrollmentToken: string): Promise<void> {
      if (recogniseToken(enrollmentToken) !== 'enrollment') throw unauthenticated('invalid enrollment token');
      const usable = await isEnrollmentUsable(db, hashToken(enrollmentToken), clock.now().toISOString());
      if (!usable) throw unauthenticated('enrollment token is invalid, expired or already used');
    },

    /** An operator trades its one-time enrollment token for its own credential (shown once, stored hashed). */
    async enrollOperator(enrollmentToken: string): Promise<{ cluster_id: string; credential: string }> {
      if (recogniseToken(enrollmentToken) !== 'enrollment') throw unauthenticated('invalid enrollment token');
      const now = clock.now().toISOString();
      const credential = mintToken('operator');
      const clusterId = await db.transaction().execute(async (trx) => {
        const consumed = await consumeEnrollment(trx, hashToken(enrollmentToken), now);
        if (consumed === undefined) throw unauthenticated('enrollment token is invalid, expired or already used');
        await replaceOperator(trx, {
          cluster_id: consumed,
          credential_hash: credential.hash,
          reported_status: null,
          kubernetes_version: null,
          reported_at: null,
          enrolled_at: now,
        });
        return consumed;
      });
      return { cluster_id: clusterId, credential: credential.value };
    },

    /**
     * An enrolled operator reports on its cluster (the route authenticated it: authenticateOperator); a READY report
     * lets a waiting deploy complete.
     */
    async recordOperatorReport(clusterId: string, report: { status: string; kubernetes_version?: string | undefined }): Promise<void> {
      await recordOperatorReport(db, clusterId, {
        reported_status: report.status,
        kubernetes_version: report.kubernetes_version ?? null,
        reported_at: clock.now().toISOString(),
      });
      deps.wakeWorkers();
    },
  };
}

function bootstrapView(publicUrl: string, clusterId: string, enrollmentToken: string, expiresAt: string) {
  const chart = { repository: 'oci://ghcr.io/slipway/charts', name: 'slipway-operator', version: '0.1.0' };
  return {
    cluster_id: clusterId,
    helm_chart: chart,
    values: { controlPlaneUrl: publicUrl, clusterId, enrollmentToken },
    enrollment_token_expires_at: expiresAt,
    command:
      `helm upgrade --install slipway-operator ${chart.repository}/${chart.name} --version ${chart.version} ` +
      `--namespace slipway-system --create-namespace --set controlPlaneUrl=${publicUrl} --set clusterId=${clusterId} ` +
      `--set enrollmentToken=${enrollmentToken}`,
  };
}

export type ClustersService = ReturnType<typeof createClustersService>;
