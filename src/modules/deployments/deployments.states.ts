import type { Requester } from '../../auth/principal.ts';
import { HISTORY_ACTION, isDeploymentState, requestedStateOf, type DeploymentAction, type DeploymentState, type QueuedAction } from '../../engine/deployment-states.ts';

/**
 * Environments and services move through one deployment state machine (src/engine/deployment-states.ts: the table
 * of moves). This is the module's side of it: which subject a refusal names, and the state a stored row holds. A
 * service without a runtime row reads READY (deployments.service-records.ts).
 */

/** What a deployment is of: an environment's action (fanned out into its services') or a service's own. */
export type DeploymentSubject = 'environment' | 'service';

/** Actions that start workloads, and so cost money; a stop is always allowed. */
export const COSTS_MONEY: ReadonlySet<QueuedAction> = new Set(['deploy', 'redeploy', 'restart']);

/** The state an action request moves the subject to, or a 409 that names the subject and its current state. */
export function requestedState(subject: DeploymentSubject, state: DeploymentState, action: DeploymentAction, hasBeenDeployed: boolean): DeploymentState {
  return requestedStateOf(subject, state, action, hasBeenDeployed);
}

/** The state a row holds; a status the machine does not know is a corrupt row, not a caller's error. */
export function stateOf(subject: DeploymentSubject, id: string, status: string): DeploymentState {
  if (!isDeploymentState(status)) throw new Error(`${subject} ${id} holds an unknown status ${status}`);
  return status;
}

/** How long a deployment took in seconds: until it finished, or until now while it runs or waits. */
export function durationSeconds(record: { created_at: string; finished_at: string | null }, now: Date): number {
  const end = record.finished_at === null ? now.getTime() : new Date(record.finished_at).getTime();
  return Math.max(0, (end - new Date(record.created_at).getTime()) / 1000);
}

/**
 * What every deployment record holds when its action is queued, an environment's and a service's alike: among it who
 * asked and from where (a service's deployment fanned out from an environment's carries that one's requester).
 */
export function queuedRecord(input: { id: string; action: QueuedAction; status: DeploymentState; message: string; requester: Requester; jobId: string; now: string }) {
  return {
    id: input.id,
    action: HISTORY_ACTION[input.action],
    status: input.status,
    message: input.message,
    origin: input.requester.origin,
    triggered_by: input.requester.name,
    job_id: input.jobId,
    created_at: input.now,
    updated_at: input.now,
    finished_at: null,
  };
}
