import { Type, type Static } from 'typebox';
import { ListOf } from '../../protocol/wire.ts';
import { badRequest } from '../../lib/errors.ts';
import { builtInNamePart, DATABASE_TYPES, type DatabaseType } from '../variables/variables.builtins.ts';
import {
  AnnotationsGroupResponseList,
  annotationsGroupsResponse,
  groupIdsFrom,
  GroupReferenceList,
  LabelsGroupResponseList,
  labelsGroupsResponse,
  LIMITS,
  ServiceDescription,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  settingsOf,
  withoutDefaults,
} from './services.kind-fields.ts';
import { IconUri } from './services.kind-workload.ts';
import type { DatabaseSummary, KindWrite, LinkedRecords, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * DATABASE: a database server of one of the reference's DatabaseTypeEnum types. Shapes: the reference's
 * DatabaseRequest / DatabaseEditRequest / Database. Rules (docs/service-kinds.md):
 * - version: one of the supported major versions of its type; an edit may upgrade it, never downgrade (a data
 *   directory cannot go back to an older server);
 * - mode CONTAINER runs the server as a workload sized by cpu/memory; MANAGED asks the cluster's cloud for a managed
 *   instance sized by instance_type, so instance_type is required there and refused for CONTAINER;
 * - type and mode are fixed at creation (DatabaseEditRequest has neither: changing them means a new server);
 * - storage in GiB, default 10, grows only;
 * - accessibility PUBLIC makes the server reachable from the internet (SPEC.md: publicly reachable only then).
 * Credentials (username/password) are generated and sealed by the services module, not chosen in a request.
 */

/** Supported major versions, oldest first: an edit may only move right in this list. */
export const DATABASE_VERSIONS: Record<DatabaseType, readonly string[]> = {
  POSTGRESQL: ['13', '14', '15', '16', '17'],
  MYSQL: ['8.0', '8.4'],
  MONGODB: ['6.0', '7.0', '8.0'],
  REDIS: ['6', '7'],
};

/** The port each type listens on inside the environment. */
export const DATABASE_PORTS: Record<DatabaseType, number> = { POSTGRESQL: 5432, MYSQL: 3306, MONGODB: 27017, REDIS: 6379 };

export const DATABASE_MODES = ['CONTAINER', 'MANAGED'] as const;
export const DATABASE_ACCESSIBILITIES = ['PRIVATE', 'PUBLIC'] as const;

const DEFAULT_ICON = 'app://slipway-console/database';
const DEFAULT_STORAGE_GIB = 10;
const DEFAULT_CPU = 250;
const DEFAULT_MEMORY = 256;

/** A cloud instance class as providers spell them: db.t3.micro, cache.t4g.small, DB-DEV-S. */
const InstanceType = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });
const Version = Type.String({ minLength: 1, maxLength: 16, pattern: '^[0-9][0-9.]*$' });

const editableFields = {
  description: Type.Optional(ServiceDescription),
  accessibility: Type.Optional(Type.Enum(DATABASE_ACCESSIBILITIES, { default: 'PRIVATE' })),
  cpu: Type.Optional(Type.Integer({ minimum: LIMITS.cpuMillicores.min, maximum: LIMITS.cpuMillicores.max, default: DEFAULT_CPU, description: 'millicores' })),
  memory: Type.Optional(Type.Integer({ minimum: LIMITS.memoryMib.min, maximum: LIMITS.memoryMib.max, description: 'MiB' })),
  storage: Type.Optional(Type.Integer({ minimum: LIMITS.storageGib.min, maximum: LIMITS.storageGib.max, default: DEFAULT_STORAGE_GIB, description: 'GiB' })),
  instance_type: Type.Optional(InstanceType),
  annotations_groups: Type.Optional(GroupReferenceList),
  labels_groups: Type.Optional(GroupReferenceList),
  icon_uri: Type.Optional(IconUri),
};

export const DatabaseRequest = Type.Object(
  {
    name: ServiceName,
    type: Type.Enum(DATABASE_TYPES),
    version: Version,
    mode: Type.Enum(DATABASE_MODES),
    ...editableFields,
  },
  {
    $id: 'DatabaseRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'orders-db',
        description: 'Orders and customers',
        type: 'POSTGRESQL',
        version: '16',
        mode: 'CONTAINER',
        accessibility: 'PRIVATE',
        cpu: 500,
        memory: 1024,
        storage: 20,
      },
    ],
  },
);
type DatabaseBody = Static<typeof DatabaseRequest>;

export const DatabaseEditRequest = Type.Object(
  { name: Type.Optional(ServiceName), version: Type.Optional(Version), ...withoutDefaults(editableFields) },
  { $id: 'DatabaseEditRequest', additionalProperties: false },
);
type DatabaseEditBody = Static<typeof DatabaseEditRequest>;

export const Database = Type.Object(
  {
    ...ServiceResponseFields,
    type: Type.Enum(DATABASE_TYPES),
    version: Type.String(),
    mode: Type.Enum(DATABASE_MODES),
    accessibility: Type.Enum(DATABASE_ACCESSIBILITIES),
    cpu: Type.Integer(),
    memory: Type.Integer(),
    storage: Type.Integer(),
    instance_type: Type.Optional(Type.String()),
    port: Type.Integer(),
    annotations_groups: AnnotationsGroupResponseList,
    labels_groups: LabelsGroupResponseList,
    icon_uri: Type.String(),
    service_type: Type.Literal('DATABASE'),
  },
  {
    $id: 'Database',
    examples: [
      {
        id: 'c8a4f2d6-0e9b-4b71-8d3a-5f2e7c1a9b40',
        created_at: '2026-03-02T11:27:09.606Z',
        updated_at: '2026-03-02T11:27:09.606Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'orders-db',
        description: 'Orders and customers',
        type: 'POSTGRESQL',
        version: '16',
        mode: 'CONTAINER',
        accessibility: 'PRIVATE',
        cpu: 500,
        memory: 1024,
        storage: 20,
        port: 5432,
        annotations_groups: [],
        labels_groups: [],
        icon_uri: 'app://slipway-console/database',
        service_type: 'DATABASE',
      },
    ],
  },
);
export const DatabaseResponseList = ListOf(Database, 'DatabaseResponseList');

export interface DatabaseSettings {
  type: DatabaseType;
  version: string;
  mode: 'CONTAINER' | 'MANAGED';
  accessibility: 'PRIVATE' | 'PUBLIC';
  cpu: number;
  memory: number;
  storage: number;
  instance_type: string | null;
  annotations_groups: string[];
  labels_groups: string[];
  icon_uri: string;
}

function checkVersion(type: DatabaseType, version: string, current: string | undefined): void {
  const versions = DATABASE_VERSIONS[type];
  const index = versions.indexOf(version);
  if (index < 0) {
    throw badRequest(`${type} ${version} is not a supported version (supported: ${versions.join(', ')})`, [{ field: '/version', message: `must be one of ${versions.join(', ')}` }]);
  }
  if (current !== undefined && index < versions.indexOf(current)) {
    throw badRequest(`${type} cannot go back from ${current} to ${version}`, [{ field: '/version', message: 'a database can be upgraded, not downgraded' }]);
  }
}

async function databaseSettings(
  body: DatabaseEditBody,
  fixed: { type: DatabaseType; mode: 'CONTAINER' | 'MANAGED'; version: string },
  current: DatabaseSettings | undefined,
  context: ServiceKindContext,
): Promise<DatabaseSettings> {
  checkVersion(fixed.type, fixed.version, current?.version);
  const instanceType = body.instance_type ?? current?.instance_type ?? null;
  if (fixed.mode === 'MANAGED' && instanceType === null) {
    throw badRequest('a MANAGED database is sized by its instance_type', [{ field: '/instance_type', message: 'required in MANAGED mode' }]);
  }
  if (fixed.mode === 'CONTAINER' && instanceType !== null) {
    throw badRequest('a CONTAINER database is sized by cpu and memory, not by an instance type', [{ field: '/instance_type', message: 'only in MANAGED mode' }]);
  }
  const storage = body.storage ?? current?.storage ?? DEFAULT_STORAGE_GIB;
  if (current !== undefined && storage < current.storage) {
    throw badRequest(`storage cannot shrink (now ${current.storage} GiB)`, [{ field: '/storage', message: 'a volume grows, it does not shrink' }]);
  }
  return {
    type: fixed.type,
    version: fixed.version,
    mode: fixed.mode,
    accessibility: body.accessibility ?? current?.accessibility ?? 'PRIVATE',
    cpu: body.cpu ?? current?.cpu ?? DEFAULT_CPU,
    memory: body.memory ?? current?.memory ?? DEFAULT_MEMORY,
    storage,
    instance_type: instanceType,
    annotations_groups: body.annotations_groups !== undefined ? await groupIdsFrom(body.annotations_groups, 'annotations', context) : (current?.annotations_groups ?? []),
    labels_groups: body.labels_groups !== undefined ? await groupIdsFrom(body.labels_groups, 'labels', context) : (current?.labels_groups ?? []),
    icon_uri: body.icon_uri ?? current?.icon_uri ?? DEFAULT_ICON,
  };
}

/** The database created inside the server: the service name as an identifier (`orders-db` → `orders_db`); Redis numbers its databases. */
export function databaseNameOf(type: DatabaseType, serviceName: string): string {
  return type === 'REDIS' ? '0' : builtInNamePart(serviceName).toLowerCase();
}

export const databaseKind: ServiceKindDefinition = {
  kind: 'DATABASE',
  collection: 'database',
  item: 'database',
  idParam: 'databaseId',
  operations: { list: 'listDatabase', create: 'createDatabase', get: 'getDatabase', edit: 'editDatabase', delete: 'deleteDatabase' },
  operationNoun: 'Database',
  tags: ['Databases'],
  prose: {
    aService: 'a database',
    theService: 'the database',
    services: 'databases',
    what: 'A database runs a PostgreSQL, MySQL, MongoDB or Redis server of the version asked, in the environment (mode CONTAINER, sized by cpu and memory) or as a managed instance (MANAGED, sized by its instance_type); its credentials are generated, and the other services of the environment receive them as built-in variables.',
    checks: "400 for a version its type does not support, an instance_type in CONTAINER mode or none in MANAGED mode, and on an edit a version older than the stored one or a storage that shrinks; 404 for a labels or annotations group that is not the organization's.",
  },
  createBody: DatabaseRequest,
  editBody: DatabaseEditRequest,
  response: Database,
  listResponse: DatabaseResponseList,

  async fromCreate(body: unknown, context: ServiceKindContext): Promise<KindWrite> {
    const request = body as DatabaseBody;
    const settings = await databaseSettings(request, { type: request.type, mode: request.mode, version: request.version }, undefined, context);
    return { name: request.name, description: request.description ?? null, settings: { ...settings } };
  },

  async fromEdit(current: StoredService, body: unknown, context: ServiceKindContext): Promise<KindWrite> {
    const request = body as DatabaseEditBody;
    const stored = settingsOf<DatabaseSettings>(current.settings);
    const settings = await databaseSettings(request, { type: stored.type, mode: stored.mode, version: request.version ?? stored.version }, stored, context);
    return { name: request.name ?? current.name, description: request.description !== undefined ? request.description : current.description, settings: { ...settings } };
  },

  toResponse(service: StoredService, linked: LinkedRecords): Static<typeof Database> {
    const settings = settingsOf<DatabaseSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      type: settings.type,
      version: settings.version,
      mode: settings.mode,
      accessibility: settings.accessibility,
      cpu: settings.cpu,
      memory: settings.memory,
      storage: settings.storage,
      ...(settings.instance_type !== null ? { instance_type: settings.instance_type } : {}),
      port: DATABASE_PORTS[settings.type],
      annotations_groups: annotationsGroupsResponse(settings.annotations_groups, linked),
      labels_groups: labelsGroupsResponse(settings.labels_groups, linked),
      icon_uri: settings.icon_uri,
      service_type: 'DATABASE',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<DatabaseSettings>(stored);
    return {
      gitTokenId: null,
      containerRegistryId: null,
      helmRepositoryId: null,
      labelsGroupIds: settings.labels_groups,
      annotationsGroupIds: settings.annotations_groups,
      branch: null,
      publiclyReachable: settings.accessibility === 'PUBLIC',
      internalPorts: [],
    };
  },

  database(stored: Record<string, unknown>, serviceName: string): DatabaseSummary {
    const settings = settingsOf<DatabaseSettings>(stored);
    return {
      type: settings.type,
      version: settings.version,
      mode: settings.mode,
      accessibility: settings.accessibility,
      port: DATABASE_PORTS[settings.type],
      dbName: databaseNameOf(settings.type, serviceName),
    };
  },
};
