import type { Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { conflict } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { writeLogLines } from './deployments.logs.ts';
import { findRuntime, findServiceDeployment, updateRuntimeInStatus, type ServiceRuntimeRow } from './deployments.repo.ts';
import { NO_WORKLOAD_HEALTH, serviceStateOf, type ServiceRecords, type StatusView } from './deployments.service-records.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { requestedState } from './deployments.states.ts';
import { queueServiceTeardown } from './deployments.workloads.ts';

/**
 * Uninstalling a service (the reference's uninstall<Kind> operations, docs/service-clone-uninstall.md): what it runs
 * on its cluster goes, the service stays — its record, settings, variables, domains and deployment history — and
 * reads READY, never deployed, until a deploy brings it back.
 *
 * One transaction, like a delete's but keeping the row: the state machine must allow `uninstall` (any settled state;
 * 409 while an action is queued or an agent works on the service: cancel or wait first), the teardown of what the
 * service's newest deployment put on the cluster is queued for the cluster's agent (the deleted service's teardown
 * job, deployments.workloads.ts), and the service's runtime moves to READY with no deployment. The teardown job shares
 * the service's serial key, so a deploy requested afterwards reaches the agent only once the teardown ended. The
 * uninstall is written into the log of the deployment it removed, with who asked for it.
 */

export interface UninstallOptions {
  /**
   * Leave what runs on the cluster where it is (a Terraform service's `force_terraform_action=SKIP_DESTROY`: its
   * infrastructure is not destroyed): the service still reads READY, never deployed.
   */
  skipTeardown?: boolean | undefined;
}

/** What an uninstall did inside its transaction, for what follows the commit. */
export interface UninstallOutcome {
  runtime: ServiceRuntimeRow;
  /** False when there was nothing to uninstall (never deployed): nothing changed. */
  uninstalled: boolean;
  /** The teardown job queued for the agent; undefined when nothing was put on a cluster, or the teardown was skipped. */
  teardownJobId: string | undefined;
}

export function createServiceUninstall(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'metering' | 'wakeWorkers' | 'stateChanges'>, records: ServiceRecords) {
  const { db, clock } = deps;

  /**
   * Uninstalls the service inside the caller's transaction (an environment's uninstall runs it for each of its
   * services in its own). Call `serviceUninstalled` with the outcome once that transaction committed.
   */
  async function uninstallServiceIn(trx: Transaction<DB>, serviceId: string, triggeredBy: string, options: UninstallOptions = {}): Promise<UninstallOutcome> {
    const existing = await findRuntime(trx, serviceId);
    if (existing === undefined) return { runtime: records.neverActed(serviceId), uninstalled: false, teardownJobId: undefined };
    const from = serviceStateOf(existing);
    requestedState('service', from, 'uninstall', existing.deployed_deployment_id !== null);
    // What runs is the running deployment's; without one, a failed first deploy may still have left something there.
    const removedId = existing.deployed_deployment_id ?? existing.last_deployment_id;
    const removed = removedId === null ? undefined : await findServiceDeployment(trx, removedId);
    if (removed === undefined && from === 'READY') return { runtime: existing, uninstalled: false, teardownJobId: undefined };
    const tearDown = removed !== undefined && options.skipTeardown !== true;
    const teardownJobId = tearDown ? await queueServiceTeardown(trx, clock, removed) : undefined;
    if (removed !== undefined) {
      const what = tearDown ? "the cluster's agent removes what this deployment put there" : 'what this deployment put on the cluster is left there (skip destroy)';
      await writeLogLines(trx, clock, removed.id, [{ stream: 'system', message: `uninstall requested by ${triggeredBy}: ${what}` }]);
    }
    const changes = { status: 'READY', last_deployment_id: null, deployed_deployment_id: null, ...NO_WORKLOAD_HEALTH, updated_at: clock.now().toISOString() };
    if (!(await updateRuntimeInStatus(trx, serviceId, from, changes))) throw conflict('cannot uninstall service: its state changed meanwhile; read it again');
    await deps.stateChanges?.serviceChanged(trx, serviceId);
    return { runtime: { ...existing, ...changes }, uninstalled: true, teardownJobId };
  }

  /** After an uninstall committed: the service's metered running time ends, and the worker takes the teardown. */
  async function serviceUninstalled(serviceId: string, outcome: UninstallOutcome): Promise<void> {
    if (!outcome.uninstalled) return;
    await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at: clock.now().toISOString() });
    if (outcome.teardownJobId !== undefined) deps.wakeWorkers?.();
  }

  /**
   * The reference's uninstall<Kind>: 404 unless the id names a service of that kind, 409 while an action on it is
   * queued or under way. Answers the service's status after it (READY, NEVER_DEPLOYED).
   */
  async function uninstallService(kind: ServiceKind, serviceId: string, triggeredBy: string, options: UninstallOptions = {}): Promise<StatusView> {
    const service = await records.requireService(serviceId, kind);
    const outcome = await db.transaction().execute((trx) => uninstallServiceIn(trx, serviceId, triggeredBy, options));
    await serviceUninstalled(serviceId, outcome);
    return records.statusView(service, outcome.runtime);
  }

  return { uninstallService, uninstallServiceIn, serviceUninstalled };
}
