import { Type, type Static } from 'typebox';
import { AppError, notFound } from '../../lib/errors.ts';
import { ListOf } from '../../protocol/wire.ts';
import { builtInKeysOf, DATABASE_TYPES } from '../variables/variables.builtins.ts';
import type { VariablesService } from '../variables/variables.service.ts';
import type { DatabaseConnection } from './services.service.ts';
import { DATABASE_MODES, DATABASE_VERSIONS } from './services.kind-database.ts';
import type { StoredService } from './services.kinds.ts';

/**
 * The day-to-day operations of a database beside its settings (docs/service-extras.md "Databases"):
 *
 * - which applications use it (listDatabaseApplication). Every service of an environment sees every database's
 *   built-ins (PLATFORM_DATABASE_<NAME>_*), so seeing them says nothing; an application *uses* a database when one of
 *   its own variables aliases one of them (`DATABASE_URL` → `PLATFORM_DATABASE_ORDERS_CONNECTION_URI`), which is how a
 *   service is connected to a database it did not name itself. The reference answers applications, so only
 *   applications are listed; containers and jobs alias the same way but have no place in an ApplicationResponseList.
 * - removeApplicationFromDatabase removes those aliases from the application, through the variables module's own
 *   delete (the next deploy of the application no longer carries them); the database itself is unchanged.
 * - the versions it may move to (listDatabaseVersion), the versions and modes of each type
 *   (listEnvironmentDatabaseConfig), both from services.kind-database.ts, the one place a database's version is
 *   checked;
 * - its master credentials (getDatabaseMasterCredentials): the values of its hidden built-ins, shown only to a caller
 *   who may reveal secrets, and recorded in the audit log.
 */

export const DatabaseVersion = Type.Object({ name: Type.String() }, { $id: 'Version', additionalProperties: false });
export const VersionResponseList = ListOf(DatabaseVersion, 'VersionResponseList');

export const Credentials = Type.Object(
  {
    host: Type.String({ description: "The database's host inside its environment (PLATFORM_DATABASE_<NAME>_HOST)." }),
    port: Type.Integer(),
    login: Type.String(),
    password: Type.String(),
  },
  { $id: 'Credentials', additionalProperties: false },
);

const DatabaseVersionMode = Type.Object(
  { name: Type.String(), supported_mode: Type.Enum(DATABASE_MODES) },
  { $id: 'DatabaseVersionMode', additionalProperties: false },
);
export const DatabaseConfiguration = Type.Object(
  { database_type: Type.Enum(DATABASE_TYPES), version: Type.Array(DatabaseVersionMode) },
  { $id: 'DatabaseConfiguration', additionalProperties: false },
);
export const DatabaseConfigurationResponseList = ListOf(DatabaseConfiguration, 'DatabaseConfigurationResponseList');

export interface DatabaseLinksDeps {
  services: {
    /** 404 unless the id names a service of that kind (the authorizer already hid other organizations' ids). */
    requireService(kind: 'DATABASE' | 'APPLICATION', serviceId: string): Promise<StoredService>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
    /** The answers of listApplication for these rows' environment. */
    listServices(kind: 'APPLICATION', environmentId: string): Promise<Record<string, unknown>[]>;
    databaseConnection(serviceId: string): Promise<DatabaseConnection | undefined>;
  };
  /** The variables module's own operations on a service's variables: its listing and its delete. */
  variables: Pick<VariablesService, 'serviceOwner' | 'listVariables' | 'deleteVariable'>;
}

export function createDatabaseLinks(deps: DatabaseLinksDeps) {
  /** The application's own aliases of the database's built-ins (those it inherits are its environment's or project's). */
  async function aliasesOf(application: StoredService, databaseKeys: ReadonlySet<string>) {
    const owner = await deps.variables.serviceOwner(application.environmentId, application.id);
    const variables = await deps.variables.listVariables(owner, false);
    const aliases = variables.filter(
      (variable) =>
        variable.variable_type === 'ALIAS' &&
        variable.scope === owner.scope &&
        variable.aliased_variable !== undefined &&
        databaseKeys.has(variable.aliased_variable.key),
    );
    return { owner, aliases };
  }

  function builtInKeysOfDatabase(database: StoredService): Set<string> {
    return new Set(builtInKeysOf({ kind: 'DATABASE', name: database.name }));
  }

  return {
    async listDatabaseApplications(databaseId: string): Promise<Record<string, unknown>[]> {
      const database = await deps.services.requireService('DATABASE', databaseId);
      const keys = builtInKeysOfDatabase(database);
      const applications = (await deps.services.listEnvironmentServices(database.environmentId)).filter((service) => service.kind === 'APPLICATION');
      const using = new Set<string>();
      for (const application of applications) {
        if ((await aliasesOf(application, keys)).aliases.length > 0) using.add(application.id);
      }
      if (using.size === 0) return [];
      return (await deps.services.listServices('APPLICATION', database.environmentId)).filter((answer) => using.has(answer['id'] as string));
    },

    /**
     * Removes the application's aliases of the database's built-ins, one by one through the variables module (each
     * removal its own write, as the variable API's). 404 for an application outside the database's environment; an
     * application that aliases none of them is left as it is.
     */
    async removeApplicationFromDatabase(databaseId: string, applicationId: string): Promise<void> {
      const database = await deps.services.requireService('DATABASE', databaseId);
      const application = await deps.services.requireService('APPLICATION', applicationId);
      if (application.environmentId !== database.environmentId) {
        throw notFound(`application ${applicationId} not found in the environment of database ${database.name}`);
      }
      const { owner, aliases } = await aliasesOf(application, builtInKeysOfDatabase(database));
      for (const alias of aliases) {
        try {
          await deps.variables.deleteVariable(owner, alias.id);
        } catch (error) {
          // Removed meanwhile by another request: what was asked is done.
          if (!(error instanceof AppError && error.kind === 'not_found')) throw error;
        }
      }
    },

    /** The versions the database may be set to with editDatabase: its own and the newer ones of its type. */
    async listDatabaseVersions(databaseId: string): Promise<Array<Static<typeof DatabaseVersion>>> {
      const database = await deps.services.requireService('DATABASE', databaseId);
      const { type, version } = database.settings as { type: keyof typeof DATABASE_VERSIONS; version: string };
      const versions = DATABASE_VERSIONS[type];
      return versions.slice(Math.max(0, versions.indexOf(version))).map((name) => ({ name }));
    },

    async getMasterCredentials(databaseId: string): Promise<Static<typeof Credentials>> {
      await deps.services.requireService('DATABASE', databaseId);
      const connection = await deps.services.databaseConnection(databaseId);
      if (connection === undefined) throw notFound(`database ${databaseId} not found`);
      return { host: connection.host, port: connection.port, login: connection.username, password: connection.password };
    },
  };
}

/** Every type with the versions a new database of it may have, each in both modes the database kind accepts. */
export function databaseConfigurations(): Array<Static<typeof DatabaseConfiguration>> {
  return DATABASE_TYPES.map((type) => ({
    database_type: type,
    version: DATABASE_VERSIONS[type].flatMap((name) => DATABASE_MODES.map((mode) => ({ name, supported_mode: mode }))),
  }));
}

export type DatabaseLinks = ReturnType<typeof createDatabaseLinks>;
