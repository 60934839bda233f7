import type { Transaction } from 'kysely';
import { Type, type Static } from 'typebox';
import { QUEUED_ACTIONS, waitingMessage, type QueuedAction } from '../../engine/deployment-states.ts';
import type { Requester } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, jobKind } from '../../jobs/job-kinds.ts';
import { AppError, badRequest, conflict, notFound, type AppErrorKind } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { SERVICE_KINDS, type ServiceKind } from '../variables/variables.builtins.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { dependenciesOf, dependencyRefusal, describeService } from './deployments.dependencies.ts';
import {
  findServiceDeployment,
  findRuntime,
  insertServiceDeployment,
  insertRuntime,
  lockOpenEnvironmentDeployment,
  updateRuntimeInStatus,
  type ServiceRuntimeRow,
} from './deployments.repo.ts';
import { writeLogLines } from './deployments.logs.ts';
import { serviceStateOf, settingsHashOf, snapshotOf, type ServiceRecords, type StatusView } from './deployments.service-records.ts';
import type { DeploymentSnapshot, DeploymentsDeps } from './deployments.service.ts';
import { COSTS_MONEY, queuedRecord, requestedState } from './deployments.states.ts';

/**
 * A service's action requests: one service's (a deploy with the never-deployed services its variables need), or an
 * environment's fanned out into its services. Each checks the state machine, billing and the cluster's grant, takes
 * the snapshot the deployment carries, and writes, in one transaction, the move into QUEUED, the deployment record,
 * its first log lines and the job that carries it out. What follows (cancel, the agent's reports) is
 * deployments.transitions.ts.
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

/** What an environment's fanned-out action records as a skipped service rather than failing the whole action. */
const FAN_OUT_REFUSALS: ReadonlySet<AppErrorKind> = new Set(['conflict', 'payment_required', 'forbidden']);

/** Kinds whose deploy may name a git commit, and kinds whose deploy may name an image tag. */
const GIT_KINDS: ReadonlySet<ServiceKind> = new Set(['APPLICATION', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW']);
const IMAGE_KINDS: ReadonlySet<ServiceKind> = new Set(['CONTAINER', 'JOB']);

/**
 * Where each service of an environment starts (docs/deployment-stages.md): the position of its deployment stage (0
 * first) and whether the environment's deploy skips it. Services of earlier stages start first: their tasks reach the
 * agent before those of later stages (the dispatch holds a starting service's task until those of the earlier
 * stages' services requested before it are in the mailbox: deployments.dispatch.ts). An environment's deploy and a
 * service's deploy that brings its never-deployed dependencies along both follow it.
 */
export type StartOrder = ReadonlyMap<string, { stage: number; stageName: string; skipped: boolean }>;

/** A comparator over services by their stage in `order` (a service it does not know goes last). */
function byStage(order: StartOrder) {
  const stageOf = (service: { id: string }) => order.get(service.id)?.stage ?? Number.MAX_SAFE_INTEGER;
  return (a: { id: string }, b: { id: string }) => stageOf(a) - stageOf(b);
}

type DeployInput = { git_commit_id?: string | undefined; image_tag?: string | undefined };

/** An action checked and its snapshot taken, ready to be written (outside any transaction: it reads other modules). */
interface PreparedAction {
  requester: Requester;
  service: StoredService;
  action: QueuedAction;
  clusterId: string;
  snapshot: DeploymentSnapshot;
  settingsHash: string;
  /** What the record's message adds to "waiting for the agent", and its first log lines (dependencies). */
  notes: { message: string | undefined; lines: string[] };
  /** Where the record was requested from: an environment action's fan-out, and its service's stage then. */
  origin?: RequestOrigin | undefined;
}

/** What a service deployment records of the environment action and the deployment stage it was requested in. */
interface RequestOrigin {
  environmentDeploymentId?: string | undefined;
  stage?: { name: string; order: number } | undefined;
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

export function createServiceRequests(
  deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'services' | 'environments' | 'variables' | 'deploymentGate' | 'wakeWorkers' | 'stages' | 'stateChanges'>,
  records: ServiceRecords,
) {
  const { db, clock } = deps;
  const { requireService, neverActed, runtimeOf, statusView } = records;

  /** The environment's stage order: the deployment-stages module's, or without it the default stages' (databases first). */
  async function startOrderOf(environmentId: string): Promise<StartOrder> {
    if (deps.stages !== undefined) return deps.stages.startOrderOf(environmentId);
    const services = await deps.services.listEnvironmentServices(environmentId);
    return new Map(services.map((service) => [service.id, service.kind === 'DATABASE' ? { stage: 0, stageName: 'DATABASE DEFAULT', skipped: false } : { stage: 1, stageName: 'SERVICE DEFAULT', skipped: false }]));
  }

  /** The stage a service is in, as a deployment records it. */
  function stageIn(order: StartOrder, serviceId: string): RequestOrigin['stage'] {
    const place = order.get(serviceId);
    return place === undefined ? undefined : { name: place.stageName, order: place.stage };
  }

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
  async function prepareAction(requester: Requester, service: StoredService, action: QueuedAction, input: DeployInput = {}): Promise<PreparedAction> {
    refuseDeployInput(service, input);
    const environment = await deps.environments.findEnvironmentSummary(service.environmentId);
    if (environment === undefined) throw notFound(`service ${service.id} not found`);
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(service.organizationId, environment.clusterId);
    const before = await runtimeOf(db, service.id);
    requestedState('service', serviceStateOf(before), action, before.deployed_deployment_id !== null);
    const deployedBefore = before.deployed_deployment_id === null ? undefined : await findServiceDeployment(db, before.deployed_deployment_id);
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
    return { requester, service, action, clusterId: environment.clusterId, snapshot, settingsHash, notes: { message: undefined, lines: [] } };
  }

  /**
   * Writes a prepared action inside the caller's transaction: the service moves into QUEUED (a compare-and-set on
   * the state it was prepared in), its deployment record with the snapshot, its first log lines and the job that
   * carries it out. Answers the runtime row after the move.
   */
  async function writeAction(trx: Transaction<DB>, prepared: PreparedAction, now: string) {
    const { service, action, snapshot, requester } = prepared;
    const serviceId = service.id;
    // An environment's action cancelled while its job was fanning it out (the job could not be withdrawn) asks no
    // service anything more; the cancel ends those it asked before (deployments.transitions.ts).
    const environmentDeploymentId = prepared.origin?.environmentDeploymentId;
    if (environmentDeploymentId !== undefined && !(await lockOpenEnvironmentDeployment(trx, environmentDeploymentId))) {
      throw conflict(`cannot ${action} service: the environment's deployment request ${environmentDeploymentId} has ended`);
    }
    const existing = await findRuntime(trx, serviceId);
    const current = existing ?? neverActed(serviceId);
    const from = serviceStateOf(current);
    const to = requestedState('service', from, action, current.deployed_deployment_id !== null);
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
    const message = prepared.notes.message === undefined ? waiting : `${waiting}; ${prepared.notes.message}`;
    await insertServiceDeployment(trx, {
      ...queuedRecord({ id: deploymentId, action, status: to, message, requester, jobId, now }),
      service_id: serviceId,
      git_commit_id: snapshot.git_commit_id,
      image_tag: snapshot.image_tag,
      settings_hash: prepared.settingsHash,
      variables_hash: snapshot.variables?.content_hash ?? null,
      snapshot: writeJson(snapshot),
      environment_deployment_id: prepared.origin?.environmentDeploymentId ?? null,
      deployment_stage_name: prepared.origin?.stage?.name ?? null,
      deployment_stage_order: prepared.origin?.stage?.order ?? null,
    });
    const variableCount = snapshot.variables?.variables.length ?? 0;
    await writeLogLines(trx, clock, deploymentId, [
      { stream: 'system', message: `${action} of ${service.kind.toLowerCase()} ${service.name} requested by ${requester.name}` },
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
      // Named: in a request for several services, this says which one moved since they were all checked.
      throw conflict(`cannot ${action} ${describeService(service)} (${serviceId}): its state changed meanwhile; read it again`);
    }
    await deps.stateChanges?.serviceChanged(trx, serviceId);
    return { ...current, ...changes };
  }

  /**
   * Writes prepared actions in one transaction, in the order given (start order: databases first), all or none;
   * answers their runtimes in that order. `action` is the one the user asked for, for the refusal of a race.
   */
  async function writeActions(action: QueuedAction, ordered: readonly PreparedAction[]) {
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
  async function requestAction(
    requester: Requester,
    kind: ServiceKind,
    serviceId: string,
    action: QueuedAction,
    input: DeployInput = {},
    origin?: RequestOrigin,
  ): Promise<StatusView> {
    // Other modules read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const service = await requireService(serviceId, kind);
    const prepared = { ...(await prepareAction(requester, service, action, input)), origin };
    const [runtime] = await writeActions(action, [prepared]);
    if (runtime === undefined) throw new Error(`no runtime written for service ${serviceId}`);
    return statusView(service, runtime);
  }

  /**
   * A user's deploy or redeploy of one service: with it, in the same transaction and in start order, the deploys of
   * the services its variables need that were never deployed. A needed service its user stopped stays stopped; the
   * deployment's message and log warn about it.
   */
  async function requestStartWithDependencies(requester: Requester, kind: ServiceKind, serviceId: string, action: 'deploy' | 'redeploy', input: DeployInput = {}) {
    const service = await requireService(serviceId, kind);
    const prepared = await prepareAction(requester, service, action, input);
    const { neverDeployed, stopped } = await dependenciesOf(deps, records, service);
    const companions: PreparedAction[] = [];
    for (const use of neverDeployed) {
      try {
        const companion = await prepareAction(requester, use.service, 'deploy');
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
    const order = await startOrderOf(service.environmentId);
    const inStages = byStage(order);
    const ordered = [...companions, main]
      .map((entry) => ({ ...entry, origin: { stage: stageIn(order, entry.service.id) } }))
      .sort((a, b) => inStages(a.service, b.service));
    const runtimes = await writeActions(action, ordered);
    const runtime = runtimes[ordered.findIndex((entry) => entry.service.id === serviceId)];
    if (runtime === undefined) throw new Error(`no runtime written for service ${serviceId}`);
    return statusView(service, runtime);
  }

  return {
    /** Each service's deployment stage in its environment (the deployment queue shows requests by stage: deployments.queue.ts). */
    startOrderOf,
    /** The requester may be Slipway itself, acting on a git provider's push (the git-webhooks module). */
    deployService: (requester: Requester, kind: ServiceKind, serviceId: string, input: DeployInput) => requestStartWithDependencies(requester, kind, serviceId, 'deploy', input),
    redeployService: (requester: Requester, kind: ServiceKind, serviceId: string) => requestStartWithDependencies(requester, kind, serviceId, 'redeploy'),
    stopService: (requester: Requester, kind: ServiceKind, serviceId: string) => requestAction(requester, kind, serviceId, 'stop'),
    restartService: (requester: Requester, kind: ServiceKind, serviceId: string) => requestAction(requester, kind, serviceId, 'restart'),

    /**
     * The position of the service's deployment stage (undefined once it is gone), and the services of the earlier
     * stages: those whose start, requested before the service's, its own start waits for (deployments.dispatch.ts).
     */
    async stagePlaceOf(environmentId: string, serviceId: string): Promise<{ stage: number; earlierServiceIds: string[] } | undefined> {
      const order = await startOrderOf(environmentId);
      const own = order.get(serviceId)?.stage;
      if (own === undefined) return undefined;
      return { stage: own, earlierServiceIds: [...order].filter(([, place]) => place.stage < own).map(([id]) => id) };
    },

    /**
     * Several services' own actions asked together (an environment's bulk actions, deployments.bulk-actions.ts): each
     * is checked and prepared first (its state, billing, the cluster's grant, its deploy input), then all are written
     * in one transaction in start order, or none is. Answers each service's status, in the order given.
     */
    async requestServicesAction(requester: Requester, action: QueuedAction, targets: ReadonlyArray<{ service: StoredService; input?: DeployInput }>) {
      const environmentId = targets[0]?.service.environmentId;
      const order: StartOrder = environmentId === undefined ? new Map() : await startOrderOf(environmentId);
      const prepared: PreparedAction[] = [];
      for (const target of targets) {
        prepared.push({ ...(await prepareAction(requester, target.service, action, target.input)), origin: { stage: stageIn(order, target.service.id) } });
      }
      const inStages = byStage(order);
      const ordered = [...prepared].sort((a, b) => inStages(a.service, b.service));
      const runtimes = await writeActions(action, ordered);
      return Promise.all(
        prepared.map((entry) => {
          const runtime = runtimes[ordered.indexOf(entry)];
          if (runtime === undefined) throw new Error(`no runtime written for service ${entry.service.id}`);
          return statusView(entry.service, runtime);
        }),
      );
    },

    /**
     * An environment's action carried into its services (docs/service-deployments.md, "Environment actions"): deploy
     * and redeploy deploy each service (a deployed one is redeployed) in the order of their deployment stages, so that
     * the tasks of one stage reach the agent before those of the next (by default databases before the services that
     * connect to them), leaving out the services their stage marks skipped; stop and restart act on the deployed ones
     * (restart on `only` when given). A service whose state refuses its action (busy, already stopped) is skipped with
     * the reason. Runs from the environment's action job, so a retry after a crash skips what the first run requested.
     * Each service's deployment records the environment action's requester: who asked for it and from where.
     */
    async requestEnvironmentServicesAction(environmentId: string, action: QueuedAction, requester: Requester, only?: readonly string[], environmentDeploymentId?: string) {
      const order = await startOrderOf(environmentId);
      const services = (await deps.services.listEnvironmentServices(environmentId))
        .filter((service) => only === undefined || only.includes(service.id))
        .sort(byStage(order));
      const outcomes: Array<{ serviceId: string; name: string; action: QueuedAction | null; skipped?: string }> = [];
      for (const service of services) {
        // A service its stage marks skipped stays out of the environment's deploys (not of an action naming it).
        if (only === undefined && (action === 'deploy' || action === 'redeploy') && order.get(service.id)?.skipped === true) {
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: 'marked skipped in its deployment stage' });
          continue;
        }
        const deployed = (await runtimeOf(db, service.id)).deployed_deployment_id !== null;
        const own: QueuedAction | null = action === 'deploy' || action === 'redeploy' ? (deployed ? 'redeploy' : 'deploy') : deployed ? action : null;
        if (own === null) {
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: 'never deployed' });
          continue;
        }
        try {
          await requestAction(requester, service.kind, service.id, own, {}, { environmentDeploymentId, stage: stageIn(order, service.id) });
          outcomes.push({ serviceId: service.id, name: service.name, action: own });
        } catch (error) {
          // Refusals (a state that does not allow it, billing, a LOCAL cluster's grant withdrawn meanwhile) skip the service.
          if (!(error instanceof AppError) || !FAN_OUT_REFUSALS.has(error.kind)) throw error;
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: error.message });
        }
      }
      return outcomes;
    },
  };
}
