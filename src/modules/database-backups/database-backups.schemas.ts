import { Type, type Static } from 'typebox';
import { BaseFields, Description, Name, Nullable, Uuid } from '../../protocol/wire.ts';

/** Wire shapes of the reference's Backups operations (docs/database-backups.md). */

export const DatabaseParams = Type.Object({ databaseId: Uuid }, { additionalProperties: false });
export const DatabaseBackupParams = Type.Object({ databaseId: Uuid, backupId: Uuid }, { additionalProperties: false });

/** The reference's startId: the listing continues after that backup (newest first). */
export const BackupListQuery = Type.Object({ startId: Type.Optional(Uuid) }, { additionalProperties: false });

export const BackupRequest = Type.Object(
  { name: Name, message: Description },
  { $id: 'BackupRequest', additionalProperties: false },
);
export type BackupBody = Static<typeof BackupRequest>;

/** Where a backup is: asked (QUEUED), being dumped (EXECUTING), complete (READY) or failed (DEPLOYMENT_ERROR). */
export const BACKUP_STATES = ['QUEUED', 'EXECUTING', 'READY', 'DEPLOYMENT_ERROR'] as const;
export type BackupState = (typeof BACKUP_STATES)[number];

/** The reference's Status, as a backup fills it: its state, and the action's progress in status_details. */
const BackupStatus = Type.Object({
  id: Uuid,
  state: Type.Enum(BACKUP_STATES),
  service_deployment_status: Type.Literal('UP_TO_DATE'),
  status_details: Type.Object({
    action: Type.Literal('DEPLOY'),
    status: Type.Enum(['QUEUED', 'ONGOING', 'SUCCESS', 'ERROR']),
    sub_action: Type.Literal('NONE'),
  }),
  is_part_last_deployment: Type.Boolean(),
  deployment_requests_count: Type.Integer(),
  deployment_request_id: Nullable(Uuid),
  execution_id: Type.Optional(Type.String({ description: 'The backup job that makes the dump.' })),
});

export const Backup = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    message: Type.String(),
    status: BackupStatus,
    engine: Type.String({ description: 'What the file is: POSTGRESQL (pg_dump custom format), MYSQL (SQL statements), REDIS (RDB snapshot).' }),
    size_bytes: Nullable(Type.Integer({ description: 'The size of the backup file once complete; null before.' })),
    failure: Nullable(Type.String({ description: 'Why the backup failed (DEPLOYMENT_ERROR); null otherwise.' })),
  },
  { $id: 'Backup' },
);
export type BackupView = Static<typeof Backup>;

export const BACKUPS_PER_PAGE = 50;

export const BackupPaginatedResponseList = Type.Object(
  { page: Type.Integer({ minimum: 1 }), page_size: Type.Integer(), results: Type.Array(Backup) },
  { $id: 'BackupPaginatedResponseList' },
);
