import type { Grant } from '../../auth/permissions.ts';
import type { Placement, Principal } from '../../auth/principal.ts';
import type { PolicyInput } from '../../http/policy-input.ts';
import type { PolicyVerdict } from '../../policy/policy.engine.ts';
import type { OrganizationChange, OrganizationChanges } from './organization-changes.signals.ts';

export interface OrganizationChangesDeps {
  changes: Pick<OrganizationChanges, 'subscribe'>;
  /** What the caller may do where a resource lives (the authorizer's own rule); undefined: nothing there. */
  grantsAt(principal: Principal, placement: Placement): Promise<ReadonlySet<Grant> | undefined>;
  /** Where a service or an environment lives (the authorizer's placements); undefined once it is gone. */
  placementOf: { service(serviceId: string): Promise<Placement | undefined>; environment(environmentId: string): Promise<Placement | undefined> };
  /** A policy token's policy, asked as the authorizer asks it. */
  policyVerdict(tokenId: string, input: PolicyInput): Promise<PolicyVerdict>;
  /** How often a quiet stream says it is alive (15 s unless given): proxies cut idle connections. */
  heartbeatMs?: number | undefined;
}

/** The reader of an organization's stream: the HTTP plumbing (organization-changes.routes.ts). */
export interface ChangeReader {
  /** Aborted when the reader left (or the server shuts down). */
  signal: AbortSignal;
  /** The stream is valid and about to follow. */
  opened(): void;
  emit(change: OrganizationChange): Promise<void>;
  heartbeat(): Promise<void>;
}

/** Why a stream ended by itself: change signals were missed, so its reader reads everything again and reconnects. */
export type ChangeStreamEnd = 'missed';

/**
 * An organization's "look again" stream (issue 20): each change of a service, an environment or a cluster of the
 * organization that the caller may read where it lives, as ids; a heartbeat while nothing changes. The process
 * listens to the change signals once and fans them out per organization. What the caller may read is decided per
 * change, as the resource's own GET decides it: a custom role (docs/roles.md) by the environment's project and type
 * (and by the cluster for a cluster), a policy token by its policy asked about the GET of the project (or of the
 * cluster). Nothing is cached, so a changed role or membership holds from the next change on.
 */
export function createOrganizationChangesService(deps: OrganizationChangesDeps) {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const followers = new Map<string, Set<(change: OrganizationChange | undefined) => void>>();

  deps.changes.subscribe((organizationId, change) => {
    const organizations = organizationId === undefined ? [...followers.keys()] : [organizationId];
    for (const id of organizations) for (const follower of [...(followers.get(id) ?? [])]) follower(change);
  });

  function follow(organizationId: string, follower: (change: OrganizationChange | undefined) => void): () => void {
    const set = followers.get(organizationId) ?? new Set();
    followers.set(organizationId, set);
    set.add(follower);
    return () => {
      set.delete(follower);
      if (set.size === 0) followers.delete(organizationId);
    };
  }

  /** What a policy token's policy sees for the GET that reads what changed. */
  function readingInput(principal: Extract<Principal, { kind: 'policy_token' }>, organizationId: string, change: OrganizationChange, projectId: string | undefined): PolicyInput | undefined {
    const token = { id: principal.tokenId, name: principal.tokenName };
    const common = { method: 'GET', query: {}, body: null, organization_id: organizationId, token };
    if (change.type === 'cluster') {
      const params = { organizationId, clusterId: change.id };
      return { ...common, path: ['organization', organizationId, 'cluster', change.id], route: '/organization/{organizationId}/cluster/{clusterId}', operation_id: 'getCluster', params };
    }
    if (projectId === undefined) return undefined;
    return { ...common, path: ['project', projectId], route: '/project/{projectId}', operation_id: 'getProject', params: { projectId } };
  }

  async function placementOfChange(organizationId: string, change: OrganizationChange): Promise<Placement | undefined> {
    if (change.type === 'cluster') return { organizationId, clusterId: change.id };
    // A deleted service has no placement any more: it is read where it lived, its environment (which the signal names).
    const placement =
      change.type === 'service'
        ? ((await deps.placementOf.service(change.id)) ?? (change.environment_id === undefined ? undefined : await deps.placementOf.environment(change.environment_id)))
        : await deps.placementOf.environment(change.id);
    return placement?.organizationId === organizationId ? placement : undefined;
  }

  async function mayRead(principal: Principal, organizationId: string, change: OrganizationChange): Promise<boolean> {
    const placement = await placementOfChange(organizationId, change);
    if (placement === undefined) return false;
    const grants = await deps.grantsAt(principal, placement);
    if (grants?.has('read') !== true) return false;
    if (principal.kind !== 'policy_token') return true;
    const input = readingInput(principal, organizationId, change, placement.projectId);
    return input !== undefined && (await deps.policyVerdict(principal.tokenId, input)).allow;
  }

  return {
    /**
     * Follows the organization's changes for `principal` (already allowed to read the organization) until the reader
     * leaves, or signals were missed ('missed': the reader reads everything again when it reconnects).
     */
    async followOrganizationChanges(principal: Principal, organizationId: string, reader: ChangeReader): Promise<ChangeStreamEnd | undefined> {
      if (reader.signal.aborted) return undefined;
      const heard: Array<OrganizationChange | undefined> = [];
      let wake: (() => void) | undefined;
      const stop = follow(organizationId, (change) => {
        // A burst about one thing (a deploy's moves) is one look again while the reader has not been told yet.
        if (change !== undefined && heard.some((pending) => pending?.type === change.type && pending.id === change.id)) return;
        heard.push(change);
        wake?.();
      });
      reader.opened();
      try {
        while (!reader.signal.aborted) {
          if (heard.length === 0) {
            const quiet = await nextChange(heartbeatMs, reader.signal, (resolve) => (wake = resolve));
            wake = undefined;
            if (quiet) await reader.heartbeat();
            continue;
          }
          const change = heard.shift();
          if (change === undefined) return 'missed';
          if (await mayRead(principal, organizationId, change)) await reader.emit(change);
        }
        return undefined;
      } finally {
        stop();
      }
    },
  };
}

/**
 * Resolves true after `ms` of quiet (time for a heartbeat), false at once when a change is heard (`listen` hands
 * over the wake-up) or the reader leaves.
 */
function nextChange(ms: number, signal: AbortSignal, listen: (wake: () => void) => void): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const settle = (quiet: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', woken);
      resolve(quiet);
    };
    const woken = () => settle(false);
    const timer = setTimeout(() => settle(true), ms);
    signal.addEventListener('abort', woken, { once: true });
    listen(woken);
  });
}

export type OrganizationChangesService = ReturnType<typeof createOrganizationChangesService>;
