import { AppError, badRequest, type FieldProblem } from '../lib/errors.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import { RegistryAccessError } from './oci-distribution.ts';
import { OutboundFailure, resolvesToNonPublic, urlProblem, type OutboundPolicy } from './outbound-http.ts';

/**
 * What container registries and Helm repositories share: the write-time check of a user-given address, the port to
 * ECR credentials, and how a registry's answer becomes an API error.
 */

/**
 * The cloud credentials module's ECR port (ECR GetAuthorizationToken with a stored AWS credential); wired in by the
 * composition root. Throws an AppError when the credential is unknown or AWS refuses it.
 */
export interface EcrAuthorizer {
  authorizeEcr(organizationId: string, credentialsId: string, region: string): Promise<{ registryUrl: string; username: string; password: string }>;
}

export const ECR_UNAVAILABLE_MESSAGE = 'ECR checks need the AWS credentials module, which this installation does not have wired';

/** The scheme and hosts a URL may use, checked when it is written: 400 naming the field, or the parsed URL. */
export async function checkedTargetUrl(raw: string, field: string, policy: OutboundPolicy, schemes: readonly string[] = ['https:', 'http:']): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`${field.slice(1)} is not an absolute URL`, [{ field, message: 'must be an absolute URL' }]);
  }
  if (!schemes.includes(url.protocol)) {
    throw badRequest(`${field.slice(1)} must use ${schemes.map((scheme) => `${scheme}//`).join(' or ')} (got "${url.protocol}//")`, [{ field, message: 'unsupported scheme' }]);
  }
  if (url.search !== '' || url.hash !== '') throw badRequest(`${field.slice(1)} must not carry a query or a fragment`, [{ field, message: 'must be a plain URL' }]);
  // An oci:// address is reached over https (or http on-premise), so it is judged as such.
  const asHttp = url.protocol === 'oci:' ? new URL(`https://${url.host}${url.pathname}`) : url;
  const problem = urlProblem(asHttp, policy);
  if (problem !== undefined) throw badRequest(`${field.slice(1)} ${problem}`, [{ field, message: problem }]);
  if (await resolvesToNonPublic(asHttp.hostname, policy)) {
    // The address itself is not answered: it would map the internal network for whoever asks.
    throw badRequest(`${field.slice(1)} names a host with a loopback or private address; Slipway only reaches public hosts unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true`, [
      { field, message: 'host is not public' },
    ]);
  }
  return url;
}

/** A failed read of a registry or repository as the caller's 400 (they can fix the address or credentials). */
export function registryReadError(error: unknown, what: string): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof OutboundFailure || error instanceof RegistryAccessError) return badRequest(`${what}: ${error.message}`);
  throw error;
}

/** A stored secret that no longer opens (the server's key changed) is lost, never exposed: the caller re-enters it. */
export function unreadableSecret(what: string): AppError {
  return badRequest(`the credentials of ${what} can no longer be decrypted (the server's secret key changed); edit it with its credentials again`);
}

/** A username without a password (or the reverse) is a half-given basic login: the problem to report, if any. */
export function basicLoginProblem(username: string | undefined, password: string | undefined): FieldProblem | undefined {
  if ((username === undefined) === (password === undefined)) return undefined;
  return { field: username === undefined ? '/config/username' : '/config/password', message: 'username and password go together' };
}

/** An ECR registry or repository names an AWS credential of its organization: 400 when there is no such credential. */
export async function requireKnownAwsCredentials(
  lookup: { findAwsCredentials(organizationId: string, credentialsId: string): Promise<unknown> } | undefined,
  organizationId: string,
  credentialsId: string | undefined,
): Promise<void> {
  if (lookup === undefined || credentialsId === undefined) return;
  if ((await lookup.findAwsCredentials(organizationId, credentialsId)) === undefined) {
    throw badRequest(`AWS credentials ${credentialsId} not found in this organization`, [{ field: '/config/aws_credentials_id', message: 'unknown AWS credentials' }]);
  }
}

/** The fields of `source` named in `keys` that are set (a request's public or secret configuration fields). */
export function pickDefined<K extends string>(source: Partial<Record<K, string | undefined>>, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

interface SealedRow {
  id: string;
  organization_id: string;
  name: string;
  secret_envelope: string | null;
}

/**
 * The secret fields of a registry or repository, sealed together as one JSON envelope bound to its row
 * (`<table>:<organization>:<id>`), so an envelope copied onto another row does not open.
 */
export function sealedConfigOf<T extends object>(secrets: SecretBox, table: string, what: string) {
  const associatedData = (row: Pick<SealedRow, 'id' | 'organization_id'>) => `${table}:${row.organization_id}:${row.id}`;
  return {
    /** The envelope for `values`, or null when there is nothing secret to keep. */
    seal(values: T, row: Pick<SealedRow, 'id' | 'organization_id'>): string | null {
      return Object.keys(values).length === 0 ? null : secrets.seal(JSON.stringify(values), associatedData(row));
    },
    open(row: SealedRow): T {
      if (row.secret_envelope === null) return {} as T;
      try {
        return JSON.parse(secrets.open(row.secret_envelope, associatedData(row))) as T;
      } catch {
        throw unreadableSecret(`${what} "${row.name}"`);
      }
    },
  };
}

/** Maps items a few at a time (tag lists of many repositories): faster than one by one, gentle on the registry. */
export async function inBatches<T, R>(items: readonly T[], map: (item: T) => Promise<R>, size = 5): Promise<R[]> {
  const out: R[] = [];
  for (let start = 0; start < items.length; start += size) out.push(...(await Promise.all(items.slice(start, start + size).map(map))));
  return out;
}
