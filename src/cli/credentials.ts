import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Where the CLI keeps what `slipway login` obtained, per server: `$XDG_CONFIG_HOME/slipway/credentials.json`
 * (`~/.config/slipway/credentials.json` without it). The file holds bearer credentials, so it is written with mode
 * 0600 in a 0700 directory, atomically (a temporary file renamed over it).
 */
export interface ServerCredentials {
  /** The issuer that signed the tokens and the client they were issued to, for refreshing and revoking. */
  issuer: string;
  client_id: string;
  token_endpoint: string;
  revocation_endpoint?: string | undefined;
  access_token: string;
  refresh_token?: string | undefined;
  /** Epoch seconds after which the access token is no longer accepted. */
  expires_at?: number | undefined;
}

export interface CredentialsFile {
  /** The server used when neither --url nor SLIPWAY_URL names one: the last one signed in to. */
  current?: string | undefined;
  servers: Record<string, ServerCredentials>;
}

export type Env = Record<string, string | undefined>;

/** The credentials file exists but cannot be used; the message says which file and what to do. */
export class CredentialsUnreadable extends Error {}

/** `$XDG_CONFIG_HOME/slipway` (`~/.config/slipway` without it): the CLI's credentials and settings. */
export function configDirectory(env: Env): string {
  const configHome = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? homedir(), '.config');
  return path.join(configHome, 'slipway');
}

export function credentialsPath(env: Env): string {
  return path.join(configDirectory(env), 'credentials.json');
}

export async function readCredentials(env: Env): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(credentialsPath(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw error;
  }
  let parsed: Partial<CredentialsFile>;
  try {
    parsed = JSON.parse(text) as Partial<CredentialsFile>;
  } catch {
    throw new CredentialsUnreadable(`${credentialsPath(env)} is not valid JSON; delete it and sign in again`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CredentialsUnreadable(`${credentialsPath(env)} does not hold Slipway credentials; delete it and sign in again`);
  }
  return { current: parsed.current, servers: parsed.servers ?? {} };
}

export async function writeCredentials(env: Env, credentials: CredentialsFile): Promise<string> {
  const file = credentialsPath(env);
  await writePrivateJson(file, credentials);
  return file;
}

/** Writes `value` as JSON to `file`, mode 0600 in a 0700 directory, atomically (a temporary file renamed over it). */
export async function writePrivateJson(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFile is masked by the umask; set it explicitly before the file takes its name.
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}
