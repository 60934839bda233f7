import { mariadbEngine } from './database-mariadb.ts';
import { postgresqlEngine } from './database-postgresql.ts';
import { redisEngine } from './database-redis.ts';
import type { DatabaseEngineDefinition, LocalDatabaseEngine } from './database-servers.ts';

/** Every engine the local driver runs a server for; what LocalDatabaseServers is given. */
export const LOCAL_DATABASE_ENGINES: readonly DatabaseEngineDefinition[] = [postgresqlEngine, mariadbEngine, redisEngine];

/**
 * The local engine of a database service's type (the reference's DatabaseTypeEnum), or undefined: MONGODB has no
 * local engine here, and its deployment fails with `noLocalEngineMessage`.
 */
export function localDatabaseEngine(type: string): LocalDatabaseEngine | undefined {
  return LOCAL_DATABASE_ENGINES.find((definition) => definition.engine === type)?.engine;
}

export function noLocalEngineMessage(type: string): string {
  return `${type} databases cannot run on the local cluster: its engine runs POSTGRESQL, MYSQL (MariaDB) and REDIS servers only. Deploy this database on a Kubernetes cluster, or use one of those types.`;
}
