import type { Transaction } from 'kysely';
import { Type, type Static } from 'typebox';
import { QUEUED_ACTIONS, waitingMessage, type QueuedAction } from '../../engine/deployment-states.ts';
import { principalDisplayName, type Principal } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, jobKind } from '../../jobs/job-kinds.ts';
import { AppError, badRequest, conflict, notFound, type AppErrorKind } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { SERVICE_KINDS, type ServiceKind } from '../variables/variables.builtins.ts';
import type { StoredService } from '../services/services.kinds.ts';
import { dependenciesOf, dependencyRefusal, describeService } from './deployments.dependencies.ts';
import { findServiceDeployment, findRuntime, insertServiceDeployment, insertRuntime, updateRuntimeInStatus, type ServiceRuntimeRow } from './deployments.repo.ts';
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
 * The order in which services of one environment start: databases first, so that their tasks reach the agent before
 * those of the services that connect to them (the dispatch holds a starting service's task until the databases
 * requested before it are in the mailbox: deployments.dispatch.ts). An environment's deploy and a service's deploy
 * that brings its never-deployed dependencies along both follow it.
 */
function byStartOrder(a: { kind: ServiceKind }, b: { kind: ServiceKind }): number {
  return Number(b.kind === 'DATABASE') - Number(a.kind === 'DATABASE');
}

type DeployInput = { git_commit_id?: string | undefined; image_tag?: string | undefined };

/** An action checked and its snapshot taken, ready to be written (outside any transaction: it reads other modules). */
interface PreparedAction {
  triggeredBy: string;
  service: StoredService;
  action: QueuedAction;
  clusterId: string;
  snapshot: DeploymentSnapshot;
  settingsHash: string;
  /** What the record's message adds to "waiting for the agent", and its first log lines (dependencies). */
  notes: { message: string | undefined; lines: string[] };
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
  deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'services' | 'environments' | 'variables' | 'deploymentGate' | 'wakeWorkers'>,
  records: ServiceRecords,
) {
  const { db, clock } = deps;
  const { requireService, neverActed, runtimeOf, statusView } = records;

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
  async function prepareAction(triggeredBy: string, service: StoredService, action: QueuedAction, input: DeployInput = {}): Promise<PreparedAction> {
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
      ...queuedRecord({ id: deploymentId, action, status: to, message, triggeredBy, jobId, now }),
      service_id: serviceId,
      git_commit_id: snapshot.git_commit_id,
      image_tag: snapshot.image_tag,
      settings_hash: prepared.settingsHash,
      variables_hash: snapshot.variables?.content_hash ?? null,
      snapshot: writeJson(snapshot),
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
  async function requestAction(triggeredBy: string, kind: ServiceKind, serviceId: string, action: QueuedAction, input: DeployInput = {}): Promise<StatusView> {
    // Other modules read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const service = await requireService(serviceId, kind);
    const prepared = await prepareAction(triggeredBy, service, action, input);
    const [runtime] = await writeActions(action, [prepared]);
    if (runtime === undefined) throw new Error(`no runtime written for service ${serviceId}`);
    return statusView(service, runtime);
  }

  /**
   * A user's deploy or redeploy of one service: with it, in the same transaction and in start order, the deploys of
   * the services its variables need that were never deployed. A needed service its user stopped stays stopped; the
   * deployment's message and log warn about it.
   */
  async function requestStartWithDependencies(triggeredBy: string, kind: ServiceKind, serviceId: string, action: 'deploy' | 'redeploy', input: DeployInput = {}) {
    const service = await requireService(serviceId, kind);
    const prepared = await prepareAction(triggeredBy, service, action, input);
    const { neverDeployed, stopped } = await dependenciesOf(deps, records, service);
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
    async requestEnvironmentServicesAction(environmentId: string, action: QueuedAction, triggeredBy: string, only?: readonly string[]) {
      const services = (await deps.services.listEnvironmentServices(environmentId))
        .filter((service) => only === undefined || only.includes(service.id))
        .sort(byStartOrder);
      const outcomes: Array<{ serviceId: string; name: string; action: QueuedAction | null; skipped?: string }> = [];
      for (const service of services) {
        const deployed = (await runtimeOf(db, service.id)).deployed_deployment_id !== null;
        const own: QueuedAction | null = action === 'deploy' || action === 'redeploy' ? (deployed ? 'redeploy' : 'deploy') : deployed ? action : null;
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
  };
}
