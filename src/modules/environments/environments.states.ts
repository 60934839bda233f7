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
