import type { Queryable } from '../../db/db.schema.ts';

/**
 * The event-publishing port. Modules whose resources move through state machines call `publish` inside the
 * transaction that makes the change, with that transaction: the webhooks module enqueues the deliveries there, so a
 * committed change always has its deliveries and a rolled-back one never does.
 */
export const WEBHOOK_EVENT_TYPES = [
  'DEPLOYMENT_STARTED',
  'DEPLOYMENT_SUCCESSFUL',
  'DEPLOYMENT_FAILURE',
  'DEPLOYMENT_CANCELLED',
  // Each entry of the audit log (docs/audit-log.md), published once its request is answered.
  'ORGANIZATION_EVENT',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface PublishedEvent {
  organizationId: string;
  type: WebhookEventType;
  /** CLUSTER or ENVIRONMENT for deployment events; an organization event's target type (PROJECT, …) for those. */
  resource: { type: string; id: string; name: string };
  /** Where the event comes from, for the webhooks' project and environment-mode filters (absent for clusters). */
  project?: { id: string; name: string };
  environmentMode?: string;
  data: Record<string, unknown>;
}

export interface EventPublisher {
  /** Answers how many deliveries it queued: none when no enabled webhook subscribes, and then no worker need wake. */
  publish(executor: Queryable, event: PublishedEvent): Promise<number>;
}

export const NO_EVENTS: EventPublisher = { publish: async () => 0 };

const CLUSTER_DEPLOY_WORK: ReadonlySet<string> = new Set(['BUILDING', 'DEPLOYING', 'CANCELING', 'DEPLOYMENT_QUEUED']);

/**
 * The deployment event a cluster state change is, if any: a deploy starts when the worker claims it (→ BUILDING),
 * succeeds in DEPLOYED or DRY_RUN, fails in an error state reached from its work, and is cancelled in CANCELED.
 */
export function clusterDeploymentEvent(from: string, to: string): WebhookEventType | undefined {
  if (to === 'BUILDING') return 'DEPLOYMENT_STARTED';
  if (!CLUSTER_DEPLOY_WORK.has(from)) return undefined;
  if (to === 'DEPLOYED' || to === 'DRY_RUN') return 'DEPLOYMENT_SUCCESSFUL';
  if (to === 'BUILD_ERROR' || to === 'DEPLOYMENT_ERROR' || to === 'INVALID_CREDENTIALS') return 'DEPLOYMENT_FAILURE';
  if (to === 'CANCELED') return 'DEPLOYMENT_CANCELLED';
  return undefined;
}

/** Publishes the deployment event of a cluster's move from `from` to `to`, when it is one. */
export async function publishClusterTransition(
  events: EventPublisher,
  executor: Queryable,
  cluster: { id: string; organization_id: string; name: string },
  from: string,
  to: string,
  message: string | null | undefined,
): Promise<void> {
  const type = clusterDeploymentEvent(from, to);
  if (type === undefined) return;
  await events.publish(executor, {
    organizationId: cluster.organization_id,
    type,
    resource: { type: 'CLUSTER', id: cluster.id, name: cluster.name },
    data: { status: to, previous_status: from, message: message ?? null },
  });
}

/** Where an environment or a service lives, for the webhooks' project and environment-mode filters. */
export interface DeploymentEventSource {
  organizationId: string;
  resource: { type: 'ENVIRONMENT' | 'SERVICE'; id: string; name: string };
  project: { id: string; name: string };
  environmentMode: string;
  /** The kind of a service (APPLICATION, DATABASE, …), carried in the event's data. */
  serviceKind?: string;
}

/**
 * The deployment event an environment's or a service's move is, if any (the shared deployment state machine): only
 * deploy and redeploy actions are deployments. One starts when the agent takes it (→ BUILDING), succeeds in
 * DEPLOYED, fails in BUILD_ERROR or DEPLOYMENT_ERROR, and is cancelled in CANCELED (queued or under way).
 */
export function deploymentTransitionEvent(action: string, to: string): WebhookEventType | undefined {
  const kind = action.toLowerCase();
  if (kind !== 'deploy' && kind !== 'redeploy') return undefined;
  if (to === 'BUILDING') return 'DEPLOYMENT_STARTED';
  if (to === 'DEPLOYED') return 'DEPLOYMENT_SUCCESSFUL';
  if (to === 'BUILD_ERROR' || to === 'DEPLOYMENT_ERROR') return 'DEPLOYMENT_FAILURE';
  if (to === 'CANCELED') return 'DEPLOYMENT_CANCELLED';
  return undefined;
}

/** Publishes the deployment event of an environment's or service's move, when it is one, in the move's transaction. */
export async function publishDeploymentTransition(
  events: EventPublisher,
  executor: Queryable,
  source: DeploymentEventSource,
  move: { action: string; deploymentId: string; from: string; to: string; message: string | null | undefined },
): Promise<void> {
  const type = deploymentTransitionEvent(move.action, move.to);
  if (type === undefined) return;
  await events.publish(executor, {
    organizationId: source.organizationId,
    type,
    resource: source.resource,
    project: source.project,
    environmentMode: source.environmentMode,
    data: {
      status: move.to,
      previous_status: move.from,
      message: move.message ?? null,
      deployment_id: move.deploymentId,
      ...(source.serviceKind === undefined ? {} : { service_type: source.serviceKind }),
    },
  });
}
