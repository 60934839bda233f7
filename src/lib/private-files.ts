import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * Files of the control plane belong to its own account alone: the database holds token hashes and sealed secrets,
 * the key file the key that opens them, the agent's records what runs where. Directories are 0700 and files 0600.
 * The mode is set explicitly after creation instead of being left to the umask: a umask can only narrow the mode asked
 * for, so nothing is ever wider in between, but an operator's umask of 0277 would leave a database nobody can write.
 */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Any access by the group or by others. */
const OTHERS_ACCESS = 0o077;

/**
 * A file or directory whose permissions make it unsafe to go on, and that Slipway must not or cannot fix itself. Its
 * message is one line for the operator, naming the path, its mode and what to run.
 */
export class UnsafePermissionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafePermissionsError';
  }
}

/** `0644`, `1777`: the permission bits as `ls -l` users and chmod read them. */
export function octalMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** A path as a shell command line may carry it: quoted when it holds anything but the usual characters. */
export function shellQuoted(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown }).code;
}

/** Creates `dir` and its missing parents, each 0700 whatever the umask; an existing directory is left as it is. */
export function makePrivateDirectory(dir: string): void {
  const target = path.resolve(dir);
  const first = mkdirSync(target, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  if (first === undefined) return;
  // Every directory this call created, from `dir` up to the first one.
  for (let created = target; ; created = path.dirname(created)) {
    chmodSync(created, PRIVATE_DIRECTORY_MODE);
    if (created === path.resolve(first) || created === path.dirname(created)) return;
  }
}

/**
 * The data directory is Slipway's own: at start, one that lets the group or others in at all (made by an older
 * version, or by hand) is narrowed to 0700. Nothing happens when it does not exist yet (whatever writes into it first
 * creates it private). A directory shared by design — /tmp and its like carry the sticky bit — or the root of the
 * file system is refused instead: narrowing those would break the host.
 */
export function tightenPrivateDirectory(dir: string): void {
  const target = path.resolve(dir);
  let stats: Stats;
  try {
    stats = statSync(target);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return;
    throw error;
  }
  // Not a directory: opening the database under it fails, saying so; its mode is none of this function's business.
  if (!stats.isDirectory()) return;
  const { mode, uid: owner } = stats;
  if ((mode & 0o1000) !== 0 || target === path.dirname(target)) {
    throw new UnsafePermissionsError(
      `the data directory ${target} is shared by every account of this host (mode ${octalMode(mode)}): set SLIPWAY_DATA_DIR to a directory of Slipway's own`,
    );
  }
  if ((mode & OTHERS_ACCESS) === 0) return;
  try {
    chmodSync(target, PRIVATE_DIRECTORY_MODE);
  } catch (error) {
    if (codeOf(error) !== 'EPERM') throw error;
    throw new UnsafePermissionsError(
      `the data directory ${target} is open to other accounts (mode ${octalMode(mode)}) and belongs to uid ${owner}, not to this account: chown it to this account, or run chmod 700 ${shellQuoted(target)} as its owner`,
    );
  }
}

/**
 * Creates `file` 0600 when missing, its mode set on the new descriptor before anyone writes a byte into it; an
 * existing one is narrowed to 0600 by name. An existing file is never opened here: closing a descriptor drops every
 * POSIX lock this process holds on the file, which would break an SQLite connection already open on it.
 */
export function makePrivateFile(file: string): void {
  let descriptor: number;
  try {
    descriptor = openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
    narrowPrivateFile(file);
    return;
  }
  try {
    fchmodSync(descriptor, PRIVATE_FILE_MODE);
  } finally {
    closeSync(descriptor);
  }
}

/** Narrows an existing file to 0600; a file that is not there is fine. */
export function narrowPrivateFile(file: string): void {
  let mode: number;
  try {
    ({ mode } = statSync(file));
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return;
    throw error;
  }
  if ((mode & 0o7777) === PRIVATE_FILE_MODE) return;
  try {
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (error) {
    if (codeOf(error) !== 'EPERM') throw error;
    throw new UnsafePermissionsError(
      `${file} belongs to another account (mode ${octalMode(mode)}): chown it to this account and run chmod 600 ${shellQuoted(file)}`,
    );
  }
}
