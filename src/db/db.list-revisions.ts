import { compiledOnce } from './db.compiled-query.ts';
import type { Queryable } from './db.schema.ts';

/**
 * The revision of an organization's unpaged list, as the database's triggers count it (migrations/0060_list_revisions.ts).
 * Read it before the list's rows: rows read afterwards are at least as new as the revision, so an answer kept under it
 * is never older than what it claims. A list nothing was written to yet has no row: revision `0`.
 */
export type CountedList = 'projects';

const projectListRevision = compiledOnce((db, organizationId) =>
  db.selectFrom('list_revisions').select('revision').where('organization_id', '=', organizationId).where('list', '=', 'projects'),
);

const READERS: Record<CountedList, typeof projectListRevision> = { projects: projectListRevision };

export async function readListRevision(db: Queryable, organizationId: string, list: CountedList): Promise<string> {
  const [row] = await READERS[list](db, organizationId);
  return row === undefined ? '0' : String(row.revision);
}
