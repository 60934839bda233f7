import { conflict } from '../../lib/errors.ts';

/**
 * The cluster state machine (DESIGN.md §6). SPEC.md lists the states; the transitions are Slipway's, and this table
 * is the only place that moves a cluster from one state to another. A request for an action is legal only where
 * the table has it (else 409 naming the current state); the worker moves the state through the action's phases.
 *
 *   create ─▶ READY
 *   deploy/upgrade: DEPLOYMENT_QUEUED ─claim▶ BUILDING ─built▶ DEPLOYING ─▶ DEPLOYED | DRY_RUN (dry run)
 *                   failures: BUILDING ▶ BUILD_ERROR · DEPLOYING ▶ DEPLOYMENT_ERROR · credentials ▶ INVALID_CREDENTIALS
 *   stop:    STOP_QUEUED ─▶ STOPPING ─▶ STOPPED | STOP_ERROR
 *   restart: RESTART_QUEUED ─▶ RESTARTING ─▶ RESTARTED | RESTART_ERROR
 *   delete:  DELETE_QUEUED ─▶ DELETING ─▶ DELETED | DELETE_ERROR
 *   cancel:  a queued action ─▶ CANCELED at once; a deploy in BUILDING/DEPLOYING ─▶ CANCELING ─▶ CANCELED when the
 *            worker reaches its next step
 *
 * QUEUED is the generic "waiting" state of the original product. Slipway never puts a cluster there (each action
 * has its own queued state) but gives it a meaning so a row carrying it is never stuck: it admits deploy, delete
 * and cancel, like a freshly created cluster.
 */

export const CLUSTER_STATES = [
  'BUILDING',
  'BUILD_ERROR',
  'CANCELED',
  'CANCELING',
  'DELETED',
  'DELETE_ERROR',
  'DELETE_QUEUED',
  'DELETING',
  'DEPLOYED',
  'DEPLOYING',
  'DEPLOYMENT_ERROR',
  'DEPLOYMENT_QUEUED',
  'DRY_RUN',
  'QUEUED',
  'READY',
  'STOPPED',
  'STOPPING',
  'STOP_ERROR',
  'STOP_QUEUED',
  'RESTART_QUEUED',
  'RESTARTING',
  'RESTARTED',
  'RESTART_ERROR',
  'INVALID_CREDENTIALS',
] as const;
export type ClusterState = (typeof CLUSTER_STATES)[number];

/** What a user asks for. */
export type ClusterAction = 'deploy' | 'upgrade' | 'stop' | 'restart' | 'delete' | 'cancel';
/** What the worker reports while carrying an action out. */
export type ClusterProgress = 'claim' | 'built' | 'succeed' | 'dry_run_done' | 'fail' | 'credentials_fail' | 'cancel_done';
export type ClusterEvent = ClusterAction | ClusterProgress;

const AFTER_SUCCESS = { deploy: 'DEPLOYMENT_QUEUED', upgrade: 'DEPLOYMENT_QUEUED', stop: 'STOP_QUEUED', restart: 'RESTART_QUEUED', delete: 'DELETE_QUEUED' } as const;
const RECOVERABLE = { deploy: 'DEPLOYMENT_QUEUED', stop: 'STOP_QUEUED', delete: 'DELETE_QUEUED' } as const;

export const CLUSTER_TRANSITIONS: Readonly<Record<ClusterState, Partial<Record<ClusterEvent, ClusterState>>>> = {
  READY: { deploy: 'DEPLOYMENT_QUEUED', delete: 'DELETE_QUEUED' },
  QUEUED: { deploy: 'DEPLOYMENT_QUEUED', delete: 'DELETE_QUEUED', cancel: 'CANCELED' },

  DEPLOYMENT_QUEUED: { claim: 'BUILDING', cancel: 'CANCELED' },
  BUILDING: { built: 'DEPLOYING', fail: 'BUILD_ERROR', credentials_fail: 'INVALID_CREDENTIALS', cancel: 'CANCELING' },
  DEPLOYING: {
    succeed: 'DEPLOYED',
    dry_run_done: 'DRY_RUN',
    fail: 'DEPLOYMENT_ERROR',
    credentials_fail: 'INVALID_CREDENTIALS',
    cancel: 'CANCELING',
  },
  CANCELING: { cancel_done: 'CANCELED' },
  DEPLOYED: AFTER_SUCCESS,
  RESTARTED: AFTER_SUCCESS,
  DRY_RUN: RECOVERABLE,
  BUILD_ERROR: RECOVERABLE,
  DEPLOYMENT_ERROR: RECOVERABLE,
  INVALID_CREDENTIALS: RECOVERABLE,
  CANCELED: RECOVERABLE,

  STOP_QUEUED: { claim: 'STOPPING', cancel: 'CANCELED' },
  STOPPING: { succeed: 'STOPPED', fail: 'STOP_ERROR', credentials_fail: 'INVALID_CREDENTIALS' },
  STOPPED: { deploy: 'DEPLOYMENT_QUEUED', delete: 'DELETE_QUEUED' },
  STOP_ERROR: RECOVERABLE,

  RESTART_QUEUED: { claim: 'RESTARTING', cancel: 'CANCELED' },
  RESTARTING: { succeed: 'RESTARTED', fail: 'RESTART_ERROR', credentials_fail: 'INVALID_CREDENTIALS' },
  RESTART_ERROR: { ...RECOVERABLE, restart: 'RESTART_QUEUED' },

  DELETE_QUEUED: { claim: 'DELETING', cancel: 'CANCELED' },
  DELETING: { succeed: 'DELETED', fail: 'DELETE_ERROR', credentials_fail: 'DELETE_ERROR' },
  DELETE_ERROR: { deploy: 'DEPLOYMENT_QUEUED', delete: 'DELETE_QUEUED' },
  DELETED: {},
};

/** Stop, restart and upgrade act on running infrastructure: they also need the cluster to have been deployed. */
const NEEDS_DEPLOYED: ReadonlySet<ClusterAction> = new Set(['stop', 'restart', 'upgrade']);

export function transitionOf(state: ClusterState, event: ClusterEvent): ClusterState | undefined {
  return CLUSTER_TRANSITIONS[state][event];
}

/** The state an action request moves the cluster to, or a 409 that names the current state. */
export function requestedState(state: ClusterState, action: ClusterAction, isDeployed: boolean): ClusterState {
  const next = transitionOf(state, action);
  if (next === undefined) throw conflict(`cannot ${action} cluster: it is ${state}`);
  if (NEEDS_DEPLOYED.has(action) && !isDeployed) throw conflict(`cannot ${action} cluster: it has never been deployed (it is ${state})`);
  return next;
}

/** States in which some action is under way: the cluster waits for the worker. */
export function isInProgress(state: ClusterState): boolean {
  return state.endsWith('_QUEUED') || ['BUILDING', 'DEPLOYING', 'STOPPING', 'RESTARTING', 'DELETING', 'CANCELING', 'QUEUED'].includes(state);
}

export function isClusterState(value: string): value is ClusterState {
  return (CLUSTER_STATES as readonly string[]).includes(value);
}
