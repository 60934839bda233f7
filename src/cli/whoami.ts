import { apiFor, dataOf } from './api-client.ts';
import { readCredentials } from './credentials.ts';
import { emailOf, serverUrlOf, tokenFor, type CliIo } from './sign-in.ts';

/**
 * `slipway whoami`: who the server takes the caller for. It calls the API (listOrganization), so an answer proves the
 * credentials work. Its own module, not sign-in.ts: the typed API client builds on sign-in.ts's tokens.
 */
export async function whoami(options: { url?: string | undefined }, io: CliIo): Promise<void> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const { token, source } = await tokenFor(server, io);
  const api = apiFor(server, token, (status, body) => {
    const message = typeof body.message === 'string' ? body.message : `status ${status}`;
    return `${server} refused the ${source === 'SLIPWAY_TOKEN' ? 'token in SLIPWAY_TOKEN' : 'stored sign-in'}: ${message}`;
  });
  const { results: organizations } = await dataOf(api.GET('/organization'));
  const email = emailOf(token);
  const who = email ?? (token.startsWith('slw') ? 'an API token' : 'a signed-in user');
  io.out(`${who} on ${server}${source === 'SLIPWAY_TOKEN' ? ' (from SLIPWAY_TOKEN)' : ''}\n`);
  if (organizations.length === 0) io.out('organizations: none\n');
  for (const organization of organizations) io.out(`organization: ${organization.name} (${organization.id})\n`);
}
