import {
  DEPLOYMENT_STATES,
  DEPLOYMENT_TRANSITIONS,
  isDeploymentState,
  requestedStateOf,
  type DeploymentAction,
  type DeploymentEvent,
  type DeploymentProgress,
  type DeploymentState,
} from '../../engine/deployment-states.ts';

/** Environments move through the deployment state machine they share with services (src/engine/deployment-states.ts). */
export { actionStatusOf, isSettled, TAKE_EVENT, transitionOf, type QueuedAction } from '../../engine/deployment-states.ts';

export const ENVIRONMENT_STATES = DEPLOYMENT_STATES;
export const ENVIRONMENT_TRANSITIONS = DEPLOYMENT_TRANSITIONS;
export type EnvironmentState = DeploymentState;
export type EnvironmentAction = DeploymentAction;
export type EnvironmentProgress = DeploymentProgress;
export type EnvironmentEvent = DeploymentEvent;

export const isEnvironmentState = isDeploymentState;

/** The state an action request moves the environment to, or a 409 that names the current state. */
export function requestedState(state: EnvironmentState, action: EnvironmentAction, hasBeenDeployed: boolean): EnvironmentState {
  return requestedStateOf('environment', state, action, hasBeenDeployed);
}

/** The state a row holds; a status the machine does not know is a corrupt row, not a caller's error. */
export function stateOf(row: { id: string; status: string }): EnvironmentState {
  if (!isEnvironmentState(row.status)) throw new Error(`environment ${row.id} holds an unknown status ${row.status}`);
  return row.status;
}
