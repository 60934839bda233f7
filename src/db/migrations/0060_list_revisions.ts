import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Revisions of unpaged lists (db.list-revisions.ts): a counter per organization and list that the database itself
 * moves forward whenever a row the list shows is written, in the writing transaction. A replica keeps a list's
 * serialized answer under the revision it read before reading the rows, and answers from it while the revision is
 * unchanged. Triggers rather than application code, so that no write path can forget the bump: the API's, the
 * purge's, an operator's own SQL, another replica's.
 *
 * The project list (`projects`) shows each project's own columns and how many environments it has: every change to a
 * project row counts, and for environments their arrival, their removal and a move to another project.
 *
 * PostgreSQL: constraint triggers DEFERRABLE INITIALLY DEFERRED, so the bump runs at commit. The counter's row is locked
 * from the bump to the commit, and two transactions touching one organization's projects take turns only for that
 * instant rather than from their first write on (and cannot deadlock on it in the middle of their other work).
 * SQLite writes one transaction at a time; its triggers run with the statement.
 *
 * A counter row exists only while its organization does: the bump inserts none for an organization that is gone (the
 * rows a deleted organization's cascade removes), and deleting an organization removes its counters.
 */

const COUNTED: ReadonlyArray<{ table: string; list: string; events: ReadonlyArray<'INSERT' | 'DELETE' | 'UPDATE'>; updateOf?: readonly string[] }> = [
  { table: 'projects', list: 'projects', events: ['INSERT', 'DELETE', 'UPDATE'] },
  { table: 'environments', list: 'projects', events: ['INSERT', 'DELETE', 'UPDATE'], updateOf: ['project_id', 'organization_id'] },
];

export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('list_revisions')
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('list', 'varchar(32)', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_revisions_pkey', ['organization_id', 'list'])
    .execute();

  if (types.timestamp === 'timestamptz') await postgresTriggers(db);
  else await sqliteTriggers(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function count_list_change() returns trigger language plpgsql as $$
    declare
      changed_organization varchar(36);
    begin
      if tg_op = 'DELETE' then changed_organization := old.organization_id; else changed_organization := new.organization_id; end if;
      insert into list_revisions (organization_id, list, revision)
        select changed_organization, tg_argv[0], 1 where exists (select 1 from organizations where id = changed_organization)
        on conflict (organization_id, list) do update set revision = list_revisions.revision + 1;
      -- A row that moved to another organization changes the list of the one it left too.
      if tg_op = 'UPDATE' and old.organization_id is distinct from new.organization_id then
        update list_revisions set revision = revision + 1 where organization_id = old.organization_id and list = tg_argv[0];
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create function forget_list_revisions() returns trigger language plpgsql as $$
    begin
      delete from list_revisions where organization_id = old.id;
      return null;
    end $$`.execute(db);
  for (const { table, list, events, updateOf } of COUNTED) {
    for (const event of events) {
      const on = event === 'UPDATE' && updateOf !== undefined ? sql.raw(`update of ${updateOf.join(', ')}`) : sql.raw(event.toLowerCase());
      await sql`
        create constraint trigger ${sql.raw(`${table}_${event.toLowerCase()}_counts_${list}`)} after ${on} on ${sql.table(table)}
        deferrable initially deferred for each row execute function count_list_change(${sql.lit(list)})`.execute(db);
    }
  }
  await sql`create trigger organizations_delete_list_revisions after delete on organizations for each row execute function forget_list_revisions()`.execute(db);
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const { table, list, events, updateOf } of COUNTED) {
    for (const event of events) {
      const on = event === 'UPDATE' && updateOf !== undefined ? `update of ${updateOf.join(', ')}` : event.toLowerCase();
      const row = event === 'DELETE' ? 'old' : 'new';
      const movedAway =
        event === 'UPDATE'
          ? `update list_revisions set revision = revision + 1 where organization_id = old.organization_id and list = '${list}' and old.organization_id is not new.organization_id;`
          : '';
      await sql
        .raw(
          `create trigger ${table}_${event.toLowerCase()}_counts_${list} after ${on} on ${table} begin
             insert into list_revisions (organization_id, list, revision)
               select ${row}.organization_id, '${list}', 1 where exists (select 1 from organizations where id = ${row}.organization_id)
               on conflict (organization_id, list) do update set revision = revision + 1;
             ${movedAway}
           end`,
        )
        .execute(db);
    }
  }
  await sql.raw(`create trigger organizations_delete_list_revisions after delete on organizations begin delete from list_revisions where organization_id = old.id; end`).execute(db);
}
