import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { deriveKey } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import { makePrivateDirectory, PRIVATE_FILE_MODE } from '../lib/private-files.ts';
import type { DialectName } from './db.client.ts';

/**
 * The file of one backup of the installation's own data (`slipway admin backup`, the scheduled backup), format 1:
 *
 *   SLIPWAY-BACKUP 1\n                     the magic line, naming the format
 *   {"format":1,"created_at":…}\n          the header: one JSON object (BackupHeader)
 *   <payload>                               an SQLite database file, or pg_dump's custom format
 *   \nSLIPWAY-BACKUP-END sha256=<64 hex> bytes=<16 digits>\n
 *
 * The end line carries the length of everything before it and its SHA-256: a file cut short (a disk filled up, a
 * copy interrupted) has no end line or a wrong length, and any byte changed fails the digest, so `restore` refuses
 * both before it touches the target. The file is written under a temporary name and linked to its own only once
 * complete: a crash never leaves a half backup under the final name, and an existing file is never overwritten.
 *
 * The backup holds no key. Secrets in the database are sealed (lib/secret-box.ts); what the header holds is the key's
 * fingerprint — SHA-256 of a value derived from the key for this purpose alone — so that a restore can tell that the
 * key it was given is the one the secrets were sealed under without the backup revealing anything of it.
 */

export const BACKUP_FORMAT = 1;
const MAGIC = 'SLIPWAY-BACKUP';
const END_LINE = /^\nSLIPWAY-BACKUP-END sha256=([0-9a-f]{64}) bytes=(\d{16})\n$/;
const END_LINE_BYTES = '\nSLIPWAY-BACKUP-END sha256= bytes=\n'.length + 64 + 16;
/** The magic line and the header must fit in this much; the header is a few hundred bytes. */
const HEAD_LIMIT_BYTES = 64 * 1024;

export interface BackupHeader {
  format: number;
  created_at: string;
  dialect: DialectName;
  slipway_version: string;
  /** backupKeyFingerprint of the key the secrets in the payload are sealed under. */
  key_fingerprint: string;
  /** The migrations applied to the data backed up (db.migrate.ts names): its migration level. */
  migrations: string[];
  /** PostgreSQL: the schema backed up when the database URL names one in its search_path; null: the whole database. */
  schema: string | null;
}

/** SHA-256 of a value derived from the key for backups alone, in hex: the key cannot be recovered from it. */
export function backupKeyFingerprint(secretKey: Buffer): string {
  return createHash('sha256').update(deriveKey(secretKey, 'slipway/backup-key-fingerprint/v1')).digest('hex');
}

/** The first characters of a fingerprint, as messages show it. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.slice(0, 12);
}

/** `slipway-20261127T070102123Z`: UTC, to the millisecond, sorting as it was taken. */
export function backupTimestamp(at: Date): string {
  return at.toISOString().replace(/[-:.]/g, '');
}

/** What writes the payload: into the open file, each chunk through `write` (which also digests it). */
export type PayloadWriter = (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>;

/**
 * Writes a backup file at `file` (refused when it exists): the header, the payload `writePayload` produces, the end
 * line; under a temporary name in the same directory (0700 when created), 0600, flushed to disk, then linked to its
 * name. Anything thrown leaves nothing behind. Answers the file's size.
 */
export async function writeBackupFile(file: string, header: BackupHeader, writePayload: PayloadWriter): Promise<number> {
  makePrivateDirectory(path.dirname(file));
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle: FileHandle = await open(temporary, 'wx', PRIVATE_FILE_MODE);
  try {
    // The umask may have narrowed the mode further; a backup is exactly 0600.
    await handle.chmod(PRIVATE_FILE_MODE);
    const digest = createHash('sha256');
    let bytes = 0;
    const write = async (chunk: Uint8Array) => {
      digest.update(chunk);
      bytes += chunk.length;
      await handle.write(chunk);
    };
    await write(Buffer.from(`${MAGIC} ${BACKUP_FORMAT}\n${JSON.stringify(header)}\n`, 'utf8'));
    await writePayload(write);
    await handle.write(Buffer.from(`\n${MAGIC}-END sha256=${digest.digest('hex')} bytes=${String(bytes).padStart(16, '0')}\n`, 'utf8'));
    await handle.sync();
    await handle.close();
    await link(temporary, file).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'EEXIST') throw new AppError('conflict', `${file} exists already: name another file with --output`);
      throw error;
    });
    return bytes + END_LINE_BYTES;
  } finally {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
  }
}

/** A backup file checked whole: its header, and where its payload lies (`payloadStart` to `payloadEnd`, exclusive). */
export interface VerifiedBackup {
  file: string;
  header: BackupHeader;
  payloadStart: number;
  payloadEnd: number;
}

function notABackup(file: string, why: string): AppError {
  return new AppError('bad_request', `${file} is not a Slipway backup (${why})`);
}

function incomplete(file: string, size: number): AppError {
  return new AppError('bad_request', `${file} is incomplete (${size} bytes, its end marker missing): it was cut short while written or copied; use another backup`);
}

function headerOf(file: string, text: string): BackupHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notABackup(file, 'its header is not JSON');
  }
  const header = value as Partial<BackupHeader> | null;
  const valid =
    header !== null &&
    typeof header === 'object' &&
    typeof header.format === 'number' &&
    typeof header.created_at === 'string' &&
    (header.dialect === 'sqlite' || header.dialect === 'postgres') &&
    typeof header.slipway_version === 'string' &&
    typeof header.key_fingerprint === 'string' &&
    /^[0-9a-f]{64}$/.test(header.key_fingerprint) &&
    Array.isArray(header.migrations) &&
    header.migrations.every((name) => typeof name === 'string') &&
    (header.schema === null || typeof header.schema === 'string');
  if (!valid) throw notABackup(file, 'its header lacks a field');
  return header as BackupHeader;
}

/**
 * Reads and checks a backup file whole before anything is restored from it: the magic line and header, a format this
 * version reads, the end line present with the right length (refused as incomplete otherwise), and the digest.
 */
export async function verifyBackupFile(file: string): Promise<VerifiedBackup> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new AppError('bad_request', `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let size: number;
  let head: Buffer;
  let end: Buffer;
  try {
    size = (await handle.stat()).size;
    head = Buffer.alloc(Math.min(size, HEAD_LIMIT_BYTES));
    await handle.read(head, 0, head.length, 0);
    end = Buffer.alloc(Math.min(size, END_LINE_BYTES));
    await handle.read(end, 0, end.length, size - end.length);
  } finally {
    await handle.close();
  }
  const magicEnd = head.indexOf(0x0a);
  const magic = head.subarray(0, Math.max(magicEnd, 0)).toString('utf8');
  const format = new RegExp(`^${MAGIC} (\\d{1,6})$`).exec(magic)?.[1];
  if (magicEnd < 0 || format === undefined) throw notABackup(file, 'it does not begin as one');
  const headerEnd = head.indexOf(0x0a, magicEnd + 1);
  if (headerEnd < 0) throw incomplete(file, size);
  const header = headerOf(file, head.subarray(magicEnd + 1, headerEnd).toString('utf8'));
  if (Number(format) !== header.format) throw notABackup(file, 'its magic line and header name different formats');
  if (header.format > BACKUP_FORMAT) {
    throw new AppError(
      'bad_request',
      `${file} is a backup of format ${header.format}, newer than this Slipway reads (${BACKUP_FORMAT}): restore it with Slipway ${header.slipway_version} or later`,
    );
  }
  const endLine = END_LINE.exec(end.toString('latin1'));
  const bytes = endLine === null ? Number.NaN : Number(endLine[2]);
  if (endLine === null || bytes !== size - END_LINE_BYTES) throw incomplete(file, size);
  const digest = createHash('sha256');
  for await (const chunk of createReadStream(file, { start: 0, end: bytes - 1 })) digest.update(chunk as Buffer);
  if (digest.digest('hex') !== endLine[1]) throw new AppError('bad_request', `${file} is damaged: its content does not match its checksum; use another backup`);
  if (bytes <= headerEnd + 1) throw notABackup(file, 'it holds no data');
  return { file, header, payloadStart: headerEnd + 1, payloadEnd: bytes };
}

/** The payload of a verified backup, as a stream of its bytes. */
export function payloadStream(backup: VerifiedBackup): NodeJS.ReadableStream {
  return createReadStream(backup.file, { start: backup.payloadStart, end: backup.payloadEnd - 1 });
}
