import type { CompiledQuery, Insertable, Selectable } from 'kysely';
import type { OrganizationEventsTable, Queryable } from '../../db/db.schema.ts';

export type OrganizationEventRow = Selectable<OrganizationEventsTable>;

/** The insert, compiled only: the audit hook runs it on the connection of the transaction it commits with. */
export function compileEventInsert(db: Queryable, row: Insertable<OrganizationEventsTable>): CompiledQuery {
  return db.insertInto('organization_events').values(row).compile();
}

export async function insertEvent(db: Queryable, row: Insertable<OrganizationEventsTable>): Promise<void> {
  await db.insertInto('organization_events').values(row).execute();
}

/** What the answer settles on an event written in the change's transaction; false when no such row committed. */
export async function completeEvent(
  db: Queryable,
  id: string,
  fields: Pick<OrganizationEventsTable, 'status_code' | 'outcome' | 'target_id' | 'target_name'>,
): Promise<boolean> {
  const result = await db.updateTable('organization_events').set(fields).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface EventFilter {
  organizationId: string;
  from?: string;
  to?: string;
  eventType?: string;
  targetType?: string;
  targetId?: string;
  subTargetType?: string;
  triggeredBy?: string;
  origin?: string;
  projectId?: string;
  environmentId?: string;
  outcome?: string;
  operationId?: string;
}

/** A position in the log, newest first: events strictly after it (older) or strictly before it (newer). */
export interface EventCursor {
  createdAt: string;
  id: string;
  direction: 'older' | 'newer';
}

/**
 * One page, newest first; `limit + 1` rows are read so the caller can tell whether more lie beyond. Each filter is
 * served by an index that puts it before the time (0055_list_indexes.ts), so a page reads about `limit` rows whatever
 * the size of the log. `triggeredBy` matches the author's id or the name it was triggered by: two indexed reads in
 * order, merged (an OR of the two columns would make the database collect every match and sort them).
 */
export async function listEvents(db: Queryable, filter: EventFilter, cursor: EventCursor | undefined, limit: number): Promise<OrganizationEventRow[]> {
  const order = cursor?.direction === 'newer' ? 'asc' : 'desc';
  const page = (by?: { column: 'triggered_by' | 'author_id'; value: string }) => {
    let query = db.selectFrom('organization_events').selectAll().where('organization_id', '=', filter.organizationId);
    if (by !== undefined) query = query.where(by.column, '=', by.value);
    if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('created_at', '<=', filter.to);
    if (filter.eventType !== undefined) query = query.where('event_type', '=', filter.eventType);
    if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
    if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
    if (filter.subTargetType !== undefined) query = query.where('sub_target_type', '=', filter.subTargetType);
    if (filter.origin !== undefined) query = query.where('origin', '=', filter.origin);
    if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
    if (filter.environmentId !== undefined) query = query.where('environment_id', '=', filter.environmentId);
    if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
    if (filter.operationId !== undefined) query = query.where('operation_id', '=', filter.operationId);
    if (cursor !== undefined) {
      const comparison = cursor.direction === 'older' ? '<' : '>';
      // The bound on the time alone comes first so PostgreSQL starts its index range at the cursor: with the OR
      // only, it walked a time window's range from its far end and filtered each row (the last page of one day
      // took 100 ms at a million events).
      query = query.where('created_at', cursor.direction === 'older' ? '<=' : '>=', cursor.createdAt).where((eb) =>
        eb.or([
          eb('created_at', comparison, cursor.createdAt),
          eb.and([eb('created_at', '=', cursor.createdAt), eb('id', comparison, cursor.id)]),
        ]),
      );
    }
    return query.orderBy('created_at', order).orderBy('id', order).limit(limit + 1).execute();
  };
  const triggeredBy = filter.triggeredBy;
  if (triggeredBy === undefined) return page();
  const [byName, byAuthor] = await Promise.all([page({ column: 'triggered_by', value: triggeredBy }), page({ column: 'author_id', value: triggeredBy })]);
  return mergeInOrder(byName, byAuthor, order).slice(0, limit + 1);
}

/** Two pages of one order merged into that order, an event found by both once. */
function mergeInOrder(left: OrganizationEventRow[], right: OrganizationEventRow[], order: 'asc' | 'desc'): OrganizationEventRow[] {
  const sign = order === 'asc' ? 1 : -1;
  const byPosition = (a: OrganizationEventRow, b: OrganizationEventRow) =>
    sign * (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const merged = new Map<string, OrganizationEventRow>();
  for (const row of [...left, ...right]) merged.set(row.id, row);
  return [...merged.values()].sort(byPosition);
}

/** The retention purge: an organization's events older than `before`. */
export async function deleteEventsBefore(db: Queryable, organizationId: string, before: string): Promise<void> {
  await db.deleteFrom('organization_events').where('organization_id', '=', organizationId).where('created_at', '<', before).execute();
}

/** The sweep: every event older than `before`, whatever its organization (and those of deleted organizations). */
export async function deleteAllEventsBefore(db: Queryable, before: string): Promise<void> {
  await db.deleteFrom('organization_events').where('created_at', '<', before).execute();
}

/**
 * The distinct targets the filtered log has events for (getOrganizationEventTargets): the events' own targets, or at
 * `level` PROJECT / ENVIRONMENT the projects / environments they happened in. Each id once, with the newest name
 * recorded for it (null at those levels, where names are today's, looked up by the caller).
 */
export async function listEventTargets(db: Queryable, filter: EventFilter, level: 'TARGET' | 'PROJECT' | 'ENVIRONMENT'): Promise<Array<{ id: string; name: string | null }>> {
  const column = level === 'PROJECT' ? 'project_id' : level === 'ENVIRONMENT' ? 'environment_id' : 'target_id';
  let query = db.selectFrom('organization_events').select([column, 'target_name']).where('organization_id', '=', filter.organizationId).where(column, 'is not', null);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<=', filter.to);
  if (filter.eventType !== undefined) query = query.where('event_type', '=', filter.eventType);
  if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
  if (filter.origin !== undefined) query = query.where('origin', '=', filter.origin);
  if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
  if (filter.environmentId !== undefined) query = query.where('environment_id', '=', filter.environmentId);
  const triggeredBy = filter.triggeredBy;
  if (triggeredBy !== undefined) query = query.where((eb) => eb.or([eb('triggered_by', '=', triggeredBy), eb('author_id', '=', triggeredBy)]));
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  const targets = new Map<string, string | null>();
  for (const row of rows) {
    const id = row[column];
    if (id !== null && !targets.has(id)) targets.set(id, level === 'TARGET' ? row.target_name : null);
  }
  return [...targets].map(([id, name]) => ({ id, name }));
}
