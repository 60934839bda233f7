import { conflict } from '../../lib/errors.ts';

/**
 * The environment state machine (issue 8, the service states of part 5). This table is the only place that moves an
 * environment from one state to another: a request for an action is legal only where the table has it (else 409
 * naming the current state), and the cluster's agent reports progress through the same table.
 *
 *   create ─▶ READY (never deployed)
 *   deploy, redeploy ─▶ QUEUED ─agent takes it▶ BUILDING ─built▶ DEPLOYING ─▶ DEPLOYED
 *                       failures: BUILDING ▶ BUILD_ERROR · DEPLOYING ▶ DEPLOYMENT_ERROR
 *   stop             ─▶ QUEUED ─agent takes it▶ STOPPING ─▶ STOPPED | STOP_ERROR
 *   restart          ─▶ QUEUED ─agent takes it▶ RESTARTING ─▶ RESTARTED | RESTART_ERROR
 *   cancel: QUEUED ─▶ CANCELED at once (its job is withdrawn); BUILDING/DEPLOYING ─▶ CANCELING ─▶ CANCELED when the
 *           agent reaches its next step
 *   delete: removes the environment, from any state in which no agent is working on it
 *
 * QUEUED is one state for every action: the deployment-history record says which action waits. Until the
 * cluster's agent (issue 9) takes the job, nothing leaves QUEUED except a cancel or a delete. DELETE_QUEUED,
 * DELETING, DELETED and DELETE_ERROR belong to services (part 2); an environment is removed at once.
 */

export const ENVIRONMENT_STATES = [
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
  'DELETING',
  'DELETE_ERROR',
  'DELETED',
] as const;
export type EnvironmentState = (typeof ENVIRONMENT_STATES)[number];

/** What a user asks for. */
export type EnvironmentAction = 'deploy' | 'redeploy' | 'stop' | 'restart' | 'cancel' | 'delete';
/** What the cluster's agent reports while carrying an action out. */
export type EnvironmentProgress = 'take_deploy' | 'take_stop' | 'take_restart' | 'built' | 'succeed' | 'fail' | 'cancel_done';
export type EnvironmentEvent = EnvironmentAction | EnvironmentProgress;

/** Actions that queue work for the agent; cancel and delete act at once. */
export type QueuedAction = Extract<EnvironmentAction, 'deploy' | 'redeploy' | 'stop' | 'restart'>;

/** After a settled outcome, everything may be asked again (stop and restart only of what was deployed). */
const SETTLED = { deploy: 'QUEUED', redeploy: 'QUEUED', stop: 'QUEUED', restart: 'QUEUED', delete: 'DELETED' } as const;

export const ENVIRONMENT_TRANSITIONS: Readonly<Record<EnvironmentState, Partial<Record<EnvironmentEvent, EnvironmentState>>>> = {
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

  DELETING: {},
  DELETE_ERROR: { delete: 'DELETED' },
  DELETED: {},
};

/** Redeploy, stop and restart act on what a previous deployment put on the cluster. */
const NEEDS_DEPLOYED: ReadonlySet<EnvironmentAction> = new Set(['redeploy', 'stop', 'restart']);

/** The event with which the agent takes a queued action. */
export const TAKE_EVENT: Record<QueuedAction, EnvironmentProgress> = {
  deploy: 'take_deploy',
  redeploy: 'take_deploy',
  stop: 'take_stop',
  restart: 'take_restart',
};

export function transitionOf(state: EnvironmentState, event: EnvironmentEvent): EnvironmentState | undefined {
  return ENVIRONMENT_TRANSITIONS[state][event];
}

/** The state an action request moves the environment to, or a 409 that names the current state. */
export function requestedState(state: EnvironmentState, action: EnvironmentAction, hasBeenDeployed: boolean): EnvironmentState {
  const next = transitionOf(state, action);
  if (next === undefined) throw conflict(`cannot ${action} environment: it is ${state}`);
  if (NEEDS_DEPLOYED.has(action) && !hasBeenDeployed) throw conflict(`cannot ${action} environment: it has never been deployed (it is ${state})`);
  return next;
}

export function isEnvironmentState(value: string): value is EnvironmentState {
  return (ENVIRONMENT_STATES as readonly string[]).includes(value);
}

/** States that end an action: its history record is finished. */
export function isSettled(state: EnvironmentState): boolean {
  return ['DEPLOYED', 'BUILD_ERROR', 'DEPLOYMENT_ERROR', 'STOPPED', 'STOP_ERROR', 'RESTARTED', 'RESTART_ERROR', 'CANCELED'].includes(state);
}
