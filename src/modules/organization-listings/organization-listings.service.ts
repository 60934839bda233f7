import type { Kysely } from 'kysely';
import type { Grant } from '../../auth/permissions.ts';
import type { Placement, Principal } from '../../auth/principal.ts';
import { readJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { listOrganizationEnvironments, listOrganizationServices, listServicesUsing } from './organization-listings.repo.ts';
import type { OrganizationServicesFilter } from './organization-listings.schemas.ts';

type EnvironmentMode = NonNullable<Placement['environmentMode']>;

export interface OrganizationListingsDeps {
  db: Kysely<DB>;
  /** What the caller may do where a resource lives (the authorizer's own rule); undefined: nothing there. */
  grantsAt(principal: Principal, placement: Placement): Promise<ReadonlySet<Grant> | undefined>;
  /** 404 when the registry or repository is not the organization's (the owning modules' get-one operations). */
  requireContainerRegistry(organizationId: string, registryId: string): Promise<unknown>;
  requireHelmRepository(organizationId: string, repositoryId: string): Promise<unknown>;
}

/** A job runs on a schedule (CRON) or on its environment's lifecycle events (LIFECYCLE). */
function jobTypeOf(settings: Record<string, unknown>): 'CRON' | 'LIFECYCLE' {
  const schedule = settings['schedule'];
  return typeof schedule === 'object' && schedule !== null && (schedule as Record<string, unknown>)['cronjob'] !== undefined ? 'CRON' : 'LIFECYCLE';
}

/**
 * The organization-wide listings (issue 24): every environment, every service, and the services that use a container
 * registry or a Helm repository. Each answer holds only what the caller may read where it lives: a custom role
 * (docs/roles.md) sees the environments of the projects and environment types it is given, and their services —
 * exactly what their own routes would answer it. Built-in roles and tokens read everything they can read anywhere.
 */
export function createOrganizationListingsService(deps: OrganizationListingsDeps) {
  const { db } = deps;

  /**
   * Whether the caller may read in an environment. A custom role grants by project and environment type, so the
   * answer is asked once per (project, type) of a listing, not once per row.
   */
  function readableFor(principal: Principal, organizationId: string) {
    const decided = new Map<string, Promise<boolean>>();
    return (projectId: string, environmentId: string, mode: string): Promise<boolean> => {
      const key = `${projectId}/${mode}`;
      let answer = decided.get(key);
      if (answer === undefined) {
        const placement: Placement = { organizationId, projectId, environmentId, environmentMode: mode as EnvironmentMode };
        answer = deps.grantsAt(principal, placement).then((grants) => grants?.has('read') === true);
        decided.set(key, answer);
      }
      return answer;
    };
  }

  async function readableOnly<T extends { project_id: string; environment_id: string; environment_mode: string }>(
    principal: Principal,
    organizationId: string,
    rows: readonly T[],
  ): Promise<T[]> {
    const readable = readableFor(principal, organizationId);
    const verdicts = await Promise.all(rows.map((row) => readable(row.project_id, row.environment_id, row.environment_mode)));
    return rows.filter((_row, index) => verdicts[index] === true);
  }

  function placementOf(row: { project_id: string; project_name: string; environment_id: string; environment_name: string; id: string; name: string }) {
    return {
      project_id: row.project_id,
      project_name: row.project_name,
      environment_id: row.environment_id,
      environment_name: row.environment_name,
      service_id: row.id,
      service_name: row.name,
    };
  }

  return {
    async listEnvironments(principal: Principal, organizationId: string) {
      const rows = await listOrganizationEnvironments(db, organizationId);
      const readable = await readableOnly(
        principal,
        organizationId,
        rows.map((row) => ({ ...row, environment_id: row.id, environment_mode: row.mode })),
      );
      return readable.map((row) => ({
        id: row.id,
        created_at: row.created_at,
        updated_at: row.updated_at,
        name: row.name,
        organization: { id: row.organization_id },
        project: { id: row.project_id },
        mode: row.mode as EnvironmentMode,
      }));
    },

    async listServices(principal: Principal, organizationId: string, filter: OrganizationServicesFilter) {
      const rows = await readableOnly(principal, organizationId, await listOrganizationServices(db, organizationId, filter));
      return rows.map((row) => {
        const settings = readJson<Record<string, unknown>>(row.settings);
        const icon = settings['icon_uri'];
        return {
          id: row.id,
          name: row.name,
          description: row.description ?? '',
          icon_uri: typeof icon === 'string' ? icon : '',
          service_type: row.kind as ServiceKind,
          project_id: row.project_id,
          project_name: row.project_name,
          environment_id: row.environment_id,
          environment_name: row.environment_name,
          cluster_id: row.cluster_id,
          ...(row.kind === 'JOB' ? { job_type: jobTypeOf(settings) } : {}),
        };
      });
    },

    /** Containers and jobs pulling their image from the registry; 404 for another organization's registry. */
    async servicesUsingContainerRegistry(principal: Principal, organizationId: string, registryId: string) {
      await deps.requireContainerRegistry(organizationId, registryId);
      const rows = await readableOnly(principal, organizationId, await listServicesUsing(db, organizationId, 'CONTAINER_REGISTRY', registryId));
      return rows.flatMap((row) => {
        if (row.kind !== 'CONTAINER' && row.kind !== 'JOB') return [];
        const type = row.kind === 'JOB' ? jobTypeOf(readJson<Record<string, unknown>>(row.settings)) : ('CONTAINER' as const);
        return [{ ...placementOf(row), service_type: type }];
      });
    },

    /** Helm services installing a chart of the repository; 404 for another organization's repository. */
    async servicesUsingHelmRepository(principal: Principal, organizationId: string, repositoryId: string) {
      await deps.requireHelmRepository(organizationId, repositoryId);
      const rows = await readableOnly(principal, organizationId, await listServicesUsing(db, organizationId, 'HELM_REPOSITORY', repositoryId));
      return rows.filter((row) => row.kind === 'HELM').map((row) => ({ ...placementOf(row), service_type: 'HELM' as const }));
    },
  };
}

export type OrganizationListingsService = ReturnType<typeof createOrganizationListingsService>;
