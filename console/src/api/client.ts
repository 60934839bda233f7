import createFetchClient, { type Middleware } from 'openapi-fetch';
import createQueryHooks from 'openapi-react-query';
import type { components, paths } from '../../../src/cli/api-types.generated.ts';
import { currentSession, expireSession } from '../auth/session.ts';

/**
 * The API, typed from the checked-in OpenAPI description (the CLI's generated types: one file for both, regenerated
 * by `npm run openapi:snapshot`). Same origin: the API keeps its paths at the root, the console lives under /console.
 */
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
    const details = body.details?.map((detail) => `${detail.field.replace(/^\//, '')} ${detail.message}`).join('; ');
    if (error instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
    return details === undefined || details === '' ? (error.message as string) : `${error.message as string} (${details})`;
  }
  return 'Something went wrong. Try again.';
}
