import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { configDirectory, CredentialsUnreadable, writePrivateJson, type Env } from './credentials.ts';

/**
 * What the CLI remembers besides credentials: the current organization per server (`slipway org use`), in
 * `$XDG_CONFIG_HOME/slipway/config.json`, written like the credentials (0600, atomically).
 */
export interface CliSettings {
  /** Server URL → id of the organization commands act on when --org is not given. */
  organizations: Record<string, string>;
}

export function settingsPath(env: Env): string {
  return path.join(configDirectory(env), 'config.json');
}

export async function readSettings(env: Env): Promise<CliSettings> {
  let text: string;
  try {
    text = await readFile(settingsPath(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { organizations: {} };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CredentialsUnreadable(`${settingsPath(env)} is not valid JSON; delete it and run slipway org use again`);
  }
  const organizations = (parsed as Partial<CliSettings> | null)?.organizations;
  if (typeof organizations !== 'object' || organizations === null || Array.isArray(organizations)) return { organizations: {} };
  return { organizations };
}

export async function rememberOrganization(env: Env, server: string, organizationId: string): Promise<string> {
  const settings = await readSettings(env);
  const file = settingsPath(env);
  await writePrivateJson(file, { ...settings, organizations: { ...settings.organizations, [server]: organizationId } });
  return file;
}
