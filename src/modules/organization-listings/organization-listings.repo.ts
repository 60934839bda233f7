import type { Queryable } from '../../db/db.schema.ts';
import type { OrganizationServicesFilter } from './organization-listings.schemas.ts';

/** The organization's environments, by project then name. */
export function listOrganizationEnvironments(db: Queryable, organizationId: string) {
  return db
    .selectFrom('environments')
    .select(['id', 'organization_id', 'project_id', 'cluster_id', 'name', 'mode', 'created_at', 'updated_at'])
    .where('organization_id', '=', organizationId)
    .orderBy('project_id')
    .orderBy('name_key')
    .orderBy('id')
    .execute();
}

/** The organization's services with where they live (project, environment, its mode and cluster), filtered. */
export function listOrganizationServices(db: Queryable, organizationId: string, filter: OrganizationServicesFilter) {
  let query = db
    .selectFrom('services')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .innerJoin('projects', 'projects.id', 'services.project_id')
    .select([
      'services.id',
      'services.kind',
      'services.name',
      'services.description',
      'services.settings',
      'services.project_id',
      'projects.name as project_name',
      'services.environment_id',
      'environments.name as environment_name',
      'environments.mode as environment_mode',
      'environments.cluster_id',
    ])
    .where('services.organization_id', '=', organizationId);
  if (filter.project_id !== undefined) query = query.where('services.project_id', '=', filter.project_id);
  if (filter.environment_id !== undefined) query = query.where('services.environment_id', '=', filter.environment_id);
  if (filter.cluster_id !== undefined) query = query.where('environments.cluster_id', '=', filter.cluster_id);
  return query.orderBy('projects.name_key').orderBy('environments.name_key').orderBy('services.name_key').orderBy('services.id').execute();
}

/** The organization's services whose settings name one container registry or Helm repository, with their placement. */
export function listServicesUsing(db: Queryable, organizationId: string, kind: 'CONTAINER_REGISTRY' | 'HELM_REPOSITORY', referenceId: string) {
  return db
    .selectFrom('services')
    .innerJoin('service_references', 'service_references.service_id', 'services.id')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .innerJoin('projects', 'projects.id', 'services.project_id')
    .select([
      'services.id',
      'services.kind',
      'services.name',
      'services.settings',
      'services.project_id',
      'projects.name as project_name',
      'services.environment_id',
      'environments.name as environment_name',
      'environments.mode as environment_mode',
    ])
    .where('services.organization_id', '=', organizationId)
    .where('service_references.kind', '=', kind)
    .where('service_references.reference_id', '=', referenceId)
    .orderBy('projects.name_key')
    .orderBy('environments.name_key')
    .orderBy('services.name_key')
    .orderBy('services.id')
    .execute();
}
