import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { operations, paths } from './api-types.generated.ts';
import { readCredentials } from './credentials.ts';
import { CliError, serverUrlOf, tokenFor, type CliIo } from './sign-in.ts';

/**
 * The REST API as the CLI sees it: one server, the caller's token (SLIPWAY_TOKEN or the stored sign-in), JSON in
 * and out, every path, parameter, body and answer typed by the API description (openapi/openapi.json, through the
 * generated api-types.generated.ts), so a CLI call that no longer matches the server fails `tsc`, not a user.
 * A refusal becomes a CliError carrying the API's own message, so the command ends with that one line and a
 * non-zero status.
 */
export type Api = Client<paths, 'application/json'>;

export interface ApiClient {
  server: string;
  /** Resolves only with a 2xx answer: a refusal, an unreachable server or an answer that is not JSON throws a CliError. */
  api: Api;
}

/** What an operation answers with a status (200 unless named), as the API description has it. */
export type AnswerOf<Operation extends keyof operations, Status extends number = 200> =
  operations[Operation]['responses'] extends { [S in Status]: { content: { 'application/json': infer Body } } } ? Body : never;

/** The JSON body an operation takes, as the API description has it. */
export type RequestOf<Operation extends keyof operations> =
  NonNullable<operations[Operation]['requestBody']> extends { content: { 'application/json': infer Body } } ? Body : never;

/** The header value of every call: the audit log records CLI as the origin of its writes (docs/audit-log.md). */
const USER_AGENT = 'slipway-cli';
/** Per call; a followed log is exempt, it lasts as long as its deployment. */
const REQUEST_TIMEOUT_MS = 15_000;

interface ErrorDetail {
  field?: unknown;
  message?: unknown;
}

/** The API's error body ({status, error, message, request_id, details?}) as one line: the message, then the details. */
export function describeApiError(status: number, body: Record<string, unknown>): string {
  const message = typeof body.message === 'string' && body.message !== '' ? body.message : `the server answered ${status}`;
  const details = Array.isArray(body.details) ? (body.details as ErrorDetail[]) : [];
  const described = details
    .filter((detail) => typeof detail.message === 'string')
    .map((detail) => (typeof detail.field === 'string' && detail.field !== '' ? `${detail.field.replace(/^\//, '')} ${String(detail.message)}` : String(detail.message)));
  return described.length === 0 ? message : `${message} (${described.join('; ')})`;
}

/** A body read as JSON: its fields when it is an object (or empty), none for other JSON, undefined when it is not JSON. */
function jsonFieldsOf(text: string): Record<string, unknown> | undefined {
  try {
    const parsed = text === '' ? {} : (JSON.parse(text) as unknown);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return undefined;
  }
}

/**
 * The typed API of `server` with `token`. Refusals throw a CliError whose text `refusal` words from the status and the
 * error body; the other failures keep the CLI's one-line wording ("cannot reach …", "answered … with something other
 * than JSON").
 */
export function apiFor(server: string, token: string, refusal: (status: number, body: Record<string, unknown>) => string): Api {
  const api = createClient<paths, 'application/json'>({
    baseUrl: server,
    headers: { authorization: `Bearer ${token}`, 'user-agent': USER_AGENT, accept: 'application/json' },
  });
  const cliErrors: Middleware = {
    onRequest({ request, options }) {
      return options.parseAs === 'stream' ? undefined : new Request(request, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    },
    onError({ request, error }) {
      return new CliError(`cannot reach ${request.url}: ${error instanceof Error ? error.message : String(error)}`);
    },
    async onResponse({ request, response, options }) {
      const streamed = options.parseAs === 'stream';
      // A stream, or text asked for as text (the YAML of an install), is the caller's to read; only refusals are JSON.
      if (response.ok && (streamed || options.parseAs === 'text')) return undefined;
      const text = await response.clone().text();
      const body = jsonFieldsOf(text);
      // A followed log's refusal is read leniently, as it always was: whatever the body, the status still says why.
      if (body === undefined && !streamed) throw new CliError(`${request.url} answered ${response.status} with something other than JSON`);
      if (!response.ok) throw new CliError(refusal(response.status, body ?? {}));
      return undefined;
    },
  };
  api.use(cliErrors);
  return api;
}

export async function connect(options: { url?: string | undefined }, io: CliIo): Promise<ApiClient> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const { token, source } = await tokenFor(server, io);
  const api = apiFor(server, token, (status, body) => {
    const line = describeApiError(status, body);
    if (status !== 401) return line;
    return `${line}; ${source === 'SLIPWAY_TOKEN' ? 'check the token in SLIPWAY_TOKEN' : 'run slipway login again'}`;
  });
  return { server, api };
}

/**
 * The body of a call's answer. The client has thrown for every refusal already, so only an answer without the body
 * the API description promises is left to catch here.
 */
export async function dataOf<Data>(pending: Promise<{ data?: Data; response: Response }>): Promise<Data> {
  const { data, response } = await pending;
  if (data === undefined) throw new CliError(`${response.url} answered ${response.status} without a body`);
  return data;
}
