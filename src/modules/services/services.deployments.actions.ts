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
import { builtInKeysOf, SERVICE_KINDS, type ServiceKind } from '../variables/variables.builtins.ts';
import { publishDeploymentTransition, type DeploymentEventSource } from '../webhooks/webhooks.events.ts';
import type { StoredService } from './services.kinds.ts';
import { findDeployment, findRuntime, insertDeployment, insertRuntime, updateDeployment, updateRuntimeInStatus, type ServiceRuntimeRow } from './services.deployments.repo.ts';
import { writeLogLines } from './services.deployments.logs.ts';
import { NO_WORKLOAD_HEALTH, settingsHashOf, snapshotOf, stateOf, type DeploymentRecords, type StatusView } from './services.deployments.records.ts';
import type { DeploymentSnapshot, ServiceDeploymentsDeps } from './services.deployments.service.ts';
import { isSettled, requestedState, TAKE_EVENT, transitionOf, type QueuedServiceAction, type ServiceProgress, type ServiceState } from './services.states.ts';

/**
 * The moves of a service's state: the actions asked of it (one service's, with the never-deployed services its
 * variables need, or an environment's fanned out into its services), their cancel, and the agent's reports as it
 * carries the newest one out.
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

/**
 * The order in which services of one environment start: databases first, so that their tasks reach the agent before
 * those of the services that connect to them (the dispatch holds a starting service's task until the databases
 * requested before it are in the mailbox: deployments.dispatch.ts). An environment's deploy and a service's deploy
 * that brings its never-deployed dependencies along both follow it.
 */
function byStartOrder(a: { kind: ServiceKind }, b: { kind: ServiceKind }): number {
  return Number(b.kind === 'DATABASE') - Number(a.kind === 'DATABASE');
}

/** States of a service that was deployed and then stopped by its user: a dependency left as it is, with a warning. */
const STOPPED_ON_PURPOSE: ReadonlySet<ServiceState> = new Set(['STOPPING', 'STOPPED']);

type DeployInput = { git_commit_id?: string | undefined; image_tag?: string | undefined };

/** Why a service needs another: one of its variables is an alias that ends at the other's built-in. */
interface DependencyUse {
  service: StoredService;
  /** `DATABASE_URL → PLATFORM_DATABASE_MAIN_CONNECTION_URI`, as its consumer's variables say it. */
  via: string;
  /** The service whose variable it is. */
  neededBy: StoredService;
}

/** An action checked and its snapshot taken, ready to be written (outside any transaction: it reads other modules). */
interface PreparedAction {
  triggeredBy: string;
  service: StoredService;
  action: QueuedServiceAction;
  clusterId: string;
  snapshot: DeploymentSnapshot;
  settingsHash: string;
  /** What the record's message adds to "waiting for the agent", and its first log lines (dependencies). */
  notes: { message: string | undefined; lines: string[] };
}

function describeService(service: Pick<StoredService, 'kind' | 'name'>): string {
  return `${service.kind.toLowerCase().replace('_', ' ')} ${service.name}`;
}

/** A commit id as the build fetches it: git hosts serve one commit by its full id only, never by an abbreviation. */
const FULL_COMMIT_ID = /^[0-9a-f]{40}$/;

function refuseDeployInput(service: StoredService, input: DeployInput): void {
  if (input.git_commit_id !== undefined && !GIT_KINDS.has(service.kind)) {
    throw badRequest(`a ${service.kind} is not built from git`, [{ field: '/git_commit_id', message: `not accepted for a ${service.kind}` }]);
  }
  if (input.git_commit_id !== undefined && !FULL_COMMIT_ID.test(input.git_commit_id)) {
    throw badRequest(
      `git_commit_id "${input.git_commit_id}" is abbreviated: give the full commit id (40 hexadecimal digits, as \`git rev-parse ${input.git_commit_id}\` prints it); the build fetches exactly one commit, and git hosts serve a commit by its full id only`,
      [{ field: '/git_commit_id', message: 'must be a full commit id (40 hexadecimal digits)' }],
    );
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
   * Checks that the service may take the action now (its state, billing and the cluster's grant for what starts a
   * workload) and takes what the deployment will carry: the settings and variables now, or what runs.
   */
  async function prepareAction(triggeredBy: string, service: StoredService, action: QueuedServiceAction, input: DeployInput = {}): Promise<PreparedAction> {
    refuseDeployInput(service, input);
    const environment = await deps.environments.findEnvironmentSummary(service.environmentId);
    if (environment === undefined) throw notFound(`service ${service.id} not found`);
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(service.organizationId, environment.clusterId);
    const before = await runtimeOf(db, service.id);
    requestedState(stateOf(before, service.id), action, before.deployed_deployment_id !== null);
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
    return { triggeredBy, service, action, clusterId: environment.clusterId, snapshot, settingsHash, notes: { message: undefined, lines: [] } };
  }

  /**
   * Writes a prepared action inside the caller's transaction: the service moves into QUEUED (a compare-and-set on
   * the state it was prepared in), its deployment record with the snapshot, its first log lines and the job that
   * carries it out. Answers the runtime row after the move.
   */
  async function writeAction(trx: Transaction<DB>, prepared: PreparedAction, now: string) {
    const { service, action, snapshot, triggeredBy } = prepared;
    const serviceId = service.id;
    const existing = await findRuntime(trx, serviceId);
    const current = existing ?? neverActed(serviceId);
    const from = stateOf(current, serviceId);
    const to = requestedState(from, action, current.deployed_deployment_id !== null);
    const deploymentId = newId();
    const payload: ServiceActionPayload = {
      serviceId,
      deploymentId,
      action,
      kind: service.kind,
      organizationId: service.organizationId,
      environmentId: service.environmentId,
      clusterId: prepared.clusterId,
      requestedAt: now,
    };
    const jobId = await enqueueJobOf(trx, clock, SERVICE_ACTION, payload, { serialKey: `service:${serviceId}` });
    const waiting = waitingMessage(action);
    await insertDeployment(trx, {
      id: deploymentId,
      service_id: serviceId,
      action: HISTORY_ACTION[action],
      status: to,
      message: prepared.notes.message === undefined ? waiting : `${waiting}; ${prepared.notes.message}`,
      origin: 'API',
      triggered_by: triggeredBy,
      job_id: jobId,
      git_commit_id: snapshot.git_commit_id,
      image_tag: snapshot.image_tag,
      settings_hash: prepared.settingsHash,
      variables_hash: snapshot.variables?.content_hash ?? null,
      snapshot: writeJson(snapshot),
      created_at: now,
      updated_at: now,
      finished_at: null,
    });
    const variableCount = snapshot.variables?.variables.length ?? 0;
    await writeLogLines(trx, clock, deploymentId, [
      { stream: 'system', message: `${action} of ${service.kind.toLowerCase()} ${service.name} requested by ${triggeredBy}` },
      ...prepared.notes.lines.map((message) => ({ stream: 'system' as const, message })),
      ...(snapshot.variables === null
        ? []
        : [{ stream: 'system' as const, message: `variables snapshot ${snapshot.variables.content_hash.slice(0, 12)}: ${variableCount} variable(s)` }]),
      { stream: 'system', message: waiting },
    ]);
    const changes = { status: to, last_deployment_id: deploymentId, updated_at: now };
    if (existing === undefined) {
      await insertRuntime(trx, { ...current, ...changes });
    } else if (!(await updateRuntimeInStatus(trx, serviceId, from, changes))) {
      throw conflict(`cannot ${action} service: its state changed meanwhile; read it again`);
    }
    return { ...current, ...changes };
  }

  /**
   * Writes prepared actions in one transaction, in the order given (start order: databases first), all or none;
   * answers their runtimes in that order. `action` is the one the user asked for, for the refusal of a race.
   */
  async function writeActions(action: QueuedServiceAction, ordered: readonly PreparedAction[]) {
    const runtimes = await uniqueOrConflict(
      () =>
        db.transaction().execute(async (trx) => {
          const now = clock.now().toISOString();
          const written: ServiceRuntimeRow[] = [];
          for (const prepared of ordered) written.push(await writeAction(trx, prepared, now));
          return written;
        }),
      `cannot ${action} service: another action was requested at the same time; read its status again`,
    );
    deps.wakeWorkers?.();
    return runtimes;
  }

  /**
   * Moves a service into QUEUED for an action and writes its deployment record (with its snapshot), its first log
   * lines and the job that carries it out, in one transaction. The job waits for the cluster's agent.
   */
  async function requestAction(triggeredBy: string, kind: ServiceKind, serviceId: string, action: QueuedServiceAction, input: DeployInput = {}): Promise<StatusView> {
    // Other modules read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const service = await requireService(serviceId, kind);
    const prepared = await prepareAction(triggeredBy, service, action, input);
    const [runtime] = await writeActions(action, [prepared]);
    if (runtime === undefined) throw new Error(`no runtime written for service ${serviceId}`);
    return statusView(service, runtime);
  }

  /**
   * The services this one needs through its variables (docs/service-deployments.md, "Dependencies"): an alias whose
   * chain ends at another service's built-in (a database's connection, an application's hostname), followed through
   * the needed services' own variables. Answers those never deployed (the ones a deploy brings along, unless their
   * first deployment is already under way) and those deployed and then stopped by their user (left as they are).
   */
  async function dependenciesOf(service: StoredService): Promise<{ neverDeployed: DependencyUse[]; stopped: DependencyUse[] }> {
    const neighbours = await deps.services.listEnvironmentServices(service.environmentId);
    const providerOf = new Map<string, StoredService>();
    for (const neighbour of neighbours) for (const key of builtInKeysOf(neighbour)) providerOf.set(key, neighbour);
    const neverDeployed: DependencyUse[] = [];
    const stopped: DependencyUse[] = [];
    const seen = new Set([service.id]);
    const consumers = [service];
    // An array's iterator reaches the elements pushed while it runs: the needed services' own needs are followed too.
    for (const consumer of consumers) {
      // Databases consume no variables.
      if (consumer.kind === 'DATABASE') continue;
      const { results } = await deps.variables.explain(consumer.environmentId, consumer.id, false);
      for (const variable of results) {
        const holder = variable.alias_chain.at(-1);
        // Every built-in is visible to every service: only an alias of one says that the service uses it.
        if (variable.alias_chain.length < 2 || holder === undefined || holder.scope !== 'BUILT_IN') continue;
        const provider = providerOf.get(holder.key);
        if (provider === undefined || seen.has(provider.id)) continue;
        seen.add(provider.id);
        const use = { service: provider, via: `${variable.key} → ${holder.key}`, neededBy: consumer };
        const runtime = await runtimeOf(db, provider.id);
        const state = stateOf(runtime, provider.id);
        if (runtime.deployed_deployment_id !== null) {
          if (STOPPED_ON_PURPOSE.has(state)) stopped.push(use);
          continue;
        }
        // A first deployment already queued or under way comes before this one in the mailbox anyway.
        if (transitionOf(state, 'deploy') === undefined) continue;
        neverDeployed.push(use);
        consumers.push(provider);
      }
    }
    return { neverDeployed, stopped };
  }

  /** A needed service's refusal, naming it and why it was needed (same kind and fields). */
  function dependencyRefusal(error: unknown, use: DependencyUse): unknown {
    if (!(error instanceof AppError)) return error;
    const cause = `cannot deploy ${describeService(use.service)}, which ${use.neededBy.name} needs (${use.via}) and which was never deployed: ${error.message}`;
    return new AppError(error.kind, cause, error.details);
  }

  /**
   * A user's deploy or redeploy of one service: with it, in the same transaction and in start order, the deploys of
   * the services its variables need that were never deployed. A needed service its user stopped stays stopped; the
   * deployment's message and log warn about it.
   */
  async function requestStartWithDependencies(triggeredBy: string, kind: ServiceKind, serviceId: string, action: 'deploy' | 'redeploy', input: DeployInput = {}) {
    const service = await requireService(serviceId, kind);
    const prepared = await prepareAction(triggeredBy, service, action, input);
    const { neverDeployed, stopped } = await dependenciesOf(service);
    const companions: PreparedAction[] = [];
    for (const use of neverDeployed) {
      try {
        const companion = await prepareAction(triggeredBy, use.service, 'deploy');
        const line = `deployed with ${describeService(service)}: ${use.neededBy.name} needs it (${use.via}) and it was never deployed`;
        companions.push({ ...companion, notes: { message: line, lines: [line] } });
      } catch (error) {
        throw dependencyRefusal(error, use);
      }
    }
    const brought = neverDeployed.map((use) => `also deploying ${describeService(use.service)} (never deployed; ${use.neededBy.name} needs it: ${use.via})`);
    const warnings = stopped.map(
      (use) => `warning: ${describeService(use.service)} is stopped and stays so; ${use.neededBy.name} needs it (${use.via}): deploy it to start it again`,
    );
    const notes = [...brought, ...warnings];
    const main = { ...prepared, notes: { message: notes.length === 0 ? undefined : notes.join('; '), lines: notes } };
    const ordered = [...companions, main].sort((a, b) => byStartOrder(a.service, b.service));
    const runtimes = await writeActions(action, ordered);
    const runtime = runtimes[ordered.indexOf(main)];
    if (runtime === undefined) throw new Error(`no runtime written for service ${serviceId}`);
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
    deployService: (principal: Principal, kind: ServiceKind, serviceId: string, input: DeployInput) =>
      requestStartWithDependencies(principalDisplayName(principal), kind, serviceId, 'deploy', input),
    redeployService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestStartWithDependencies(principalDisplayName(principal), kind, serviceId, 'redeploy'),
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
        .sort(byStartOrder);
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
