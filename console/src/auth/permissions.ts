import { api } from '../api/client.ts';
import { currentSession } from './session.ts';

/**
 * What the signed-in person may do in an organization, from the API: their row in the members list (`GET
 * /organization/{id}/member`, which every member may read) names their role, and a built-in role's grants are the
 * server's (src/auth/permissions.ts, docs/roles.md): VIEWER reads; DEVELOPER also writes and deploys; ADMIN and OWNER
 * also govern. A custom role grants by environment type, which the list does not say: the console offers its actions
 * and the API decides (a refusal is shown where the action was taken, like any 403).
 *
 * Used to disable what the role cannot do, with the reason beside it. It is a courtesy, not a guard: the API checks
 * every request whatever the console shows.
 */
export type Grant = 'write' | 'deploy' | 'admin';

const BUILT_IN_GRANTS: Record<string, readonly Grant[]> = {
  OWNER: ['write', 'deploy', 'admin'],
  ADMIN: ['write', 'deploy', 'admin'],
  DEVELOPER: ['write', 'deploy'],
  VIEWER: [],
};

const NEEDS: Record<Grant, string> = {
  write: 'creating, changing or deleting needs the Developer role or above',
  deploy: 'deploying, restarting or stopping needs the Developer role or above',
  admin: 'this needs the Admin role or above',
};

export interface Permissions {
  /** The caller's role as people read it ("Viewer"), once known. */
  role: string | undefined;
  can(grant: Grant): boolean;
  /** Why the caller cannot (a sentence), or undefined when they can. */
  reason(grant: Grant): string | undefined;
}

export function useOrganizationPermissions(organizationId: string): Permissions {
  const members = api.useQuery('get', '/organization/{organizationId}/member', { params: { path: { organizationId } } });
  const email = currentSession()?.email;
  const me = members.data?.results.find((member) => member.email === email);
  const grants = me === undefined ? undefined : BUILT_IN_GRANTS[me.role_name];
  const role = me === undefined ? undefined : me.role_name.charAt(0) + me.role_name.slice(1).toLowerCase();
  // Until the list answers, or for a custom role, nothing is disabled: the API decides.
  const can = (grant: Grant) => grants === undefined || grants.includes(grant);
  return {
    role,
    can,
    reason: (grant) => (can(grant) ? undefined : `Your role is ${role ?? 'limited'}: ${NEEDS[grant]}.`),
  };
}
