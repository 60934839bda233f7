import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Revisions of unpaged lists (db.list-revisions.ts): a counter per list and scope (the organization or the project
 * the list belongs to) that the database itself moves forward whenever a row the list shows is written, in the
 * writing transaction. A replica keeps a list's
 * serialized answer under the revision it read before reading the rows, and answers from it while the revision is
 * unchanged. Triggers rather than application code, so that no write path can forget the bump: the API's, the
 * purge's, an operator's own SQL, another replica's.
 *
 * The project list (`projects`) shows each project's own columns and how many environments it has: every change to a
 * project row counts, and for environments their arrival, their removal and a move to another project.
 *
 * What a project's variables are (`variables`, per project: the variable listings and the resolved variables of the
 * project, its environments and their services) comes from the variable rows (values, aliases, overrides, secrets' fingerprints), the
 * built-ins of the environment's services (their rows alone: name, kind, settings, hostname, sealed credentials,
 * services.addresses.ts) and the environment's name, mode and cluster: every change to a variable or service row
 * counts, and an environment's arrival, removal, or change of those columns. Its status and deployments do not.
 *
 * PostgreSQL: constraint triggers DEFERRABLE INITIALLY DEFERRED, so the bump runs at commit. The counter's row is locked
 * from the bump to the commit, and two transactions touching one organization's projects take turns only for that
 * instant rather than from their first write on (and cannot deadlock on it in the middle of their other work).
 * SQLite writes one transaction at a time; its triggers run with the statement.
 *
 * A counter row exists only while its scope does: the bump inserts none for an organization or project that is gone
 * (the rows its deletion's cascade removes), and deleting an organization or a project removes its counters.
 */

type Scope = 'organization' | 'project';

/** Where each scope's id is in a counted row, and the table whose row the scope is. */
const SCOPES: Record<Scope, { column: string; table: string }> = {
  organization: { column: 'organization_id', table: 'organizations' },
  project: { column: 'project_id', table: 'projects' },
};

const COUNTED: ReadonlyArray<{ table: string; list: string; scope: Scope; events: ReadonlyArray<'INSERT' | 'DELETE' | 'UPDATE'>; updateOf?: readonly string[] }> = [
  { table: 'projects', list: 'projects', scope: 'organization', events: ['INSERT', 'DELETE', 'UPDATE'] },
  { table: 'environments', list: 'projects', scope: 'organization', events: ['INSERT', 'DELETE', 'UPDATE'], updateOf: ['project_id', 'organization_id'] },
  { table: 'variables', list: 'variables', scope: 'project', events: ['INSERT', 'DELETE', 'UPDATE'] },
  { table: 'services', list: 'variables', scope: 'project', events: ['INSERT', 'DELETE', 'UPDATE'] },
  { table: 'environments', list: 'variables', scope: 'project', events: ['INSERT', 'DELETE', 'UPDATE'], updateOf: ['name', 'mode', 'cluster_id', 'project_id'] },
];

export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('list_revisions')
    .addColumn('scope_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('list', 'varchar(32)', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_revisions_pkey', ['scope_id', 'list'])
    .execute();

  if (types.timestamp === 'timestamptz') await postgresTriggers(db);
  else await sqliteTriggers(db);
  // The variables module counted its writes per project itself (0013); the `variables` counter replaces it, and
  // also sees the writes that went around the module.
  await db.schema.dropTable('variable_revisions').execute();
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  // One function per scope, with its column and table written out: a row trigger runs for every row a statement
  // writes, and SQL built at run time (EXECUTE) would be planned again each time.
  for (const [scope, { column, table }] of Object.entries(SCOPES)) {
    await sql
      .raw(
        `create function count_${scope}_list_change() returns trigger language plpgsql as $$
        declare
          changed_scope varchar(36);
        begin
          if tg_op = 'DELETE' then changed_scope := old.${column}; else changed_scope := new.${column}; end if;
          insert into list_revisions (scope_id, list, revision)
            select changed_scope, tg_argv[0], 1 where exists (select 1 from ${table} where id = changed_scope)
            on conflict (scope_id, list) do update set revision = list_revisions.revision + 1;
          -- A row that moved to another scope changes the list of the one it left too.
          if tg_op = 'UPDATE' and old.${column} is distinct from new.${column} then
            update list_revisions set revision = revision + 1 where scope_id = old.${column} and list = tg_argv[0];
          end if;
          return null;
        end $$`,
      )
      .execute(db);
  }
  await sql`
    create function forget_list_revisions() returns trigger language plpgsql as $$
    begin
      delete from list_revisions where scope_id = old.id;
      return null;
    end $$`.execute(db);
  for (const { table, list, scope, events, updateOf } of COUNTED) {
    for (const event of events) {
      const on = event === 'UPDATE' && updateOf !== undefined ? `update of ${updateOf.join(', ')}` : event.toLowerCase();
      await sql
        .raw(
          `create constraint trigger ${table}_${event.toLowerCase()}_counts_${list} after ${on} on ${table}
           deferrable initially deferred for each row execute function count_${scope}_list_change('${list}')`,
        )
        .execute(db);
    }
  }
  for (const { table } of Object.values(SCOPES)) {
    await sql.raw(`create trigger ${table}_delete_list_revisions after delete on ${table} for each row execute function forget_list_revisions()`).execute(db);
  }
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const { table, list, scope, events, updateOf } of COUNTED) {
    const { column, table: scopeTable } = SCOPES[scope];
    for (const event of events) {
      const on = event === 'UPDATE' && updateOf !== undefined ? `update of ${updateOf.join(', ')}` : event.toLowerCase();
      const row = event === 'DELETE' ? 'old' : 'new';
      const movedAway =
        event === 'UPDATE'
          ? `update list_revisions set revision = revision + 1 where scope_id = old.${column} and list = '${list}' and old.${column} is not new.${column};`
          : '';
      await sql
        .raw(
          `create trigger ${table}_${event.toLowerCase()}_counts_${list} after ${on} on ${table} begin
             insert into list_revisions (scope_id, list, revision)
               select ${row}.${column}, '${list}', 1 where exists (select 1 from ${scopeTable} where id = ${row}.${column})
               on conflict (scope_id, list) do update set revision = revision + 1;
             ${movedAway}
           end`,
        )
        .execute(db);
    }
  }
  for (const { table } of Object.values(SCOPES)) {
    await sql.raw(`create trigger ${table}_delete_list_revisions after delete on ${table} begin delete from list_revisions where scope_id = old.id; end`).execute(db);
  }
}
