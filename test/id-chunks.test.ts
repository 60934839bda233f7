import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import { countEnvironmentsByProject } from '../src/modules/environments/environments.repo.ts';
import { countServicesByProject } from '../src/modules/services/services.repo.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';

/**
 * Counts over every project of an organization (the project list, its stats) name each project's id in the query. An
 * organization with more projects than a statement takes parameters (SQLite 32,766, PostgreSQL 65,535) answered its
 * project list with 500: the ids are now read a thousand at a time (src/db/db.id-chunks.ts).
 */
for (const dialect of TEST_DIALECTS) {
  describe(`counts over more projects than a statement takes parameters [${dialect}]`, () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await openTestDatabase(dialect);
    });
    afterAll(async () => test.dispose());

    it('counts environments and services of 70,000 projects', async () => {
      const projectIds = Array.from({ length: 70_000 }, () => newId());
      expect((await countEnvironmentsByProject(test.database.db, projectIds)).size).toBe(0);
      expect((await countServicesByProject(test.database.db, projectIds)).size).toBe(0);
    });
  });
}
