import { compiledOnce } from './db.compiled-query.ts';
import type { Queryable } from './db.schema.ts';

/**
 * The revision of an unpaged list, as the database's triggers count it (migrations/0060_list_revisions.ts): the
 * project list of an organization, or the variables of a project. Read it before the list's rows: rows read afterwards
 * are at least as new as the revision, so an answer kept under it is never older than what it claims. A list nothing
 * was written to yet has no row: revision `0`.
 */
export type CountedList = 'projects' | 'variables';

function revisionOf(list: CountedList) {
  return compiledOnce((db, scopeId) => db.selectFrom('list_revisions').select('revision').where('scope_id', '=', scopeId).where('list', '=', list));
}

const READERS: Record<CountedList, ReturnType<typeof revisionOf>> = { projects: revisionOf('projects'), variables: revisionOf('variables') };

/** `scopeId`: the organization's id for `projects`, the project's for `variables`. */
export async function readListRevision(db: Queryable, scopeId: string, list: CountedList): Promise<string> {
  const [row] = await READERS[list](db, scopeId);
  return row === undefined ? '0' : String(row.revision);
}
