import type { Selectable, Updateable } from 'kysely';
import type { Queryable, ServiceReferencesTable, ServicesTable } from '../../db/db.schema.ts';
import { readInIdChunks } from '../../db/db.id-chunks.ts';

export type ServiceRow = Selectable<ServicesTable>;
export type ServiceReferenceRow = Selectable<ServiceReferencesTable>;

/** What a service's settings can name in other modules (one `service_references` row each). */
export type ReferenceKind = 'GIT_TOKEN' | 'CONTAINER_REGISTRY' | 'HELM_REPOSITORY' | 'LABELS_GROUP' | 'ANNOTATIONS_GROUP';

export async function insertService(db: Queryable, row: ServiceRow): Promise<void> {
  await db.insertInto('services').values(row).execute();
}

export function findServiceRow(db: Queryable, id: string): Promise<ServiceRow | undefined> {
  return db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listServicesOfEnvironment(db: Queryable, environmentId: string, kind?: string): Promise<ServiceRow[]> {
  let query = db.selectFrom('services').selectAll().where('environment_id', '=', environmentId);
  if (kind !== undefined) query = query.where('kind', '=', kind);
  // The name key is unique in an environment: the unique index (environment_id, name_key) gives the order.
  return query.orderBy('name_key').execute();
}

export async function updateService(db: Queryable, id: string, changes: Updateable<ServicesTable>): Promise<boolean> {
  const result = await db.updateTable('services').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives a service its public hostname's label once (a label taken by another service is a unique violation). */
export async function claimHostnameLabel(db: Queryable, id: string, label: string): Promise<boolean> {
  const result = await db.updateTable('services').set({ hostname_label: label }).where('id', '=', id).where('hostname_label', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteServiceRow(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('services').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Replaces what a service names in other modules (inside the transaction that writes its settings). */
export async function replaceServiceReferences(db: Queryable, serviceId: string, references: ServiceReferenceRow[]): Promise<void> {
  await db.deleteFrom('service_references').where('service_id', '=', serviceId).execute();
  if (references.length > 0) await db.insertInto('service_references').values(references).execute();
}

/** The organization's services that name one thing of another module. */
export function listServicesReferencing(db: Queryable, organizationId: string, kind: ReferenceKind, referenceId: string): Promise<ServiceRow[]> {
  return db
    .selectFrom('services')
    .innerJoin('service_references', 'service_references.service_id', 'services.id')
    .selectAll('services')
    .where('services.organization_id', '=', organizationId)
    .where('service_references.kind', '=', kind)
    .where('service_references.reference_id', '=', referenceId)
    .orderBy('services.name_key')
    .orderBy('services.id')
    .execute();
}

/** How many of the organization's services name each of the given things of one kind. */
export async function countServicesReferencing(db: Queryable, organizationId: string, kind: ReferenceKind, referenceIds: string[]): Promise<Map<string, number>> {
  if (referenceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('service_references')
    .innerJoin('services', 'services.id', 'service_references.service_id')
    .select(['service_references.reference_id as reference_id', (eb) => eb.fn.countAll<string | number>().as('count')])
    .where('services.organization_id', '=', organizationId)
    .where('service_references.kind', '=', kind)
    .where('service_references.reference_id', 'in', referenceIds)
    .groupBy('service_references.reference_id')
    .execute();
  return new Map(rows.map((r) => [r.reference_id, Number(r.count)]));
}

export async function countServicesByProject(db: Queryable, projectIds: string[]): Promise<Map<string, number>> {
  const rows = await readInIdChunks(projectIds, (chunk) =>
    db
      .selectFrom('services')
      .select(['project_id', (eb) => eb.fn.countAll<string | number>().as('count')])
      .where('project_id', 'in', chunk)
      .groupBy('project_id')
      .execute(),
  );
  return new Map(rows.map((r) => [r.project_id, Number(r.count)]));
}

/** Services naming one thing, with their project's and environment's names (read beside them for the usage answers). */
export function listServicesReferencingWithPlacement(db: Queryable, organizationId: string, kind: ReferenceKind, referenceId: string) {
  return db
    .selectFrom('services')
    .innerJoin('service_references', 'service_references.service_id', 'services.id')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .innerJoin('projects', 'projects.id', 'services.project_id')
    .selectAll('services')
    .select(['environments.name as environment_name', 'projects.name as project_name'])
    .where('services.organization_id', '=', organizationId)
    .where('service_references.kind', '=', kind)
    .where('service_references.reference_id', '=', referenceId)
    .orderBy('services.name_key')
    .orderBy('services.id')
    .execute();
}
