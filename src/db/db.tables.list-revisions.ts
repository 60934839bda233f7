/** Revisions of unpaged lists (migrations/0060_list_revisions.ts, db.list-revisions.ts): written by triggers only. */

/** One list of one organization: `revision` moves forward in every transaction that writes a row the list shows. */
export interface ListRevisionsTable {
  organization_id: string;
  /** Which list: `projects` (listProject). */
  list: string;
  /** bigint: PostgreSQL's client reads it as text, SQLite's as a number. */
  revision: string | number;
}
