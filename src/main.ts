import { pathToFileURL } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { loadConfigOrExit, type Config, type SecretKeySource } from './config.ts';
import { databaseTargetOf, openDatabase, type Database } from './db/db.client.ts';
import { migrateToLatest } from './db/db.migrate.ts';
import { tightenPrivateDirectory, UnsafePermissionsError } from './lib/private-files.ts';
import { loadOrCreateKeyFile } from './lib/secret-box.ts';

/**
 * The data directory, made safe before anything in it is used: the directory narrowed to this account (it is ours),
 * the key loaded — refused when other accounts could read or write its file —, and the database opened with private
 * files. What the operator must fix ends the process with one line and exit status 2, as an invalid configuration
 * does (config.ts loadConfigOrExit), before any port is listened on.
 */
function openDataDirectoryOrExit(config: Config): { database: Database; secretKey: SecretKeySource } {
  try {
    tightenPrivateDirectory(config.dataDir);
    const secretKey: SecretKeySource = config.secretKey.kind === 'file' ? { kind: 'value', key: loadOrCreateKeyFile(config.secretKey.file) } : config.secretKey;
    return { secretKey, database: openDatabase(databaseTargetOf(config)) };
  } catch (error) {
    if (!(error instanceof UnsafePermissionsError)) throw error;
    process.stderr.write(`slipway: refusing to start: ${error.message}\n`);
    process.exit(2);
  }
}

/**
 * The server process: config → data directory → database → migrations → HTTP. SIGTERM/SIGINT stop accepting
 * connections, let in-flight requests finish (up to 10 s), then close the database.
 */
export async function runServer(config: Config): Promise<void> {
  const { database, secretKey } = openDataDirectoryOrExit(config);
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({ config: { ...config, secretKey }, database, jobs: { run: config.runJobs } });

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
