import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { forbidden, notFound, type AppError } from '../../lib/errors.ts';
import { nameKey } from '../../lib/names.ts';
import {
  countLocalClustersByOrganization,
  deleteLocalClusterGrant,
  findLocalClusterGrant,
  findOrganizationNamed,
  insertLocalClusterGrant,
  listLocalClusterGrants,
  listOrganizationNames,
} from './clusters.repo.ts';

/**
 * LOCAL clusters belong to the installation's operator (docs/clusters.md, "LOCAL clusters"). A LOCAL cluster's
 * workloads run as processes on the control plane's own host, so an organization creates one, or deploys onto one,
 * only with a grant the operator gave it: `slipway admin local-clusters allow|deny` (src/cli/admin-local-clusters.ts)
 * and `slipway admin bootstrap` for the organization it creates write them here, on the database directly; the
 * clusters service asks before a LOCAL cluster is created and before any deployment onto one starts workloads.
 *
 * Denying refuses what comes next and stops nothing: workloads running on the organization's LOCAL clusters keep
 * running until someone stops or deletes them.
 */

export interface LocalClusterGrantsDeps {
  db: Kysely<DB>;
  clock: Clock;
}

export interface OrganizationRef {
  id: string;
  name: string;
}

export interface LocalClusterGrantView {
  organization: OrganizationRef;
  granted_by: string;
  granted_at: string;
  /** The organization's LOCAL clusters that are not deleted. */
  local_clusters: number;
}

/**
 * The 403 an organization without the grant gets: what it may not do, why, and the command that allows it. It names
 * only the caller's own organization.
 */
export function localClustersRefused(organizationId: string, attempted: string): AppError {
  return forbidden(
    `${attempted} needs the installation operator's permission: a LOCAL cluster runs its workloads on the Slipway ` +
      `server's own host. The operator allows an organization with \`slipway admin local-clusters allow --organization ${organizationId}\``,
  );
}

export function createLocalClusterGrants(deps: LocalClusterGrantsDeps) {
  const { db, clock } = deps;

  async function organizationNamed(idOrName: string): Promise<OrganizationRef> {
    const wanted = idOrName.trim();
    const found = wanted === '' ? undefined : await findOrganizationNamed(db, wanted, nameKey(wanted));
    if (found === undefined) throw notFound(`no organization has the id or name "${idOrName}"`);
    return found;
  }

  async function isAllowed(organizationId: string): Promise<boolean> {
    return (await findLocalClusterGrant(db, organizationId)) !== undefined;
  }

  return {
    isAllowed,

    /** Throws the 403 unless the organization holds the grant; `attempted` says what it tried, for the message. */
    async refuseUnlessAllowed(organizationId: string, attempted: string): Promise<void> {
      if (!(await isAllowed(organizationId))) throw localClustersRefused(organizationId, attempted);
    },

    /** Gives the grant; `changed` is false when the organization held it already (the grant it holds is answered). */
    async allow(idOrName: string, grantedBy: string): Promise<{ grant: LocalClusterGrantView; changed: boolean }> {
      const organization = await organizationNamed(idOrName);
      const changed = await insertLocalClusterGrant(db, { organization_id: organization.id, granted_by: grantedBy, granted_at: clock.now().toISOString() });
      const row = await findLocalClusterGrant(db, organization.id);
      // Denied by a concurrent command right after this grant: report it as given, which it was.
      const held = row ?? { organization_id: organization.id, granted_by: grantedBy, granted_at: clock.now().toISOString() };
      const localClusters = (await countLocalClustersByOrganization(db)).get(organization.id) ?? 0;
      return { grant: { organization, granted_by: held.granted_by, granted_at: held.granted_at, local_clusters: localClusters }, changed };
    },

    /**
     * Withdraws the grant; `changed` is false when the organization did not hold it. `local_clusters` counts the LOCAL
     * clusters it keeps, whose workloads keep running.
     */
    async deny(idOrName: string): Promise<{ organization: OrganizationRef; changed: boolean; local_clusters: number }> {
      const organization = await organizationNamed(idOrName);
      const changed = await deleteLocalClusterGrant(db, organization.id);
      return { organization, changed, local_clusters: (await countLocalClustersByOrganization(db)).get(organization.id) ?? 0 };
    },

    /** The allowed organizations, and those that hold LOCAL clusters without a grant (created before grants existed, or denied since). */
    async list(): Promise<{ allowed: LocalClusterGrantView[]; not_allowed_with_local_clusters: Array<{ organization: OrganizationRef; local_clusters: number }> }> {
      const counts = await countLocalClustersByOrganization(db);
      const grants = await listLocalClusterGrants(db);
      const allowedIds = new Set(grants.map((grant) => grant.organization_id));
      const withoutGrant = await listOrganizationNames(db, [...counts.keys()].filter((organizationId) => !allowedIds.has(organizationId)));
      return {
        allowed: grants.map((grant) => ({
          organization: { id: grant.organization_id, name: grant.organization_name },
          granted_by: grant.granted_by,
          granted_at: grant.granted_at,
          local_clusters: counts.get(grant.organization_id) ?? 0,
        })),
        not_allowed_with_local_clusters: withoutGrant.map((organization) => ({ organization, local_clusters: counts.get(organization.id) ?? 0 })),
      };
    },
  };
}

export type LocalClusterGrants = ReturnType<typeof createLocalClusterGrants>;
