import type { Transaction } from 'kysely';
import { HISTORY_ACTION, QUEUED_ACTIONS, queuedActionOf, waitingMessage } from '../../engine/deployment-states.ts';
import { principalDisplayName, type Principal } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { Type, type Static } from 'typebox';
import { enqueueJobOf, jobKind } from '../../jobs/job-kinds.ts';
import { cancelQueuedJob } from '../../jobs/job-queue.ts';
import { AppError, badRequest, conflict, notFound, type AppErrorKind } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { SERVICE_KINDS, type ServiceKind } from '../variables/variables.builtins.ts';
import { publishDeploymentTransition, type DeploymentEventSource } from '../webhooks/webhooks.events.ts';
import type { StoredService } from './services.kinds.ts';
import { findDeployment, findRuntime, insertDeployment, insertRuntime, updateDeployment, updateRuntimeInStatus } from './services.deployments.repo.ts';
import { writeLogLines } from './services.deployments.logs.ts';
import { NO_WORKLOAD_HEALTH, settingsHashOf, snapshotOf, stateOf, type DeploymentRecords, type StatusView } from './services.deployments.records.ts';
import type { DeploymentSnapshot, ServiceDeploymentsDeps } from './services.deployments.service.ts';
import { isSettled, requestedState, TAKE_EVENT, transitionOf, type QueuedServiceAction, type ServiceProgress } from './services.states.ts';

/**
 * The moves of a service's state: the actions asked of it (one service's, or an environment's fanned out into its
 * services), their cancel, and the agent's reports as it carries the newest one out.
 */

/** The job that carries a service action out; the cluster's agent (issue 9) handles it. */
export const SERVICE_ACTION_JOB = 'service.action';

export const ServiceActionPayload = Type.Object({
  serviceId: Type.String(),
  deploymentId: Type.String(),
  action: Type.Enum(QUEUED_ACTIONS),
  kind: Type.Enum(SERVICE_KINDS),
  organizationId: Type.String(),
  environmentId: Type.String(),
  clusterId: Type.String(),
  requestedAt: Type.String(),
});
export type ServiceActionPayload = Static<typeof ServiceActionPayload>;
export const SERVICE_ACTION = jobKind(SERVICE_ACTION_JOB, ServiceActionPayload);

/** Actions that start workloads, and so cost money; a stop is always allowed. */
const COSTS_MONEY: ReadonlySet<QueuedServiceAction> = new Set(['deploy', 'redeploy', 'restart']);

/** What an environment's fanned-out action records as a skipped service rather than failing the whole action. */
const FAN_OUT_REFUSALS: ReadonlySet<AppErrorKind> = new Set(['conflict', 'payment_required', 'forbidden']);

/** Kinds whose deploy may name a git commit, and kinds whose deploy may name an image tag. */
const GIT_KINDS: ReadonlySet<ServiceKind> = new Set(['APPLICATION', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW']);
const IMAGE_KINDS: ReadonlySet<ServiceKind> = new Set(['CONTAINER', 'JOB']);

/** Billing's price key and units for a running service: its CPU size and its minimum instance count. */
function meteredSize(service: StoredService): { priceKey: string; units: number } {
  const cpu = typeof service.settings.cpu === 'number' ? service.settings.cpu : 500;
  const instances = typeof service.settings.min_running_instances === 'number' ? service.settings.min_running_instances : 1;
  const priceKey = cpu <= 500 ? 'service.small' : cpu <= 2000 ? 'service.medium' : 'service.large';
  return { priceKey, units: Math.max(1, Math.floor(instances)) };
}

function refuseDeployInput(service: StoredService, input: { git_commit_id?: string | undefined; image_tag?: string | undefined }): void {
  if (input.git_commit_id !== undefined && !GIT_KINDS.has(service.kind)) {
    throw badRequest(`a ${service.kind} is not built from git`, [{ field: '/git_commit_id', message: `not accepted for a ${service.kind}` }]);
  }
  if (input.image_tag !== undefined && !IMAGE_KINDS.has(service.kind)) {
    throw badRequest(`a ${service.kind} does not run a container image of its own`, [{ field: '/image_tag', message: `not accepted for a ${service.kind}` }]);
  }
}

export function createServiceDeploymentActions(
  deps: Pick<ServiceDeploymentsDeps, 'db' | 'clock' | 'services' | 'environments' | 'variables' | 'deploymentGate' | 'metering' | 'wakeWorkers' | 'events'>,
  records: DeploymentRecords,
) {
  const { db, clock } = deps;
  const { changes, requireService, neverActed, runtimeOf, statusView } = records;

  /** What a deploy or redeploy carries: the service's settings now and its variables resolved now. */
  async function freshSnapshot(service: StoredService, clusterId: string, gitCommitId: string | null, imageTag: string | null): Promise<DeploymentSnapshot> {
    const variables = service.kind === 'DATABASE' ? null : await deps.variables.resolveForDeployment(service.environmentId, service.id);
    return {
      service: {
        id: service.id,
        kind: service.kind,
        name: service.name,
        organizationId: service.organizationId,
        environmentId: service.environmentId,
        clusterId,
        settings: service.settings,
      },
      git_commit_id: gitCommitId,
      image_tag: imageTag,
      variables,
    };
  }

  /**
   * Moves a service into QUEUED for an action and writes its deployment record (with its snapshot), its first log
   * lines and the job that carries it out, in one transaction. The job waits for the cluster's agent.
   */
  async function requestAction(
    triggeredBy: string,
    kind: ServiceKind,
    serviceId: string,
    action: QueuedServiceAction,
    input: { git_commit_id?: string | undefined; image_tag?: string | undefined } = {},
  ): Promise<StatusView> {
    // Other modules read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const service = await requireService(serviceId, kind);
    refuseDeployInput(service, input);
    const environment = await deps.environments.findEnvironmentSummary(service.environmentId);
    if (environment === undefined) throw notFound(`service ${serviceId} not found`);
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(service.organizationId, environment.clusterId);
    const before = await runtimeOf(db, serviceId);
    requestedState(stateOf(before, serviceId), action, before.deployed_deployment_id !== null);
    const deployedBefore = before.deployed_deployment_id === null ? undefined : await findDeployment(db, before.deployed_deployment_id);
    let snapshot: DeploymentSnapshot;
    if (action === 'deploy' || action === 'redeploy') {
      // A redeploy rebuilds what ran (its commit and tag) with today's settings and variables, unless told otherwise.
      const previous = action === 'redeploy' && deployedBefore !== undefined ? snapshotOf(deployedBefore) : undefined;
      snapshot = await freshSnapshot(service, environment.clusterId, input.git_commit_id ?? previous?.git_commit_id ?? null, input.image_tag ?? previous?.image_tag ?? null);
    } else {
      // Stop and restart act on what runs: the deployed snapshot, unchanged (new configuration needs a redeploy).
      if (deployedBefore === undefined) throw conflict(`cannot ${action} service: it has never been deployed`);
      snapshot = snapshotOf(deployedBefore);
    }
    const settingsHash = action === 'deploy' || action === 'redeploy' ? settingsHashOf(service) : (deployedBefore?.settings_hash ?? settingsHashOf(service));
    const variablesHash = snapshot.variables?.content_hash ?? null;

    const runtime = await uniqueOrConflict(
      () =>
        db.transaction().execute(async (trx) => {
          const existing = await findRuntime(trx, serviceId);
          const current = existing ?? neverActed(serviceId);
          const from = stateOf(current, serviceId);
          const to = requestedState(from, action, current.deployed_deployment_id !== null);
          const now = clock.now().toISOString();
          const deploymentId = newId();
          const payload: ServiceActionPayload = {
            serviceId,
            deploymentId,
            action,
            kind: service.kind,
            organizationId: service.organizationId,
            environmentId: service.environmentId,
            clusterId: environment.clusterId,
            requestedAt: now,
          };
          const jobId = await enqueueJobOf(trx, clock, SERVICE_ACTION, payload, { serialKey: `service:${serviceId}` });
          await insertDeployment(trx, {
            id: deploymentId,
            service_id: serviceId,
            action: HISTORY_ACTION[action],
            status: to,
            message: waitingMessage(action),
            origin: 'API',
            triggered_by: triggeredBy,
            job_id: jobId,
            git_commit_id: snapshot.git_commit_id,
            image_tag: snapshot.image_tag,
            settings_hash: settingsHash,
            variables_hash: variablesHash,
            snapshot: writeJson(snapshot),
            created_at: now,
            updated_at: now,
            finished_at: null,
          });
          const variableCount = snapshot.variables?.variables.length ?? 0;
          await writeLogLines(trx, clock, deploymentId, [
            { stream: 'system', message: `${action} of ${service.kind.toLowerCase()} ${service.name} requested by ${triggeredBy}` },
            ...(snapshot.variables === null
              ? []
              : [{ stream: 'system' as const, message: `variables snapshot ${snapshot.variables.content_hash.slice(0, 12)}: ${variableCount} variable(s)` }]),
            { stream: 'system', message: waitingMessage(action) },
          ]);
          const changes = { status: to, last_deployment_id: deploymentId, updated_at: now };
          if (existing === undefined) {
            await insertRuntime(trx, { ...current, ...changes });
          } else if (!(await updateRuntimeInStatus(trx, serviceId, from, changes))) {
            throw conflict(`cannot ${action} service: its state changed meanwhile; read it again`);
          }
          return { ...current, ...changes };
        }),
      `cannot ${action} service: another action was requested at the same time; read its status again`,
    );
    deps.wakeWorkers?.();
    return statusView(service, runtime);
  }

  /** Where a service lives, for its deployment events (read before a transaction: it asks other modules). */
  async function eventSourceOf(service: StoredService): Promise<DeploymentEventSource | undefined> {
    return deps.events === undefined ? undefined : deps.events.sourceOf(service);
  }

  async function publishMove(trx: Transaction<DB>, source: DeploymentEventSource | undefined, move: Parameters<typeof publishDeploymentTransition>[3]) {
    if (source !== undefined && deps.events !== undefined) await publishDeploymentTransition(deps.events.publisher, trx, source, move);
  }

  /** Moves the service by one agent report, inside one transaction; answers the rows before and after. */
  async function applyProgress(
    serviceId: string,
    deploymentId: string,
    event: ServiceProgress | 'take',
    message: string | undefined,
    source: DeploymentEventSource | undefined,
  ) {
    return db.transaction().execute(async (trx) => {
      const current = await findRuntime(trx, serviceId);
      if (current === undefined || current.last_deployment_id !== deploymentId) throw conflict(`deployment ${deploymentId} is not the service's current action`);
      const record = await findDeployment(trx, deploymentId);
      if (record === undefined) throw notFound(`deployment ${deploymentId} not found`);
      const resolved: ServiceProgress = event === 'take' ? TAKE_EVENT[queuedActionOf(record.action)] : event;
      const from = stateOf(current, serviceId);
      const to = transitionOf(from, resolved);
      if (to === undefined) throw conflict(`cannot apply ${resolved} to service: it is ${from}`);
      const now = clock.now().toISOString();
      // A new deployment's instance, or none at all, has no health to show yet.
      const deployed = to === 'DEPLOYED' ? { deployed_deployment_id: deploymentId, ...NO_WORKLOAD_HEALTH } : to === 'STOPPED' || to === 'RESTARTED' ? NO_WORKLOAD_HEALTH : {};
      if (!(await updateRuntimeInStatus(trx, serviceId, from, { status: to, updated_at: now, ...deployed }))) throw conflict('the service state changed meanwhile');
      await updateDeployment(trx, deploymentId, { status: to, message: message ?? null, updated_at: now, ...(isSettled(to) ? { finished_at: now } : {}) });
      await writeLogLines(trx, clock, deploymentId, [{ stream: 'system', message: `${from} → ${to}${message === undefined ? '' : `: ${message}`}` }]);
      await publishMove(trx, source, { action: record.action, deploymentId, from, to, message });
      return { runtime: { ...current, status: to, updated_at: now, ...deployed }, to, at: now };
    });
  }

  return {
    deployService: (principal: Principal, kind: ServiceKind, serviceId: string, input: { git_commit_id?: string | undefined; image_tag?: string | undefined }) =>
      requestAction(principalDisplayName(principal), kind, serviceId, 'deploy', input),
    redeployService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'redeploy'),
    stopService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'stop'),
    restartService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'restart'),

    /**
     * An environment's action carried into its services (docs/service-deployments.md, "Environment actions"): deploy
     * and redeploy deploy each service (a deployed one is redeployed), databases first so that their tasks reach the
     * agent before the applications that connect to them; stop and restart act on the deployed ones (restart on
     * `only` when given). A service whose state refuses its action (busy, already stopped) is skipped with the
     * reason. Runs from the environment's action job, so a retry after a crash skips what the first run requested.
     */
    async requestEnvironmentServicesAction(environmentId: string, action: QueuedServiceAction, triggeredBy: string, only?: readonly string[]) {
      const services = (await deps.services.listEnvironmentServices(environmentId))
        .filter((service) => only === undefined || only.includes(service.id))
        .sort((a, b) => Number(b.kind === 'DATABASE') - Number(a.kind === 'DATABASE'));
      const outcomes: Array<{ serviceId: string; name: string; action: QueuedServiceAction | null; skipped?: string }> = [];
      for (const service of services) {
        const deployed = (await runtimeOf(db, service.id)).deployed_deployment_id !== null;
        const own: QueuedServiceAction | null = action === 'deploy' || action === 'redeploy' ? (deployed ? 'redeploy' : 'deploy') : deployed ? action : null;
        if (own === null) {
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: 'never deployed' });
          continue;
        }
        try {
          await requestAction(triggeredBy, service.kind, service.id, own);
          outcomes.push({ serviceId: service.id, name: service.name, action: own });
        } catch (error) {
          // Refusals (a state that does not allow it, billing, a LOCAL cluster's grant withdrawn meanwhile) skip the service.
          if (!(error instanceof AppError) || !FAN_OUT_REFUSALS.has(error.kind)) throw error;
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: error.message });
        }
      }
      return outcomes;
    },

    /** Cancels the action under way: a queued one at once (its job is withdrawn), a running deploy at the agent's next step. */
    async cancelServiceDeployment(kind: ServiceKind, serviceId: string) {
      const service = await requireService(serviceId, kind);
      const source = await eventSourceOf(service);
      const runtime = await db.transaction().execute(async (trx) => {
        const current = await runtimeOf(trx, serviceId);
        const from = stateOf(current, serviceId);
        const to = transitionOf(from, 'cancel');
        if (to === undefined || current.last_deployment_id === null) throw conflict(`cannot cancel: service is ${from}, with no cancellable action under way`);
        const now = clock.now().toISOString();
        const last = await findDeployment(trx, current.last_deployment_id);
        if (last !== undefined) {
          if (to === 'CANCELED') await cancelQueuedJob(trx, clock, last.job_id);
          const message = to === 'CANCELED' ? 'canceled before the agent took it' : 'cancel requested: the agent stops at its next step';
          await updateDeployment(trx, last.id, { status: to, message, updated_at: now, ...(to === 'CANCELED' ? { finished_at: now } : {}) });
          await writeLogLines(trx, clock, last.id, [{ stream: 'system', message }]);
          if (to === 'CANCELED') await publishMove(trx, source, { action: last.action, deploymentId: last.id, from, to, message });
        }
        if (!(await updateRuntimeInStatus(trx, serviceId, from, { status: to, updated_at: now }))) {
          throw conflict('cannot cancel: the service state changed meanwhile; read it again');
        }
        return { ...current, status: to, updated_at: now };
      });
      if (runtime.last_deployment_id !== null) changes.emit(runtime.last_deployment_id);
      return statusView(service, runtime);
    },

    /**
     * What the cluster's agent (issue 9) reports while it carries out a service's newest action: it takes the queued
     * action (`take`), then reports its phases (built, succeed, fail, cancel_done). Each report moves the state
     * through the transition table (409 when the table has no such move) and the deployment record with it;
     * reaching DEPLOYED starts the service's metered running time, STOPPED ends it.
     */
    async recordServiceProgress(serviceId: string, deploymentId: string, event: ServiceProgress | 'take', message?: string) {
      const service = await requireService(serviceId);
      const { runtime, to, at } = await applyProgress(serviceId, deploymentId, event, message, await eventSourceOf(service));
      changes.emit(deploymentId);
      if (to === 'DEPLOYED') {
        const size = meteredSize(service);
        await deps.metering.resourceRunning({ organizationId: service.organizationId, resourceType: 'SERVICE', resourceId: serviceId, ...size, at });
      }
      if (to === 'STOPPED') await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at });
      return statusView(service, runtime);
    },
  };
}
