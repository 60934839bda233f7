import { nodeHttp } from '../lib/node-http.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, type AppErrorKind, type FieldProblem } from '../lib/errors.ts';

/**
 * The only place that knows HTTP status numbers. Every error leaves the server as one body:
 * `{ status, error, message, request_id, details? }` (DESIGN.md §4); 5xx bodies say only what is safe.
 */
const STATUS_OF: Record<AppErrorKind, number> = {
  bad_request: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export const HTTP_STATUS = {
  ok: 200,
  created: 201,
  accepted: 202,
  noContent: 204,
} as const;

export const ErrorBody = Type.Object(
  {
    status: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    request_id: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'ErrorBody', additionalProperties: false },
);

/** The error statuses a route may answer, by the kinds it can raise; used to declare response schemas. */
export function errorResponses(...kinds: AppErrorKind[]): Record<number, typeof ErrorBody> {
  const out: Record<number, typeof ErrorBody> = {};
  for (const kind of kinds) out[STATUS_OF[kind]] = ErrorBody;
  return out;
}

export function statusOf(kind: AppErrorKind): number {
  return STATUS_OF[kind];
}

/** Whether an answer's status reports a failure (the audit log's outcome). */
export function isFailureStatus(status: number): boolean {
  return status >= 400;
}

interface ErrorPayload {
  status: number;
  error: string;
  message: string;
  request_id: string;
  details?: FieldProblem[];
}

function payload(status: number, message: string, requestId: string, details?: FieldProblem[]): ErrorPayload {
  const body: ErrorPayload = { status, error: nodeHttp.STATUS_CODES[status] ?? 'Error', message, request_id: requestId };
  if (details !== undefined && details.length > 0) body.details = details;
  return body;
}

export function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  const status = STATUS_OF[error.kind];
  // RFC 9110 §11.6.1: a 401 names the scheme that would be accepted.
  if (error.kind === 'unauthenticated') reply.header('www-authenticate', 'Bearer realm="slipway"');
  return reply.code(status).type('application/json').send(payload(status, error.message, reply.request.id, error.details));
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns schema-validation issues into field problems with JSON pointers a client can act on. */
function fieldProblems(issues: AjvIssue[]): FieldProblem[] {
  return issues.map((issue) => {
    const base = issue.instancePath ?? '';
    if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
      return { field: `${base}/${issue.params.additionalProperty}`, message: 'is not an allowed field' };
    }
    if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
      return { field: `${base}/${issue.params.missingProperty}`, message: 'is required' };
    }
    // "must be equal to one of the allowed values" leaves the caller guessing: name them.
    if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) {
      return { field: base === '' ? '/' : base, message: `must be one of ${issue.params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}` };
    }
    return { field: base === '' ? '/' : base, message: issue.message ?? 'is invalid' };
  });
}

const PART_NAMES: Record<string, string> = {
  body: 'request body',
  querystring: 'query string',
  params: 'path parameters',
  headers: 'headers',
};

/** Maps anything thrown during a request to the error body; unknown errors are logged and answered as 500. */
export function handleError(error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) return sendAppError(reply, error);

  const fastifyError = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const part = PART_NAMES[fastifyError.validationContext ?? ''] ?? 'request';
    return sendAppError(reply, new AppError('bad_request', `invalid ${part}`, fieldProblems(fastifyError.validation)));
  }

  const status = typeof fastifyError.statusCode === 'number' ? fastifyError.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (malformed JSON, unsupported media type, body too large, …) keep their status;
    // their messages name the problem without echoing the request.
    reply.code(status).type('application/json');
    return reply.send(payload(status, clientErrorMessage(fastifyError), request.id));
  }
  request.log.error({ err: error }, 'request failed');
  reply.code(500).type('application/json');
  return reply.send(payload(500, 'internal error; the request id identifies it in the server log', request.id));
}

function clientErrorMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the request body is not valid JSON';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the request body is empty but its content type is application/json';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type; send application/json';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'the request body is too large';
    case 'FST_ERR_BAD_URL':
      return 'the request path is not a valid URL (bad percent-encoding)';
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return 'a path parameter is too long';
    default:
      return error.message;
  }
}

/** Every authenticated route can answer 400 (bad parameters), 401, 403 and 404; `extra` adds route-specific ones. */
export function authenticatedErrors(...extra: AppErrorKind[]): Record<number, typeof ErrorBody> {
  return errorResponses('bad_request', 'unauthenticated', 'forbidden', 'not_found', ...extra);
}
