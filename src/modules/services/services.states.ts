import { conflict } from '../../lib/errors.ts';

/**
 * The service state machine (issue 8 part 5). This table is the only place that moves a service from one state to
 * another: a user's action request is legal only where the table has it (else 409 naming the current state), and
 * the cluster's agent (issue 9) reports its progress through the same table (recordServiceProgress).
 *
 *   create ─▶ READY (never deployed; a service without a runtime row reads READY)
 *   deploy, redeploy ─▶ QUEUED ─agent takes it▶ BUILDING ─built▶ DEPLOYING ─▶ DEPLOYED
 *                       failures: BUILDING ▶ BUILD_ERROR · DEPLOYING ▶ DEPLOYMENT_ERROR
 *   stop             ─▶ QUEUED ─agent takes it▶ STOPPING ─▶ STOPPED | STOP_ERROR
 *   restart          ─▶ QUEUED ─agent takes it▶ RESTARTING ─▶ RESTARTED | RESTART_ERROR
 *   cancel: QUEUED ─▶ CANCELED at once (its job is withdrawn); BUILDING/DEPLOYING ─▶ CANCELING ─▶ CANCELED when the
 *           agent reaches its next step
 *   delete: from any state in which no agent is working on it ─▶ DELETED: the service row goes at once and, when a
 *           workload may exist, a teardown job tells the agent to remove it (docs/service-deployments.md)
 *
 * QUEUED is one state for every action: the deployment record says which action waits. Until the cluster's agent
 * takes the job, nothing leaves QUEUED except a cancel or a delete.
 */

export const SERVICE_STATES = [
  'READY',
  'QUEUED',
  'BUILDING',
  'BUILD_ERROR',
  'DEPLOYING',
  'DEPLOYMENT_ERROR',
  'DEPLOYED',
  'STOPPING',
  'STOP_ERROR',
  'STOPPED',
  'RESTARTING',
  'RESTART_ERROR',
  'RESTARTED',
  'CANCELING',
  'CANCELED',
  'DELETED',
] as const;
export type ServiceState = (typeof SERVICE_STATES)[number];

/** What a user asks for. */
export type ServiceAction = 'deploy' | 'redeploy' | 'stop' | 'restart' | 'cancel' | 'delete';
/** What the cluster's agent reports while carrying an action out. */
export type ServiceProgress = 'take_deploy' | 'take_stop' | 'take_restart' | 'built' | 'succeed' | 'fail' | 'cancel_done';
export type ServiceEvent = ServiceAction | ServiceProgress;

/** Actions that queue work for the agent; cancel and delete act at once. */
export type QueuedServiceAction = Extract<ServiceAction, 'deploy' | 'redeploy' | 'stop' | 'restart'>;

/** After a settled outcome, everything may be asked again (stop and restart only of what was deployed). */
const SETTLED = { deploy: 'QUEUED', redeploy: 'QUEUED', stop: 'QUEUED', restart: 'QUEUED', delete: 'DELETED' } as const;

export const SERVICE_TRANSITIONS: Readonly<Record<ServiceState, Partial<Record<ServiceEvent, ServiceState>>>> = {
  READY: { deploy: 'QUEUED', delete: 'DELETED' },
  QUEUED: { take_deploy: 'BUILDING', take_stop: 'STOPPING', take_restart: 'RESTARTING', cancel: 'CANCELED', delete: 'DELETED' },

  BUILDING: { built: 'DEPLOYING', fail: 'BUILD_ERROR', cancel: 'CANCELING' },
  DEPLOYING: { succeed: 'DEPLOYED', fail: 'DEPLOYMENT_ERROR', cancel: 'CANCELING' },
  CANCELING: { cancel_done: 'CANCELED' },
  DEPLOYED: SETTLED,
  BUILD_ERROR: SETTLED,
  DEPLOYMENT_ERROR: SETTLED,
  CANCELED: SETTLED,

  STOPPING: { succeed: 'STOPPED', fail: 'STOP_ERROR' },
  STOPPED: { deploy: 'QUEUED', redeploy: 'QUEUED', delete: 'DELETED' },
  STOP_ERROR: SETTLED,

  RESTARTING: { succeed: 'RESTARTED', fail: 'RESTART_ERROR' },
  RESTARTED: SETTLED,
  RESTART_ERROR: SETTLED,

  DELETED: {},
};

/** Redeploy, stop and restart act on what a previous deployment put on the cluster. */
const NEEDS_DEPLOYED: ReadonlySet<ServiceAction> = new Set(['redeploy', 'stop', 'restart']);

/** The event with which the agent takes a queued action. */
export const TAKE_EVENT: Record<QueuedServiceAction, ServiceProgress> = {
  deploy: 'take_deploy',
  redeploy: 'take_deploy',
  stop: 'take_stop',
  restart: 'take_restart',
};

export function transitionOf(state: ServiceState, event: ServiceEvent): ServiceState | undefined {
  return SERVICE_TRANSITIONS[state][event];
}

/** The state an action request moves the service to, or a 409 that names the current state. */
export function requestedState(state: ServiceState, action: ServiceAction, hasBeenDeployed: boolean): ServiceState {
  const next = transitionOf(state, action);
  if (next === undefined) throw conflict(`cannot ${action} service: it is ${state}`);
  if (NEEDS_DEPLOYED.has(action) && !hasBeenDeployed) throw conflict(`cannot ${action} service: it has never been deployed (it is ${state})`);
  return next;
}

export function isServiceState(value: string): value is ServiceState {
  return (SERVICE_STATES as readonly string[]).includes(value);
}

/** States that end an action: its deployment record is finished, and a live log stream of it ends. */
export function isSettled(state: ServiceState): boolean {
  return ['DEPLOYED', 'BUILD_ERROR', 'DEPLOYMENT_ERROR', 'STOPPED', 'STOP_ERROR', 'RESTARTED', 'RESTART_ERROR', 'CANCELED', 'DELETED'].includes(state);
}

/** The reference's ServiceActionStatusEnum / DeploymentHistoryActionStatus of a state. */
export function actionStatusOf(state: ServiceState): 'QUEUED' | 'ONGOING' | 'SUCCESS' | 'ERROR' | 'CANCELED' | 'CANCELING' | 'NEVER' {
  switch (state) {
    case 'QUEUED':
      return 'QUEUED';
    case 'BUILDING':
    case 'DEPLOYING':
    case 'STOPPING':
    case 'RESTARTING':
      return 'ONGOING';
    case 'DEPLOYED':
    case 'STOPPED':
    case 'RESTARTED':
    case 'DELETED':
      return 'SUCCESS';
    case 'BUILD_ERROR':
    case 'DEPLOYMENT_ERROR':
    case 'STOP_ERROR':
    case 'RESTART_ERROR':
      return 'ERROR';
    case 'CANCELED':
      return 'CANCELED';
    case 'CANCELING':
      return 'CANCELING';
    case 'READY':
      return 'NEVER';
  }
}
