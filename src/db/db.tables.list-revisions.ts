/** Revisions of unpaged lists (migrations/0060_list_revisions.ts, db.list-revisions.ts): written by triggers only. */

/** One list of one scope: `revision` moves forward in every transaction that writes a row the list shows. */
export interface ListRevisionsTable {
  /** The organization (list `projects`) or the project (list `variables`) the list belongs to. */
  scope_id: string;
  /** Which list: `projects` (listProject); `variables` (what a project's variable listings and resolutions show). */
  list: string;
  /** bigint: PostgreSQL's client reads it as text, SQLite's as a number. */
  revision: string | number;
}
