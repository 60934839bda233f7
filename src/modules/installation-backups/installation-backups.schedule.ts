import { Cron } from 'croner';
import { backupFileName, pruneScheduledBackups, takeBackup } from '../../db/db.backup.ts';
import type { DatabaseTarget } from '../../db/db.client.ts';
import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { Clock } from '../../lib/clock.ts';

export interface InstallationBackupScheduleDeps {
  target: DatabaseTarget;
  secretKey: Buffer;
  /** config.backup: the cron expression (UTC), the directory, how many scheduled backups to keep. */
  schedule: string;
  dir: string;
  retention: number;
  clock: Clock;
  log: { info(object: object, message: string): void };
}

/**
 * The scheduled backup of the installation's own database (src/jobs/job-schedules.ts): on SLIPWAY_BACKUP_SCHEDULE,
 * once per installation whatever the number of replicas, by one of the worker processes configured with it, which
 * writes `slipway-scheduled-<UTC timestamp>.backup` into SLIPWAY_BACKUP_DIR on its own host (on PostgreSQL with its
 * pg_dump), then deletes the oldest scheduled backups beyond SLIPWAY_BACKUP_RETENTION. A backup that fails is a job
 * failure (logged, retried, FAILED in the jobs table) and deletes nothing. Manual backups (`slipway admin backup`)
 * are not counted: the retention never deletes them.
 */
export function installationBackupSchedule(deps: InstallationBackupScheduleDeps): ScheduledWork {
  const cron = new Cron(deps.schedule, { timezone: 'UTC', paused: true });
  return {
    name: 'installation-backup',
    atStart: false,
    // A schedule that never comes due again is refused by config.ts; past its last instant, one a century on.
    nextDueAfter: (instant) => cron.nextRun(new Date(instant))?.getTime() ?? instant + 100 * 365 * 24 * 3_600_000,
    async run() {
      const now = deps.clock.now();
      const taken = await takeBackup({
        target: deps.target,
        secretKey: deps.secretKey,
        file: backupFileName(deps.dir, now, 'scheduled'),
        now,
      });
      const deleted = await pruneScheduledBackups(deps.dir, deps.retention);
      deps.log.info({ file: taken.file, bytes: taken.bytes, deleted: deleted.length }, 'installation backup written');
    },
  };
}
