import { randomBytes } from 'node:crypto';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { readJson } from '../../db/db.json.ts';
import { AppError, conflict, notFound } from '../../lib/errors.ts';
import { nameKey } from '../../lib/names.ts';
import type { DatabaseType, ServiceForVariables, ServiceKind } from '../variables/variables.builtins.ts';
import { hostnameLabelCandidate, publicHostname } from './services.hostnames.ts';
import type { ServiceRecords } from './services.records.ts';
import { claimHostnameLabel, findServiceRow, listServicesOfEnvironment, type ServiceRow } from './services.repo.ts';
import type { DatabaseConnection, ServicesDeps } from './services.service.ts';

/**
 * Where a service is reached (a part of the services service, assembled in services.service.ts), in two steps: the
 * claims give a service what is its own — a database's generated credentials, sealed with its row; once, the label of
 * its public hostname — and the addresses answer from them where other services, its agent and the variables
 * module's built-ins reach it.
 *
 * Inside its environment a service is reached by intent, whatever the driver: its internal hostname and the ports it
 * declares (a database, its engine's standard port). Placement is the driver's (docs/decisions.md, "Placement"): the
 * local driver stands a loopback address of its own for each hostname, Kubernetes a Service; the control plane never
 * chooses a host, an address or a port.
 */

/**
 * The hostname of a service inside its environment's network, with a fixed shape: stable per service name, unique per
 * environment, never reachable from outside. The agent's driver resolves it on its cluster.
 */
export function internalHostname(service: { name: string; environmentId: string }): string {
  return `${nameKey(service.name)}.${service.environmentId}.slipway.internal`;
}

/** Candidates of 40 bits each: a fifth collision in a row would take more services than any installation holds. */
const HOSTNAME_LABEL_ATTEMPTS = 5;

/** Kinds that serve on ports inside their environment, hence get an internal hostname (databases too: their engine's port). */
export const ADDRESSED_KINDS: ReadonlySet<string> = new Set(['APPLICATION', 'CONTAINER']);

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
 * is created or first needs it, a public hostname label.
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

  return { openCredentials, sealNewCredentials, claimFreeHostnameLabel };
}

export type ServiceClaims = ReturnType<typeof createServiceClaims>;

/** Where a service is reached, as the variables module, the agent's spec and the routes ask it. */
export function createServiceAddresses(
  deps: Pick<ServicesDeps, 'db' | 'environments' | 'sharedPostgres' | 'appsDomain'>,
  records: Pick<ServiceRecords, 'findDefinition' | 'databaseSummaryOf'>,
  claims: ServiceClaims,
) {
  const { db } = deps;
  const { openCredentials, claimFreeHostnameLabel } = claims;

  function hostnameOf(row: ServiceRow): string {
    return internalHostname({ name: row.name, environmentId: row.environment_id });
  }

  function databaseConnectionOf(row: ServiceRow, settings = readJson<Record<string, unknown>>(row.settings)): DatabaseConnection | undefined {
    const database = records.databaseSummaryOf(row.kind, settings, row.name);
    const credentials = database === undefined ? undefined : openCredentials(row);
    if (database === undefined || credentials === undefined) return undefined;
    // Names on the shared server must not collide between services: the service's id goes into them. Whether a
    // database lands there is its driver's choice; its name is decided here, so every driver agrees on it.
    const shared = deps.sharedPostgres === true && database.type === 'POSTGRESQL';
    return {
      type: database.type,
      version: database.version,
      host: hostnameOf(row),
      port: database.port,
      username: credentials.username,
      password: credentials.password,
      databaseName: shared ? `${database.dbName}_${row.id.replaceAll('-', '').slice(0, 12)}` : database.dbName,
      shared,
    };
  }

  /** The ports a service declares inside its environment: an application's or container's internal ports, a database's engine port. */
  function declaredPortsOf(row: ServiceRow): number[] {
    const settings = readJson<Record<string, unknown>>(row.settings);
    if (ADDRESSED_KINDS.has(row.kind)) return records.findDefinition(row.kind as ServiceKind)?.references(settings).internalPorts ?? [];
    const database = records.databaseSummaryOf(row.kind, settings, row.name);
    return database === undefined ? [] : [database.port];
  }

  /**
   * Every resolution of a service's variables reads what all the services of its environment are (their built-ins),
   * and parsing their settings was most of its cost in a large environment (500 services on SQLite: 5 ms of 14). What
   * a row says is kept per service while the row is the same: the same columns and the same settings text. Only for
   * settings read as text (SQLite): PostgreSQL's driver has parsed jsonb already, and an object cannot be compared
   * for sameness cheaply (an update time can repeat within a millisecond).
   */
  const variablesOfRow = new Map<string, { row: ServiceRow; service: ServiceForVariables }>();
  const VARIABLES_OF_ROW_LIMIT = 20_000;

  function forVariablesOnce(row: ServiceRow): ServiceForVariables {
    if (typeof row.settings !== 'string') return forVariables(row);
    const kept = variablesOfRow.get(row.id);
    if (
      kept !== undefined &&
      kept.row.settings === row.settings &&
      kept.row.name === row.name &&
      kept.row.kind === row.kind &&
      kept.row.environment_id === row.environment_id &&
      kept.row.credentials_envelope === row.credentials_envelope
    ) {
      return kept.service;
    }
    const service = forVariables(row);
    if (variablesOfRow.size >= VARIABLES_OF_ROW_LIMIT) variablesOfRow.clear();
    variablesOfRow.set(row.id, { row, service });
    return service;
  }

  /** What the variables module's built-ins say of one service (hostname, branch, a database's connection). */
  function forVariables(row: ServiceRow): ServiceForVariables {
    const kind = row.kind as ServiceKind;
    const settings = readJson<Record<string, unknown>>(row.settings);
    const references = records.findDefinition(kind)?.references(settings);
    const service: ServiceForVariables = { id: row.id, kind, name: row.name, branch: references?.branch ?? null };
    if (ADDRESSED_KINDS.has(kind)) service.hostname = hostnameOf(row);
    const connection = databaseConnectionOf(row, settings);
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
      return (await listServicesOfEnvironment(db, environmentId)).map(forVariablesOnce);
    },

    /**
     * Where the other services of its environment reach a service: its internal hostname and declared ports;
     * undefined for a service that declares none (a job, a helm chart, an application without internal ports).
     */
    async internalEndpointOf(serviceId: string): Promise<{ hostname: string; ports: number[] } | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined) return undefined;
      const ports = declaredPortsOf(row);
      return ports.length === 0 ? undefined : { hostname: hostnameOf(row), ports };
    },

    /** The services of an environment that have an internal endpoint, by internal hostname: what a driver resolves. */
    async internalPeersOf(environmentId: string): Promise<Array<{ serviceId: string; hostname: string }>> {
      return (await listServicesOfEnvironment(db, environmentId))
        .filter((row) => declaredPortsOf(row).length > 0)
        .map((row) => ({ serviceId: row.id, hostname: hostnameOf(row) }));
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

    /** A database's connection for its agent (its credentials and the name of its database). */
    async databaseConnection(serviceId: string): Promise<DatabaseConnection | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined || row.kind !== 'DATABASE') return undefined;
      return databaseConnectionOf(row);
    },
  };
}
