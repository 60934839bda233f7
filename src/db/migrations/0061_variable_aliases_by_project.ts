import { sql, type Kysely } from 'kysely';

/**
 * A variable write checks for alias cycles only where one can close (docs/variables.md, rule 2): the owners of the
 * project that hold an alias, and the names aliased anywhere in it. Aliases are few among a project's variables, so
 * the index holds only them (a partial index, on both databases) and answers both questions by itself: finding them
 * reads a handful of entries instead of every variable of the project.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('variables_project_aliases')
    .on('variables')
    .columns(['project_id', 'owner_id', 'environment_id', 'key'])
    .where(sql.ref('alias_of'), 'is not', null)
    .execute();
}
