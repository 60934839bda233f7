import { conflict } from '../lib/errors.ts';

/**
 * The deployment state machine of environments and services (issue 8 part 5): one table, the only place that moves
 * either from one state to another. A user's action request is legal only where the table has it (else 409 naming
 * the current state), and the cluster's agent reports its progress through the same table (docs/agent-protocol.md).
 *
 *   create ─▶ READY (never deployed)
 *   deploy, redeploy ─▶ QUEUED ─agent takes it▶ BUILDING ─built▶ DEPLOYING ─▶ DEPLOYED
 *                       failures: BUILDING ▶ BUILD_ERROR · DEPLOYING ▶ DEPLOYMENT_ERROR
 *   stop             ─▶ QUEUED ─agent takes it▶ STOPPING ─▶ STOPPED | STOP_ERROR
 *   restart          ─▶ QUEUED ─agent takes it▶ RESTARTING ─▶ RESTARTED | RESTART_ERROR
 *   cancel: QUEUED ─▶ CANCELED at once (its job is withdrawn); BUILDING/DEPLOYING ─▶ CANCELING ─▶ CANCELED when the
 *           agent reaches its next step
 *   delete: from any state in which no agent is working on it ─▶ DELETED (the row goes at once; a service that may
 *           have a workload leaves a teardown job for the agent)
 *   uninstall: from any settled state ─▶ READY at once, never deployed again until a deploy (the service's record
 *           stays; what it ran is left to a teardown job for the agent: deployments.uninstall.ts)
 *
 * QUEUED is one state for every action: the deployment record says which action waits. Until the cluster's agent
 * takes the job, nothing leaves QUEUED except a cancel or a delete. DELETING and DELETE_ERROR are the reference's
 * states; nothing moves into them here (deletion is immediate), so they only ever allow a delete.
 */

export const DEPLOYMENT_STATES = [
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
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

/** What a user asks for. */
export type DeploymentAction = 'deploy' | 'redeploy' | 'stop' | 'restart' | 'cancel' | 'delete' | 'uninstall';
/** What the cluster's agent reports while carrying an action out. */
export type DeploymentProgress = 'take_deploy' | 'take_stop' | 'take_restart' | 'built' | 'succeed' | 'fail' | 'cancel_done';
export type DeploymentEvent = DeploymentAction | DeploymentProgress;

/** Actions that queue work for the agent; cancel, delete and uninstall act at once. */
export const QUEUED_ACTIONS = ['deploy', 'redeploy', 'stop', 'restart'] as const satisfies readonly DeploymentAction[];
export type QueuedAction = (typeof QUEUED_ACTIONS)[number];

/**
 * How a deployed workload runs between deployments, as its cluster's agent reports it (docs/agent-protocol.md):
 * RUNNING, RESTARTING after a crash, FAILED once its supervisor gave up.
 */

/** The actions that start a workload: an application started by one needs its databases up first. */
export const STARTING_ACTIONS: readonly QueuedAction[] = ['deploy', 'redeploy', 'restart'];

/** After a settled outcome, everything may be asked again (stop and restart only of what was deployed). */
const SETTLED = { deploy: 'QUEUED', redeploy: 'QUEUED', stop: 'QUEUED', restart: 'QUEUED', delete: 'DELETED', uninstall: 'READY' } as const;

export const DEPLOYMENT_TRANSITIONS: Readonly<Record<DeploymentState, Partial<Record<DeploymentEvent, DeploymentState>>>> = {
  READY: { deploy: 'QUEUED', delete: 'DELETED', uninstall: 'READY' },
  QUEUED: { take_deploy: 'BUILDING', take_stop: 'STOPPING', take_restart: 'RESTARTING', cancel: 'CANCELED', delete: 'DELETED' },

  BUILDING: { built: 'DEPLOYING', fail: 'BUILD_ERROR', cancel: 'CANCELING' },
  DEPLOYING: { succeed: 'DEPLOYED', fail: 'DEPLOYMENT_ERROR', cancel: 'CANCELING' },
  CANCELING: { cancel_done: 'CANCELED' },
  DEPLOYED: SETTLED,
  BUILD_ERROR: SETTLED,
  DEPLOYMENT_ERROR: SETTLED,
  CANCELED: SETTLED,

  STOPPING: { succeed: 'STOPPED', fail: 'STOP_ERROR' },
  STOPPED: { deploy: 'QUEUED', redeploy: 'QUEUED', delete: 'DELETED', uninstall: 'READY' },
  STOP_ERROR: SETTLED,

  RESTARTING: { succeed: 'RESTARTED', fail: 'RESTART_ERROR' },
  RESTARTED: SETTLED,
  RESTART_ERROR: SETTLED,

  DELETING: {},
  DELETE_ERROR: { delete: 'DELETED' },
  DELETED: {},
};

/** Redeploy, stop and restart act on what a previous deployment put on the cluster. */
const NEEDS_DEPLOYED: ReadonlySet<DeploymentAction> = new Set(['redeploy', 'stop', 'restart']);

/** The event with which the agent takes a queued action. */
export const TAKE_EVENT: Record<QueuedAction, DeploymentProgress> = {
  deploy: 'take_deploy',
  redeploy: 'take_deploy',
  stop: 'take_stop',
  restart: 'take_restart',
};

export function transitionOf(state: DeploymentState, event: DeploymentEvent): DeploymentState | undefined {
  return DEPLOYMENT_TRANSITIONS[state][event];
}

/**
 * Why a subject in `state` refuses `action` ("is BUILDING", "has never been deployed (it is READY)"), or undefined
 * when it may take it: what a 409 says of one subject, and of each subject of a request naming several.
 */
export function refusalOf(state: DeploymentState, action: DeploymentAction, hasBeenDeployed: boolean): string | undefined {
  // Never deployed says why first: a READY service refuses a stop because nothing of it runs, not because of READY.
  if (NEEDS_DEPLOYED.has(action) && !hasBeenDeployed) return `has never been deployed (it is ${state})`;
  if (transitionOf(state, action) === undefined) return `is ${state}`;
  return undefined;
}

/** The state an action request moves an environment or a service to, or a 409 that names the current state. */
export function requestedStateOf(noun: 'environment' | 'service', state: DeploymentState, action: DeploymentAction, hasBeenDeployed: boolean): DeploymentState {
  const refusal = refusalOf(state, action, hasBeenDeployed);
  const next = transitionOf(state, action);
  if (refusal !== undefined || next === undefined) throw conflict(`cannot ${action} ${noun}: it ${refusal ?? `is ${state}`}`);
  return next;
}

export function isDeploymentState(value: string): value is DeploymentState {
  return (DEPLOYMENT_STATES as readonly string[]).includes(value);
}

/** States that end an action: its deployment record is finished, and a live log stream of it ends. */
export function isSettled(state: DeploymentState): boolean {
  return ['DEPLOYED', 'BUILD_ERROR', 'DEPLOYMENT_ERROR', 'STOPPED', 'STOP_ERROR', 'RESTARTED', 'RESTART_ERROR', 'CANCELED', 'DELETED'].includes(state);
}

/** The reference's ServiceActionStatusEnum / DeploymentHistoryActionStatus of a state. */
export function actionStatusOf(state: DeploymentState): 'QUEUED' | 'ONGOING' | 'SUCCESS' | 'ERROR' | 'CANCELED' | 'CANCELING' | 'NEVER' {
  switch (state) {
    case 'QUEUED':
      return 'QUEUED';
    case 'BUILDING':
    case 'DEPLOYING':
    case 'STOPPING':
    case 'RESTARTING':
    case 'DELETING':
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
    case 'DELETE_ERROR':
      return 'ERROR';
    case 'CANCELED':
      return 'CANCELED';
    case 'CANCELING':
      return 'CANCELING';
    case 'READY':
      return 'NEVER';
  }
}

/** How a deployment record stores the action it carries out. */
export const HISTORY_ACTION: Record<QueuedAction, 'DEPLOY' | 'REDEPLOY' | 'STOP' | 'RESTART'> = {
  deploy: 'DEPLOY',
  redeploy: 'REDEPLOY',
  stop: 'STOP',
  restart: 'RESTART',
};

/** The reference's ServiceActionEnum / DeploymentHistoryTriggerAction of a stored action (a redeploy is a deploy). */
export function wireAction(action: string): 'DEPLOY' | 'STOP' | 'RESTART' {
  if (action === 'STOP' || action === 'RESTART') return action;
  return 'DEPLOY';
}

/** The queued action a stored action stands for. */
export function queuedActionOf(action: string): QueuedAction {
  if (action === 'STOP') return 'stop';
  if (action === 'RESTART') return 'restart';
  return action === 'REDEPLOY' ? 'redeploy' : 'deploy';
}

/** What a queued action's status says until the cluster's agent takes it. */
export function waitingMessage(action: QueuedAction): string {
  return `${action} queued: waiting for the cluster's agent to take it`;
}

/** What a deployment record tells the reference's Status: when and by which request, and what it did. */
export interface StatusRecord {
  id: string;
  created_at: string;
  job_id: string;
  action: string;
  message: string | null;
}

/**
 * The reference's service-shaped `Status`, one for services and the environment actions that answer with it
 * (deployEnvironment, rebootServices): the subject's state and the newest deployment record.
 */
export function referenceStatus<DeploymentStatus extends string>(id: string, state: DeploymentState, deploymentStatus: DeploymentStatus, last: StatusRecord | undefined) {
  return {
    id,
    state,
    service_deployment_status: deploymentStatus,
    ...(last === undefined ? {} : { last_deployment_date: last.created_at, execution_id: last.job_id }),
    is_part_last_deployment: last !== undefined,
    status_details: {
      action: last === undefined ? ('DEPLOY' as const) : wireAction(last.action),
      status: actionStatusOf(state),
      sub_action: 'NONE' as const,
    },
    deployment_request_id: last?.id ?? null,
    deployment_requests_count: state === 'QUEUED' ? 1 : 0,
  };
}
