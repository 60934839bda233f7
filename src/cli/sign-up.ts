import { describeApiError } from './api-client.ts';
import { readCredentials } from './credentials.ts';
import { printJson } from './output.ts';
import { CliError, requestJson, serverUrlOf, type CliIo } from './sign-in.ts';

/**
 * `slipway signup` and `slipway verify`: a local account at the server's built-in identity provider
 * (`<server>/oidc/signup`, JSON), and the e-mail verification link it mails, followed from the terminal.
 */
export interface SignUpOptions {
  url?: string | undefined;
  email: string;
  name?: string | undefined;
  password: string;
  json?: boolean | undefined;
}

export async function signUp(options: SignUpOptions, io: CliIo): Promise<void> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const { status, body } = await requestJson(`${server}/oidc/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: options.email, password: options.password, ...(options.name === undefined ? {} : { name: options.name }) }),
  });
  if (status === 404) {
    throw new CliError(`${server} has no built-in sign-up: it signs people in through an external identity provider; create your account there`);
  }
  if (status !== 201) throw new CliError(describeApiError(status, body));
  if (options.json === true) return printJson(io, body);
  io.out(
    `Created the account ${String(body.email)} on ${server}.\n` +
      'We sent you a verification link: click it, or run slipway verify <link>. Then sign in with slipway login.\n',
  );
}

/** Follows a verification link (`…/oidc/verify?token=…`) the way a browser would, asking for a JSON answer. */
export async function verifyEmail(link: string, options: { json?: boolean | undefined }, io: CliIo): Promise<void> {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new CliError(`"${link}" is not a link; copy the whole verification link from the e-mail, or click it`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.pathname.endsWith('/verify') || !url.searchParams.has('token')) {
    throw new CliError(`${link} is not a Slipway verification link (…/oidc/verify?token=…); click the link in the e-mail instead`);
  }
  let answer: { status: number; body: Record<string, unknown> };
  try {
    answer = await requestJson(url.href);
  } catch (error) {
    // Something between the terminal and the server (a proxy, a login wall) answered: a browser can still get through.
    throw new CliError(`${error instanceof Error ? error.message : String(error)}; open the link in your browser instead`);
  }
  if (answer.status !== 200) throw new CliError(describeApiError(answer.status, answer.body));
  if (options.json === true) return printJson(io, answer.body);
  io.out(`${String(answer.body.email)} is verified. Sign in with slipway login.\n`);
}
