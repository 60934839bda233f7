import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { shortFingerprint } from '../db/db.backup-file.ts';
import { backupFileName, restoreBackup, takeBackup } from '../db/db.backup.ts';
import { databaseTargetOf } from '../db/db.client.ts';
import { AppError } from '../lib/errors.ts';
import { UnsafePermissionsError } from '../lib/private-files.ts';
import { loadOrCreateKeyFile } from '../lib/secret-box.ts';
import { operatorDatabaseLine } from './admin-database.ts';

/**
 * `slipway admin backup` and `slipway admin restore`: the installation's own database into one file and back
 * (src/db/db.backup.ts; docs/operations.md, "Backing up and restoring"). Like the other operator commands they work
 * on the database SLIPWAY_DATABASE_URL / SLIPWAY_DATA_DIR name; unlike them, neither migrates it first: a backup
 * leaves the database as it is, and a restore needs its target empty (it migrates what it restored).
 */

type BackupConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 'secretKey' | 'backup'>;

/**
 * The configured key, without ever making one: a key file that is not there is refused (the server would generate a
 * new key, under which no restored secret opens), as is one other accounts may read or write.
 */
function configuredKey(config: BackupConfig): Buffer {
  if (config.secretKey.kind === 'value') return config.secretKey.key;
  const file = config.secretKey.file;
  if (!existsSync(file)) {
    throw new AppError('bad_request', `there is no secret key at ${file}: copy the installation's key file there (mode 0600), or set SLIPWAY_SECRET_KEY`);
  }
  try {
    return loadOrCreateKeyFile(file);
  } catch (error) {
    if (error instanceof UnsafePermissionsError) throw new AppError('bad_request', error.message);
    throw error;
  }
}

function keyHint(config: BackupConfig): string {
  return config.secretKey.kind === 'value'
    ? "set SLIPWAY_SECRET_KEY to the key of the installation the backup came from"
    : `put the key file of the installation the backup came from at ${config.secretKey.file} (mode 0600), or set SLIPWAY_SECRET_KEY to its key`;
}

function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** `slipway admin backup [--output <file>]`: answers what it printed on standard output. */
export async function backupInstallation(config: BackupConfig, options: { output?: string }, say: (line: string) => void = (line) => process.stderr.write(line)): Promise<string> {
  const secretKey = configuredKey(config);
  const now = new Date();
  const file = options.output === undefined ? backupFileName(config.backup.dir, now, 'manual') : path.resolve(options.output);
  say(operatorDatabaseLine(config, false));
  const taken = await takeBackup({ target: databaseTargetOf(config), secretKey, file, now });
  const level = taken.header.migrations.at(-1) ?? 'none';
  return (
    `backup: ${taken.file} (${sizeOf(taken.bytes)}, ${taken.header.dialect}, migration ${level}, key fingerprint ${shortFingerprint(taken.header.key_fingerprint)}…)\n` +
    'The backup holds no secret key: keep the key (SLIPWAY_SECRET_KEY or the data directory\'s secret.key) apart from it; a restore needs both.\n'
  );
}

/** `slipway admin restore <file>`: answers what it printed on standard output. */
export async function restoreInstallation(config: BackupConfig, file: string, say: (line: string) => void = (line) => process.stderr.write(line)): Promise<string> {
  const secretKey = configuredKey(config);
  say(operatorDatabaseLine(config, false));
  const header = await restoreBackup({ target: databaseTargetOf(config), secretKey, keyHint: keyHint(config), file: path.resolve(file) });
  return `restored: ${path.resolve(file)} (taken ${header.created_at} by Slipway ${header.slipway_version}), migrated to this version's latest\n`;
}
