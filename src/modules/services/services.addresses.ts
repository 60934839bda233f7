import { createHash, randomBytes } from 'node:crypto';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { readJson } from '../../db/db.json.ts';
import { findFreePort } from '../../lib/free-port.ts';
import { AppError, conflict, notFound } from '../../lib/errors.ts';
import { nameKey } from '../../lib/names.ts';
import type { DatabaseType, ServiceForVariables, ServiceKind } from '../variables/variables.builtins.ts';
import { hostnameLabelCandidate, publicHostname } from './services.hostnames.ts';
import type { ServiceRecords } from './services.records.ts';
import { claimHostnameLabel, claimLocalAddress, claimLocalPort, findServiceRow, listServicesOfEnvironment, type ServiceRow } from './services.repo.ts';
import type { DatabaseConnection, ServicesDeps } from './services.service.ts';

/**
 * Where a service is reached (a part of the services service, assembled in services.service.ts), in two steps: the
 * claims give a service what is its own — a database's generated credentials, sealed with its row; once, a database's
 * port on a local-driver host, an application's or container's local address, the label of its public hostname — and
 * the addresses answer from them where other services, its agent and the variables module's built-ins reach it.
 */

/**
 * The hostname of a service inside its environment's network: a placeholder with a fixed shape (stable per service,
 * unique per environment, never reachable from outside) where no driver gives real addresses.
 */
export function internalHostname(service: { name: string; environmentId: string }): string {
  return `${nameKey(service.name)}.${service.environmentId}.slipway.internal`;
}

/** Candidates of 40 bits each: a fifth collision in a row would take more services than any installation holds. */
const HOSTNAME_LABEL_ATTEMPTS = 5;

/** Kinds that serve on ports inside their environment, hence get a local address (0024_service_local_addresses). */
export const ADDRESSED_KINDS: ReadonlySet<string> = new Set(['APPLICATION', 'CONTAINER']);

/**
 * A candidate local address for a service: in 127.64.0.0/10 (4 million addresses, all the loopback interface on
 * Linux), spread by the service's id; `attempt` moves on when another service holds it.
 */
function localAddressCandidate(serviceId: string, attempt: number): string {
  const digest = createHash('sha256').update(`${serviceId}:${attempt}`).digest();
  return `127.${64 + ((digest[0] ?? 0) & 63)}.${digest[1] ?? 0}.${((digest[2] ?? 0) % 254) + 1}`;
}

/** What a database's generated credentials hold (sealed in `credentials_envelope`). */
interface DatabaseCredentials {
  username: string;
  password: string;
}

function generatedCredentials(type: DatabaseType): DatabaseCredentials {
  return {
    // Redis ACLs start with the `default` user; the SQL servers and MongoDB get a user of their own.
    username: type === 'REDIS' ? 'default' : `u${randomBytes(8).toString('hex')}`,
    password: randomBytes(24).toString('base64url'),
  };
}

/** The sealed credentials are bound to their service, so an envelope copied into another row does not open. */
function credentialsAssociatedData(row: Pick<ServiceRow, 'id' | 'organization_id'>): string {
  return `services:credentials:${row.organization_id}:${row.id}`;
}

/**
 * What a service is given of its own: a database's credentials (new ones when its type changes), and, once, when it
 * is created or first needs it, a local port, a local address, a public hostname label.
 */
export function createServiceClaims(deps: Pick<ServicesDeps, 'db' | 'secrets' | 'environments'>) {
  const { db, secrets } = deps;

  function openCredentials(row: ServiceRow): DatabaseCredentials | undefined {
    if (row.credentials_envelope === null) return undefined;
    let plaintext: string;
    try {
      plaintext = secrets.open(row.credentials_envelope, credentialsAssociatedData(row));
    } catch {
      // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the credentials are lost, not exposed.
      throw conflict(`the credentials of database "${row.name}" can no longer be decrypted (the server's secret key changed)`);
    }
    return JSON.parse(plaintext) as DatabaseCredentials;
  }

  /** Fresh credentials for a database of this type, sealed for the row's `credentials_envelope`. */
  function sealNewCredentials(row: Pick<ServiceRow, 'id' | 'organization_id'>, type: DatabaseType): string {
    return secrets.seal(JSON.stringify(generatedCredentials(type)), credentialsAssociatedData(row));
  }

  /**
   * Gives a service a value of its own, once: `read` says whether it has one, `claim` tries a candidate (attempt 0,
   * 1, …) and a candidate another service holds is a unique violation, so the next attempt tries another. Claimed
   * right after creation, and again by whoever needs it should a crash have come between.
   */
  async function claimOnce<T>(
    serviceId: string,
    read: (row: ServiceRow) => T | null,
    claim: (attempt: number, current: ServiceRow) => Promise<boolean>,
    attempts: number,
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const current = await findServiceRow(db, serviceId);
      if (current === undefined) throw notFound(`service ${serviceId} not found`);
      const held = read(current);
      if (held !== null) return held;
      try {
        await claim(attempt, current);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt + 1 >= attempts) throw error;
      }
    }
  }

  /** A database's port on a local-driver host: a port free on this host now, unique among services. */
  function claimFreeLocalPort(serviceId: string): Promise<number> {
    return claimOnce(serviceId, (row) => row.local_port, async () => claimLocalPort(db, serviceId, await findFreePort()), 5);
  }

  /** An application's or container's local address (0024_service_local_addresses), unique among services. */
  function claimFreeLocalAddress(serviceId: string): Promise<string> {
    return claimOnce(serviceId, (row) => row.local_address, (attempt) => claimLocalAddress(db, serviceId, localAddressCandidate(serviceId, attempt)), 20);
  }

  /**
   * The label of a service's public hostname (services.hostnames.ts), unique in the installation: a candidate another
   * service holds is a unique violation, and the next attempt hashes differently. The names in it are those at the
   * claim; the label is kept afterwards, renames included.
   */
  function claimFreeHostnameLabel(serviceId: string): Promise<string> {
    return claimOnce(
      serviceId,
      (row) => row.hostname_label,
      async (attempt, current) => {
        const environment = await deps.environments.findEnvironmentSummary(current.environment_id);
        return claimHostnameLabel(db, serviceId, hostnameLabelCandidate(current, environment?.name ?? '', attempt));
      },
      HOSTNAME_LABEL_ATTEMPTS,
    );
  }

  return { openCredentials, sealNewCredentials, claimFreeLocalPort, claimFreeLocalAddress, claimFreeHostnameLabel };
}

export type ServiceClaims = ReturnType<typeof createServiceClaims>;

/** Where a service is reached, as the variables module, the agent's spec and the routes ask it. */
export function createServiceAddresses(
  deps: Pick<ServicesDeps, 'db' | 'environments' | 'localDatabases' | 'appsDomain'>,
  records: Pick<ServiceRecords, 'findDefinition' | 'databaseSummaryOf'>,
  claims: ServiceClaims,
) {
  const { db } = deps;
  const { openCredentials, claimFreeLocalPort, claimFreeLocalAddress, claimFreeHostnameLabel } = claims;

  async function runsLocally(clusterId: string): Promise<boolean> {
    return (await deps.localDatabases?.clusterRunsLocally(clusterId)) ?? false;
  }

  function databaseConnectionOf(row: ServiceRow, local: boolean): DatabaseConnection | undefined {
    const database = records.databaseSummaryOf(row.kind, readJson<Record<string, unknown>>(row.settings), row.name);
    const credentials = database === undefined ? undefined : openCredentials(row);
    if (database === undefined || credentials === undefined) return undefined;
    const shared = local && database.type === 'POSTGRESQL' ? deps.localDatabases?.sharedPostgres : undefined;
    const placeholder = { host: internalHostname({ name: row.name, environmentId: row.environment_id }), port: database.port };
    const address = shared ?? (local && row.local_port !== null ? { host: '127.0.0.1', port: row.local_port } : placeholder);
    return {
      type: database.type,
      version: database.version,
      host: address.host,
      port: address.port,
      username: credentials.username,
      password: credentials.password,
      // Names on a shared server must not collide between services: the service's id goes into them.
      databaseName: shared === undefined ? database.dbName : `${database.dbName}_${row.id.replaceAll('-', '').slice(0, 12)}`,
      local: local && (shared !== undefined || row.local_port !== null),
      shared: shared !== undefined,
    };
  }

  /** What the variables module's built-ins say of one service (hostname, branch, a database's connection). */
  function forVariables(row: ServiceRow, local: boolean): ServiceForVariables {
    const kind = row.kind as ServiceKind;
    const settings = readJson<Record<string, unknown>>(row.settings);
    const references = records.findDefinition(kind)?.references(settings);
    const service: ServiceForVariables = { id: row.id, kind, name: row.name, branch: references?.branch ?? null };
    if (ADDRESSED_KINDS.has(kind)) {
      // On a local-driver host the agent answers on the service's own loopback address (docs/local-engine.md, "Addresses").
      service.hostname = local && row.local_address !== null ? row.local_address : internalHostname({ name: row.name, environmentId: row.environment_id });
    }
    const connection = databaseConnectionOf(row, local);
    if (connection !== undefined) {
      service.database = {
        type: connection.type,
        version: connection.version,
        host: connection.host,
        fqdn: null,
        port: connection.port,
        username: connection.username,
        password: connection.password,
        dbName: connection.databaseName,
      };
    }
    return service;
  }

  return {
    /** The variables module's ServiceVariableContext: every service of an environment as the built-ins see it. */
    async servicesForVariables(environmentId: string): Promise<ServiceForVariables[]> {
      const environment = await deps.environments.findEnvironmentSummary(environmentId);
      const local = environment !== undefined && (await runsLocally(environment.clusterId));
      return (await listServicesOfEnvironment(db, environmentId)).map((row) => forVariables(row, local));
    },

    /**
     * Where other services reach an application or a container on its cluster's agent host: its local address, when
     * a local-driver agent runs the cluster; undefined elsewhere (and for other kinds).
     */
    async internalAddressOf(serviceId: string): Promise<string | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined || !ADDRESSED_KINDS.has(row.kind)) return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      if (environment === undefined || !(await runsLocally(environment.clusterId))) return undefined;
      return row.local_address ?? (await claimFreeLocalAddress(serviceId));
    },

    /**
     * The service's public hostname, `<label>.<SLIPWAY_APPS_DOMAIN>`, whatever its kind or ports (whether it is routed
     * is the caller's business: only a service with a public port is). Undefined once the service is gone.
     */
    async publicHostnameOf(serviceId: string): Promise<string | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined) return undefined;
      try {
        return publicHostname(row.hostname_label ?? (await claimFreeHostnameLabel(serviceId)), deps.appsDomain);
      } catch (error) {
        // Deleted between the read and the claim.
        if (error instanceof AppError && error.kind === 'not_found') return undefined;
        throw error;
      }
    },

    /** A database's connection for its agent (what to run, on which port, with which credentials). */
    async databaseConnection(serviceId: string): Promise<DatabaseConnection | undefined> {
      let row = await findServiceRow(db, serviceId);
      if (row === undefined || row.kind !== 'DATABASE') return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      const local = environment !== undefined && (await runsLocally(environment.clusterId));
      if (local && row.local_port === null) row = { ...row, local_port: await claimFreeLocalPort(serviceId) };
      return databaseConnectionOf(row, local);
    },
  };
}
