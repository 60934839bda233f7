import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import { Backup, BackupListQuery, BackupPaginatedResponseList, BackupRequest, DatabaseBackupParams, DatabaseParams, BACKUPS_PER_PAGE } from './database-backups.schemas.ts';
import type { DatabaseBackupsService } from './database-backups.service.ts';

const TAGS = ['Backups'];

/** A database's backups (docs/database-backups.md). */
export function registerDatabaseBackupRoutes(app: FastifyTypeBox, backups: DatabaseBackupsService): void {
  app.get(
    '/database/:databaseId/backup',
    {
      schema: {
        operationId: 'listDatabaseBackup',
        summary: "List the database's backups",
        description:
          `The database's backups, newest first, ${BACKUPS_PER_PAGE} a page; startId continues after that backup. Each says ` +
          'its state (QUEUED, EXECUTING, READY, DEPLOYMENT_ERROR with the failure) and, once READY, the size of its file. ' +
          '404 for an unknown database.',
        tags: TAGS,
        params: DatabaseParams,
        querystring: BackupListQuery,
        response: { 200: BackupPaginatedResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => backups.listBackups(request.params.databaseId, request.query.startId),
  );

  app.post(
    '/database/:databaseId/backup',
    {
      schema: {
        operationId: 'addBackupDatabase',
        summary: 'Back the database up',
        description:
          'Records a backup (QUEUED) and answers; a worker then dumps the running database with its engine’s own tool ' +
          '(pg_dump, mariadb-dump, a Redis RDB snapshot) into a file kept by the installation, and the backup becomes ' +
          'READY with its size, or DEPLOYMENT_ERROR saying why. 400 when the database is not running, is not on the ' +
          'local engine (Kubernetes: docs/database-backups.md) or is of a type without a local engine; 409 when another ' +
          'backup of the database has that name; 404 for an unknown database.',
        tags: TAGS,
        params: DatabaseParams,
        body: BackupRequest,
        response: { 201: Backup, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await backups.addBackup(request.params.databaseId, request.body)),
  );

  app.delete(
    '/database/:databaseId/backup/:backupId',
    {
      schema: {
        operationId: 'removeDatabaseBackup',
        summary: 'Remove a backup',
        description: 'Removes the backup and its file. 404 for an unknown database, or a backup that is not one of its backups.',
        tags: TAGS,
        params: DatabaseBackupParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => {
      await backups.removeBackup(request.params.databaseId, request.params.backupId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
