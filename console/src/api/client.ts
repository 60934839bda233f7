import createFetchClient, { type Middleware } from 'openapi-fetch';
import createQueryHooks from 'openapi-react-query';
import type { components, paths } from '../../../src/cli/api-types.generated.ts';
import { currentSession, expireSession } from '../auth/session.ts';
import { readableFieldMessage } from './field-messages.ts';

/**
 * The API, typed from the checked-in OpenAPI description (the CLI's generated types: one file for both, regenerated
 * by `npm run openapi:snapshot`). Same origin: the API keeps its paths at the root, the console lives under /console.
 */
export type { components, paths };
export type ErrorBody = components['schemas']['ErrorBody'];
export type Organization = components['schemas']['Organization'];
export type Project = components['schemas']['Project'];

const authenticate: Middleware = {
  onRequest({ request }) {
    const session = currentSession();
    if (session !== undefined) request.headers.set('authorization', `Bearer ${session.accessToken}`);
    return request;
  },
  onResponse({ response }) {
    // The token was refused (expired early, key rotated, account removed): back to the sign-in, keeping the page.
    if (response.status === 401) expireSession();
    return response;
  },
};

export const fetchClient = createFetchClient<paths>({ baseUrl: location.origin });
fetchClient.use(authenticate);
export const api = createQueryHooks(fetchClient);

/** What to tell the person about a failed request: the error body's message, a 403 as a refusal, never a raw object. */
export function messageOf(error: unknown): string {
  if (error !== null && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    const body = error as Partial<ErrorBody>;
    if (body.status === 403) return `You are not allowed to do this: ${body.message}`;
    // Details the message already tells (a 409 naming each refusing service says it in both) are not repeated.
    const details = body.details
      ?.filter((detail) => !(error.message as string).includes(detail.message))
      .map((detail) => `${detail.field.replace(/^\//, '')} ${readableFieldMessage(detail.message)}`)
      .join('; ');
    if (error instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
    return details === undefined || details === '' ? (error.message as string) : `${error.message as string} (${details})`;
  }
  return 'Something went wrong. Try again.';
}

export type Environment = components['schemas']['Environment'];
export type EnvironmentStatus = components['schemas']['EnvironmentStatus'];
export type ServiceStatus = components['schemas']['ServiceStatus'];
export type Cluster = components['schemas']['Cluster'];
export type Link = components['schemas']['Link'];
export type EnvironmentVariable = components['schemas']['EnvironmentVariable'];
export type Secret = components['schemas']['Secret'];
export type DeploymentState = ServiceStatus['state'];

/**
 * A call whose path is built at run time (one code path for the four service kinds: `/${kind}/${id}/deploy`), with
 * the same bearer token and 401 handling as the typed client. Answers the parsed JSON body (undefined for 204);
 * throws the error body (an `ErrorBody`) on a refusal, a TypeError when the server cannot be reached.
 */
export async function apiRequest<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const session = currentSession();
  if (session !== undefined) headers.authorization = `Bearer ${session.accessToken}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${location.origin}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (response.status === 401) expireSession();
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not the API's JSON (a proxy's error page): say what answered rather than how it failed to parse.
    parsed = undefined;
  }
  if (!response.ok) throw parsed ?? { status: response.status, message: `The server answered ${response.status} ${response.statusText}.` };
  return parsed as T;
}

/**
 * The error body's field details as a map from the field's path (`git_repository/url`, `ports/0/internal_port`) to
 * its message, for forms that show each where it belongs; `rest` is what no field of the form claimed.
 */
export function fieldErrorsOf(error: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  if (error !== null && typeof error === 'object' && 'details' in error && Array.isArray(error.details)) {
    for (const detail of error.details as { field?: unknown; message?: unknown }[]) {
      if (typeof detail.field === 'string' && typeof detail.message === 'string') fields.set(detail.field.replace(/^\//, ''), readableFieldMessage(detail.message));
    }
  }
  return fields;
}

/** The error body's message without its field details (shown at the fields instead). */
/** A form's refusal whose details sit at its fields: the message, ended as a sentence, pointing at them. */
export function summaryWithFieldsOf(error: unknown, fieldCount: number): string {
  const summary = summaryOf(error);
  return fieldCount === 0 ? summary : `${/[.!?]$/.test(summary) ? summary : `${summary}.`} See the fields marked above.`;
}

export function summaryOf(error: unknown): string {
  if (error !== null && typeof error === 'object' && 'message' in error && typeof error.message === 'string' && !(error instanceof TypeError)) {
    const body = error as Partial<ErrorBody>;
    return body.status === 403 ? `You are not allowed to do this: ${body.message as string}` : (body.message as string);
  }
  return messageOf(error);
}
