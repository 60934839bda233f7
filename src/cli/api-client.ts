import { readCredentials } from './credentials.ts';
import { CliError, requestJson, serverUrlOf, tokenFor, type CliIo } from './sign-in.ts';

/**
 * The REST API as the CLI's team commands see it: one server, the caller's token (SLIPWAY_TOKEN or the stored
 * sign-in), JSON in and out. A refusal becomes a CliError carrying the API's own message, so the command ends with
 * that one line and a non-zero status.
 */
export interface ApiClient {
  server: string;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** A GET whose answer is read as it arrives (a live log): the open response, or a CliError for a refusal. */
  stream(path: string, accept: string): Promise<Response>;
}

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

export async function connect(options: { url?: string | undefined }, io: CliIo): Promise<ApiClient> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const { token, source } = await tokenFor(server, io);
  return {
    server,
    async call(method, path, body) {
      const answer = await requestJson(`${server}${path}`, {
        method,
        // The user agent names the CLI: the audit log records CLI as the origin of its writes (docs/audit-log.md).
        headers: {
          authorization: `Bearer ${token}`,
          'user-agent': 'slipway-cli',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (answer.status >= 200 && answer.status < 300) return answer.body;
      const line = describeApiError(answer.status, answer.body);
      if (answer.status === 401) {
        throw new CliError(`${line}; ${source === 'SLIPWAY_TOKEN' ? 'check the token in SLIPWAY_TOKEN' : 'run slipway login again'}`);
      }
      throw new CliError(line);
    },
    async stream(path, accept) {
      let response: Response;
      try {
        response = await fetch(`${server}${path}`, { headers: { authorization: `Bearer ${token}`, 'user-agent': 'slipway-cli', accept } });
      } catch (error) {
        throw new CliError(`cannot reach ${server}${path}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (response.ok) return response;
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = {};
      }
      throw new CliError(describeApiError(response.status, body));
    },
  };
}

/** The `results` of a list answer. */
export function resultsOf<T>(body: Record<string, unknown>): T[] {
  return Array.isArray(body.results) ? (body.results as T[]) : [];
}
