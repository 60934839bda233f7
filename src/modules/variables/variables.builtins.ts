import { createHash } from 'node:crypto';

/**
 * Built-in variables (SPEC.md "Environment variable scopes and behaviour", rule 6 and its table): injected by the
 * platform per environment, per application and per database, never stored. Names are exactly the table's; <NAME> is
 * the upper-cased service or database name with dashes turned into underscores.
 */

export const SERVICE_KINDS = ['APPLICATION', 'CONTAINER', 'DATABASE', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

export const DATABASE_TYPES = ['POSTGRESQL', 'MYSQL', 'MONGODB', 'REDIS'] as const;
export type DatabaseType = (typeof DATABASE_TYPES)[number];

/** What the services module tells variables about one service of an environment (the ServiceVariableContext port). */
export interface ServiceForVariables {
  id: string;
  kind: ServiceKind;
  name: string;
  /** The internal hostname of an application or container, when it has one. */
  hostname?: string | null;
  /** The git branch a service builds from, when it builds from git. */
  branch?: string | null;
  database?: DatabaseConnection;
}

export interface DatabaseConnection {
  type: DatabaseType;
  version: string;
  /** Hostname inside the environment's network. */
  host: string;
  /** Fully qualified name reachable from outside the environment; the internal host when it has none. */
  fqdn?: string | null;
  port: number;
  username: string;
  password: string;
  dbName: string;
}

/** The environment as the built-ins describe it (the environments module's EnvironmentSummary, or a subset of it). */
export interface EnvironmentForVariables {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  mode: string;
  clusterId: string;
}

export interface BuiltInVariable {
  /** Stable per environment and name, so the alias and override endpoints can name a built-in by id. */
  id: string;
  key: string;
  value: string;
  /** Marked "Hidden" in SPEC.md's table: left out of listings unless the caller asks to reveal and may. */
  sensitive: boolean;
  /** The service or database the variable describes; undefined for the environment's own. */
  service?: { id: string; name: string; kind: ServiceKind };
}

export const RESERVED_PREFIX = 'PLATFORM_';

/** Fixed namespace of built-in ids (uuid v5 over environment id and name): the same built-in always has one id. */
const BUILT_IN_NAMESPACE = Buffer.from('5b0f7c523f0e4a519d516a1f1c0e8b21', 'hex');

/**
 * RFC 9562 uuid v5 (SHA-1 of namespace and name, version and variant bits set), computed with node:crypto directly:
 * a resolution makes one per built-in, and the generic implementation costs ten times as much.
 */
export function builtInId(environmentId: string, key: string): string {
  const digest = createHash('sha1').update(BUILT_IN_NAMESPACE).update(`${environmentId}:${key}`, 'utf8').digest();
  digest[6] = ((digest[6] as number) & 0x0f) | 0x50;
  digest[8] = ((digest[8] as number) & 0x3f) | 0x80;
  const hex = digest.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** `my-db` → `MY_DB`, as SPEC.md's rule 6 spells <NAME>. */
export function builtInNamePart(name: string): string {
  return name.toUpperCase().replace(/-/g, '_');
}

const DATABASE_SUFFIXES = [
  'DATABASE',
  'USERNAME',
  'PASSWORD',
  'PORT',
  'FQDN',
  'HOST',
  'CONNECTION_URI',
  'CONNECTION_URI_WITHOUT_CREDENTIALS',
  'VERSION',
  'TYPE',
  'NAME',
] as const;
type DatabaseSuffix = (typeof DATABASE_SUFFIXES)[number];

/** The "Hidden" rows of SPEC.md's table. */
const SENSITIVE_DATABASE_SUFFIXES: ReadonlySet<DatabaseSuffix> = new Set([
  'USERNAME',
  'PASSWORD',
  'PORT',
  'FQDN',
  'HOST',
  'CONNECTION_URI',
  'CONNECTION_URI_WITHOUT_CREDENTIALS',
]);

const URI_SCHEMES: Record<DatabaseType, string> = {
  POSTGRESQL: 'postgresql',
  MYSQL: 'mysql',
  MONGODB: 'mongodb',
  REDIS: 'redis',
};

/**
 * The names of the built-ins that describe one service of an environment (its hostname, its database's connection),
 * whatever their values: what a variable aliasing one of them needs that service for.
 */
export function builtInKeysOf(service: { kind: ServiceKind; name: string }): string[] {
  const name = builtInNamePart(service.name);
  if (service.kind === 'APPLICATION') return [`PLATFORM_APPLICATION_${name}_HOSTNAME`];
  if (service.kind === 'DATABASE') return DATABASE_SUFFIXES.map((suffix) => `PLATFORM_DATABASE_${name}_${suffix}`);
  return [];
}

/** Built-in names that exist in any environment, whatever services it holds. */
export const ENVIRONMENT_BUILT_IN_NAMES = ['PLATFORM_JSON_B64', 'PLATFORM_BRANCH_NAME', 'PLATFORM_IS_PRODUCTION'] as const;

const BUILT_IN_NAME_PATTERN = new RegExp(
  `^(?:${ENVIRONMENT_BUILT_IN_NAMES.join('|')}|PLATFORM_APPLICATION_[A-Z0-9_]+_HOSTNAME|PLATFORM_DATABASE_[A-Z0-9_]+_(?:${DATABASE_SUFFIXES.join('|')}))$`,
);

/** True for a name shaped like one of SPEC.md's built-ins (whether or not the environment has that service). */
export function isBuiltInShapedName(name: string): boolean {
  return BUILT_IN_NAME_PATTERN.test(name);
}

function connectionUri(database: DatabaseConnection, withCredentials: boolean): string {
  const credentials = withCredentials
    ? `${encodeURIComponent(database.username)}:${encodeURIComponent(database.password)}@`
    : '';
  const path = database.dbName === '' ? '' : `/${encodeURIComponent(database.dbName)}`;
  return `${URI_SCHEMES[database.type]}://${credentials}${database.host}:${database.port}${path}`;
}

function databaseValue(suffix: DatabaseSuffix, service: ServiceForVariables, database: DatabaseConnection): string {
  switch (suffix) {
    case 'DATABASE':
      return database.dbName;
    case 'USERNAME':
      return database.username;
    case 'PASSWORD':
      return database.password;
    case 'PORT':
      return String(database.port);
    case 'FQDN':
      return database.fqdn ?? database.host;
    case 'HOST':
      return database.host;
    case 'CONNECTION_URI':
      return connectionUri(database, true);
    case 'CONNECTION_URI_WITHOUT_CREDENTIALS':
      return connectionUri(database, false);
    case 'VERSION':
      return database.version;
    case 'TYPE':
      return database.type;
    case 'NAME':
      return service.name;
  }
}

/**
 * The environment description of PLATFORM_JSON_B64. It is not a hidden variable, so it carries only what every reader
 * of the environment may see: ids, names, kinds — no hostnames, ports or credentials.
 */
function environmentDescription(environment: EnvironmentForVariables, services: readonly ServiceForVariables[]): string {
  const description = {
    id: environment.id,
    name: environment.name,
    mode: environment.mode,
    project_id: environment.projectId,
    organization_id: environment.organizationId,
    cluster_id: environment.clusterId,
    services: services.map((service) => ({ id: service.id, name: service.name, type: service.kind })),
  };
  return Buffer.from(JSON.stringify(description), 'utf8').toString('base64');
}

/**
 * The built-ins one consumer sees: the environment's own, one hostname per application, eleven per database. With a
 * `target` service, PLATFORM_BRANCH_NAME is its branch when it builds from git; otherwise the environment's name
 * (environments are named after the branch they deploy, previews above all).
 */
export function builtInVariables(
  environment: EnvironmentForVariables,
  services: readonly ServiceForVariables[],
  target?: ServiceForVariables,
): BuiltInVariable[] {
  const out: BuiltInVariable[] = [];
  const add = (key: string, value: string, sensitive: boolean, service?: ServiceForVariables) => {
    out.push({
      id: builtInId(environment.id, key),
      key,
      value,
      sensitive,
      ...(service === undefined ? {} : { service: { id: service.id, name: service.name, kind: service.kind } }),
    });
  };
  add('PLATFORM_JSON_B64', environmentDescription(environment, services), false);
  add('PLATFORM_BRANCH_NAME', target?.branch ?? environment.name, false);
  add('PLATFORM_IS_PRODUCTION', environment.mode === 'PRODUCTION' ? 'true' : 'false', false);
  for (const service of services) {
    const name = builtInNamePart(service.name);
    if (service.kind === 'APPLICATION' && service.hostname !== undefined && service.hostname !== null) {
      add(`PLATFORM_APPLICATION_${name}_HOSTNAME`, service.hostname, true, service);
    }
    if (service.kind === 'DATABASE' && service.database !== undefined) {
      for (const suffix of DATABASE_SUFFIXES) {
        add(`PLATFORM_DATABASE_${name}_${suffix}`, databaseValue(suffix, service, service.database), SENSITIVE_DATABASE_SUFFIXES.has(suffix), service);
      }
    }
  }
  return out;
}
