import { pathToFileURL } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { loadConfigOrExit, type Config } from './config.ts';
import { databaseTargetOf, openDatabase } from './db/db.client.ts';
import { migrateToLatest } from './db/db.migrate.ts';

/**
 * The server process: config → database → migrations → HTTP. SIGTERM/SIGINT stop accepting connections, let
 * in-flight requests finish (up to 10 s), then close the database.
 */
export async function runServer(config: Config): Promise<void> {
  const database = openDatabase(databaseTargetOf(config));
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({ config, database, jobs: { run: config.runJobs } });

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'stopping after an uncaught error');
    else app.log.info({ signal }, 'stopping: draining in-flight requests');
    await app.close();
    await database.close();
  });

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ database: database.dialect }, 'slipway is serving');
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  await runServer(loadConfigOrExit());
}
