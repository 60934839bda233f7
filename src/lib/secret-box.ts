import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fstatSync, linkSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makePrivateDirectory, octalMode, PRIVATE_FILE_MODE, shellQuoted, UnsafePermissionsError } from './private-files.ts';

/**
 * Symmetric encryption of secrets at rest (git tokens, later secret variables): AES-256-GCM with a random 96-bit
 * nonce per value. The stored envelope is `v1.<nonce>.<tag>.<ciphertext>` (base64url parts); the version prefix
 * lets a later key rotation or algorithm change read old rows. The associated data binds a ciphertext to the row it
 * was written for, so a value copied into another row (or another organization) does not decrypt.
 */
export const SECRET_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const ENVELOPE_VERSION = 'v1';

export interface SecretBox {
  seal(plaintext: string, associatedData: string): string;
  /** Throws when the envelope was altered, was sealed for other associated data, or under another key. */
  open(envelope: string, associatedData: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret key is ${SECRET_KEY_BYTES} bytes, got ${key.length}`);
  const keyCopy = Buffer.from(key);
  return {
    seal(plaintext, associatedData) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keyCopy, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [ENVELOPE_VERSION, nonce.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
    },
    open(envelope, associatedData) {
      const [version, nonce, tag, ciphertext, ...rest] = envelope.split('.');
      if (version !== ENVELOPE_VERSION || nonce === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
        throw new Error('not a v1 secret envelope');
      }
      const decipher = createDecipheriv('aes-256-gcm', keyCopy, Buffer.from(nonce, 'base64url'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * A 32-byte key given as 64 hex digits or as base64 / base64url (43-44 characters); undefined for anything else,
 * so the caller can name the variable at fault.
 */
export function decodeSecretKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === SECRET_KEY_BYTES) return bytes;
  }
  return undefined;
}

/**
 * The key kept in a file: read when it exists, else generated and written readable by the owner alone (0600).
 * The key is written to a private temporary file first and then hard-linked to its name, which fails if the name
 * exists: two processes starting at once agree on one complete key (the loser reads the winner's), and no reader
 * ever sees a half-written file.
 *
 * A key file that other accounts may read or write is refused with an UnsafePermissionsError, never narrowed in
 * passing: whoever could read it may already hold a copy of the key, and whoever could write it may have put in a key
 * of their own. The operator decides what that exposure means before the server starts again.
 */
export function loadOrCreateKeyFile(file: string): Buffer {
  makePrivateDirectory(path.dirname(file));
  const candidate = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const created = openSync(candidate, 'wx', PRIVATE_FILE_MODE);
  try {
    // The umask may have narrowed the mode further; the key file is exactly 0600.
    fchmodSync(created, PRIVATE_FILE_MODE);
    writeFileSync(created, `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`);
  } finally {
    closeSync(created);
  }
  try {
    linkSync(candidate, file);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(candidate);
  }
  const descriptor = openSync(file, 'r');
  try {
    assertKeyFileUnexposed(file, fstatSync(descriptor).mode);
    const key = decodeSecretKey(readFileSync(descriptor, 'utf8'));
    if (key === undefined) throw new Error(`${file} does not hold a 32-byte key (base64 or hex)`);
    return key;
  } finally {
    closeSync(descriptor);
  }
}

function assertKeyFileUnexposed(file: string, mode: number): void {
  const readable = (mode & 0o044) !== 0;
  const writable = (mode & 0o022) !== 0;
  if (!readable && !writable) return;
  const exposure = readable ? 'readable by other accounts' : 'writable by other accounts';
  const consequence = readable ? 'the key in it may already have been copied' : 'the key in it may have been replaced';
  throw new UnsafePermissionsError(`${file} is ${exposure} (mode ${octalMode(mode)}), so ${consequence}; run chmod 600 ${shellQuoted(file)} and start again`);
}
