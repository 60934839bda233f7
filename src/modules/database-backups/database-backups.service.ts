import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson } from '../../db/db.json.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { enqueueJobOf, handle, jobKind } from '../../jobs/job-kinds.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import { Uuid } from '../../protocol/wire.ts';
import {
  countBackupsFrom,
  deleteBackup,
  existingServiceIds,
  findBackedUpDatabase,
  findBackup,
  findBackupById,
  insertBackup,
  listBackups,
  updateBackup,
  type DatabaseBackupRow,
} from './database-backups.repo.ts';
import { BACKUPS_PER_PAGE, type BackupBody, type BackupState, type BackupView } from './database-backups.schemas.ts';

/**
 * Backups of database services (docs/database-backups.md). addBackupDatabase records the backup (QUEUED) and its job
 * in one transaction and answers; the worker's job makes the dump through the dump port — on the local engine, the
 * engine's own client tool against the server the local driver runs on this host — into
 * `<backupsDir>/<database id>/<backup id>.<dump|sql|rdb>`, then records its size (READY) or why it failed
 * (DEPLOYMENT_ERROR). The files are under the data directory, private to the server's account, and never served: an
 * organization reaches its backups only through these operations, which the authorizer confines to its databases.
 */

/** The engines a backup can be made of: the local engine's servers. */
const BACKED_UP_TYPES = new Set(['POSTGRESQL', 'MYSQL', 'REDIS']);
/** The states of a database whose server runs. */
const RUNNING_STATES = new Set(['DEPLOYED', 'RESTARTED']);
const SUFFIX: Record<string, string> = { POSTGRESQL: 'dump', MYSQL: 'sql', REDIS: 'rdb' };

export const DATABASE_BACKUP = jobKind('database.backup', Type.Object({ backupId: Uuid }));

/** The port to whatever makes dumps of a database service (app.ts fills it with the local engine's). */
export interface DatabaseDumpPort {
  dump(request: { serviceId: string; password: string; destination: string }): Promise<{ sizeBytes: number }>;
}

export interface DatabaseBackupsDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** Where backup files are kept: `<dataDir>/backups`. */
  backupsDir: string;
  dumps: DatabaseDumpPort;
  /** The database's credentials (the services module opens its sealed ones); undefined once it is gone. */
  databasePassword(serviceId: string): Promise<string | undefined>;
  wakeWorkers(): void;
}

const STATUS_OF: Record<BackupState, 'QUEUED' | 'ONGOING' | 'SUCCESS' | 'ERROR'> = {
  QUEUED: 'QUEUED',
  EXECUTING: 'ONGOING',
  READY: 'SUCCESS',
  DEPLOYMENT_ERROR: 'ERROR',
};

function backupView(row: DatabaseBackupRow): BackupView {
  const state = row.state as BackupState;
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    message: row.message,
    engine: row.engine,
    status: {
      id: row.id,
      state,
      service_deployment_status: 'UP_TO_DATE',
      status_details: { action: 'DEPLOY', status: STATUS_OF[state], sub_action: 'NONE' },
      is_part_last_deployment: false,
      deployment_requests_count: 0,
      deployment_request_id: null,
      ...(row.job_id === null ? {} : { execution_id: row.job_id }),
    },
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    failure: row.failure,
  };
}

export function createDatabaseBackupsService(deps: DatabaseBackupsDeps) {
  const { db, clock } = deps;

  function directoryOf(serviceId: string): string {
    return path.join(deps.backupsDir, serviceId);
  }

  async function removeFile(row: Pick<DatabaseBackupRow, 'service_id' | 'file_name'>): Promise<void> {
    if (row.file_name !== null) await rm(path.join(directoryOf(row.service_id), row.file_name), { force: true });
  }

  /** The files of databases deleted since: their rows went with them, so nothing else would ever remove them. */
  async function sweepOrphanedFiles(): Promise<void> {
    const entries = await readdir(deps.backupsDir).catch(() => [] as string[]);
    const candidates = entries.filter((entry) => /^[0-9a-f-]{36}$/.test(entry));
    const existing = await existingServiceIds(db, candidates);
    for (const serviceId of candidates) {
      if (!existing.has(serviceId)) await rm(directoryOf(serviceId), { recursive: true, force: true });
    }
  }

  async function runBackup(backupId: string): Promise<void> {
    const row = await findBackupById(db, backupId);
    if (row === undefined || (row.state !== 'QUEUED' && row.state !== 'EXECUTING')) return;
    const fail = async (failure: string) => {
      const now = isoTimestamp(clock);
      await updateBackup(db, backupId, { state: 'DEPLOYMENT_ERROR', failure, updated_at: now, finished_at: now });
    };
    await updateBackup(db, backupId, { state: 'EXECUTING', updated_at: isoTimestamp(clock) });
    const password = await deps.databasePassword(row.service_id);
    if (password === undefined) return;
    const fileName = `${row.id}.${SUFFIX[row.engine] ?? 'dump'}`;
    const directory = directoryOf(row.service_id);
    let sizeBytes: number;
    try {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      ({ sizeBytes } = await deps.dumps.dump({ serviceId: row.service_id, password, destination: path.join(directory, fileName) }));
    } catch (error) {
      await fail((error as Error).message);
      return;
    }
    const now = isoTimestamp(clock);
    const recorded = await updateBackup(db, backupId, { state: 'READY', file_name: fileName, size_bytes: sizeBytes, failure: null, updated_at: now, finished_at: now });
    // Removed while the dump ran: its file has no row left to remove it later.
    if (!recorded) await removeFile({ service_id: row.service_id, file_name: fileName });
    await sweepOrphanedFiles();
  }

  return {
    /**
     * Records a backup of the database and its job. 400 when the database cannot be backed up now: not on the local
     * engine, of a type without a local engine, or not running; 409 for a name its other backups have.
     */
    async addBackup(databaseId: string, body: BackupBody): Promise<BackupView> {
      const database = await findBackedUpDatabase(db, databaseId);
      if (database === undefined) throw notFound(`database ${databaseId} not found`);
      const type = String(readJson<Record<string, unknown>>(database.settings).type ?? '');
      if (database.cluster_kind !== 'LOCAL') {
        throw badRequest(`database ${database.name} runs on a Kubernetes cluster: Slipway makes backups of databases on the local engine only (docs/database-backups.md)`);
      }
      if (!BACKED_UP_TYPES.has(type)) throw badRequest(`${type} databases cannot be backed up: the local engine runs POSTGRESQL, MYSQL and REDIS servers only`);
      if (database.runtime_status === null || !RUNNING_STATES.has(database.runtime_status)) {
        throw badRequest(`database ${database.name} is not running (${database.runtime_status ?? 'never deployed'}): deploy it before backing it up`);
      }
      const name = cleanName(body.name);
      const id = newId();
      const now = isoTimestamp(clock);
      await uniqueOrConflict(
        () =>
          db.transaction().execute(async (trx) => {
            const jobId = await enqueueJobOf(trx, clock, DATABASE_BACKUP, { backupId: id }, { maxAttempts: 1 });
            await insertBackup(trx, {
              id,
              organization_id: database.organization_id,
              service_id: databaseId,
              name,
              name_key: nameKey(name),
              message: body.message,
              engine: type,
              state: 'QUEUED',
              failure: null,
              file_name: null,
              size_bytes: null,
              job_id: jobId,
              created_at: now,
              updated_at: now,
              finished_at: null,
            });
          }),
        `database ${database.name} already has a backup named "${name}"`,
      );
      deps.wakeWorkers();
      const created = await findBackup(db, databaseId, id);
      if (created === undefined) throw notFound(`backup ${id} not found`);
      return backupView(created);
    },

    async listBackups(databaseId: string, startId: string | undefined) {
      if ((await findBackedUpDatabase(db, databaseId)) === undefined) throw notFound(`database ${databaseId} not found`);
      const rows = await listBackups(db, databaseId, startId, BACKUPS_PER_PAGE);
      const before = startId === undefined ? 0 : await countBackupsFrom(db, databaseId, startId);
      return { page: Math.floor(before / BACKUPS_PER_PAGE) + 1, page_size: BACKUPS_PER_PAGE, results: rows.map(backupView) };
    },

    /** Removes the backup and its file (a dump still running removes its file itself when done). */
    async removeBackup(databaseId: string, backupId: string): Promise<void> {
      if ((await findBackedUpDatabase(db, databaseId)) === undefined) throw notFound(`database ${databaseId} not found`);
      const row = await findBackup(db, databaseId, backupId);
      if (row === undefined) throw notFound(`backup ${backupId} not found`);
      await deleteBackup(db, databaseId, backupId);
      await removeFile(row);
    },

    /** The worker's handler of backup jobs: one attempt each, a failure recorded on the backup rather than retried. */
    jobHandler() {
      return handle(DATABASE_BACKUP, {
        async run(_job, payload) {
          await runBackup(payload.backupId);
        },
        async giveUp(_job, error, payload) {
          const now = isoTimestamp(clock);
          await updateBackup(db, payload.backupId, { state: 'DEPLOYMENT_ERROR', failure: `the backup job failed: ${error}`, updated_at: now, finished_at: now });
        },
      });
    },
  };
}

export type DatabaseBackupsService = ReturnType<typeof createDatabaseBackupsService>;
