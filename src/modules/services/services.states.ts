import {
  DEPLOYMENT_STATES,
  DEPLOYMENT_TRANSITIONS,
  isDeploymentState,
  requestedStateOf,
  type DeploymentAction,
  type DeploymentEvent,
  type DeploymentProgress,
  type DeploymentState,
  type QueuedAction,
} from '../../engine/deployment-states.ts';

/**
 * Services move through the deployment state machine they share with environments (src/engine/deployment-states.ts);
 * a service without a runtime row reads READY. Deleting one leaves a teardown job for the agent when a workload may
 * exist (docs/service-deployments.md).
 */
export { actionStatusOf, isSettled, TAKE_EVENT, transitionOf } from '../../engine/deployment-states.ts';

export const SERVICE_STATES = DEPLOYMENT_STATES;
export const SERVICE_TRANSITIONS = DEPLOYMENT_TRANSITIONS;
export type ServiceState = DeploymentState;
export type ServiceAction = DeploymentAction;
export type ServiceProgress = DeploymentProgress;
export type ServiceEvent = DeploymentEvent;
export type QueuedServiceAction = QueuedAction;

export const isServiceState = isDeploymentState;

/** The state an action request moves the service to, or a 409 that names the current state. */
export function requestedState(state: ServiceState, action: ServiceAction, hasBeenDeployed: boolean): ServiceState {
  return requestedStateOf('service', state, action, hasBeenDeployed);
}
