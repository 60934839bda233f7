import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, Uuid } from '../../protocol/wire.ts';
import {
  Credentials,
  DatabaseConfigurationResponseList,
  databaseConfigurations,
  VersionResponseList,
  type DatabaseLinks,
} from './services.database-links.ts';
import { applicationKind } from './services.kind-application.ts';

const DatabaseParams = Type.Object({ databaseId: Uuid }, { additionalProperties: false });

export function registerDatabaseLinkRoutes(app: FastifyTypeBox, links: DatabaseLinks): void {
  app.get(
    '/database/:databaseId/application',
    {
      schema: {
        operationId: 'listDatabaseApplication',
        summary: 'List the applications using a database',
        description:
          "The applications of the database's environment that alias one of its built-in variables " +
          '(PLATFORM_DATABASE_<NAME>_*) in a variable of their own: every service sees the built-ins, an alias is how an ' +
          'application is connected to the database. 404 for an unknown database.',
        tags: ['Database Application'],
        params: DatabaseParams,
        response: { 200: applicationKind.listResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await links.listDatabaseApplications(request.params.databaseId) }),
  );

  app.delete(
    '/database/:databaseId/application/:targetApplicationId',
    {
      schema: {
        operationId: 'removeApplicationFromDatabase',
        summary: 'Disconnect an application from a database',
        description:
          "Removes the application's own variables that alias the database's built-ins; the application's next deploy " +
          'runs without them, and the database is unchanged. 204 also when it aliased none; 404 for an unknown database, ' +
          'or an application outside its environment.',
        tags: ['Database Application'],
        params: Type.Object({ databaseId: Uuid, targetApplicationId: Uuid }, { additionalProperties: false }),
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'variables:delete', target: 'service' } },
    },
    async (request, reply) => {
      await links.removeApplicationFromDatabase(request.params.databaseId, request.params.targetApplicationId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/database/:databaseId/version',
    {
      schema: {
        operationId: 'listDatabaseVersion',
        summary: 'List the versions a database may move to',
        description: 'Its own version and the newer ones of its type, oldest first: what editDatabase accepts (a database is upgraded, never downgraded). 404 for an unknown database.',
        tags: ['Database Main Calls'],
        params: DatabaseParams,
        response: { 200: VersionResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await links.listDatabaseVersions(request.params.databaseId) }),
  );

  app.get(
    '/database/:databaseId/masterCredentials',
    {
      schema: {
        operationId: 'getDatabaseMasterCredentials',
        summary: "Reveal a database's master credentials",
        description:
          "The host, port, login and password of the database, as its hidden built-ins give them to the environment's " +
          'services. Needs the permission to reveal secrets (secrets:reveal) in its environment, 403 without; every ' +
          'answer is recorded in the audit log. 404 for an unknown database.',
        tags: ['Database Main Calls'],
        params: DatabaseParams,
        response: { 200: Credentials, ...authenticatedErrors() },
      },
      config: { access: { permission: 'secrets:reveal', target: 'service' }, audited: true },
    },
    async (request) => links.getMasterCredentials(request.params.databaseId),
  );

  app.get(
    '/environment/:environmentId/databaseConfiguration',
    {
      schema: {
        operationId: 'listEnvironmentDatabaseConfig',
        summary: 'List the database types, versions and modes',
        description: 'Each database type with the versions a new database of it may have, in each mode (CONTAINER, MANAGED) createDatabase accepts. 404 for an unknown environment.',
        tags: ['Databases'],
        params: Type.Object({ environmentId: Uuid }, { additionalProperties: false }),
        response: { 200: DatabaseConfigurationResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'environment' } },
    },
    async () => ({ results: databaseConfigurations() }),
  );
}
