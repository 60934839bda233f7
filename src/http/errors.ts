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

/**
 * What an error status means, written under every operation that may answer it in the API description
 * (`x-response-description` is the generator's field for a response's description; it is not part of the schema),
 * with an example body. Generic on purpose: an operation's own description says which of its rules answer which
 * status.
 */
const ERROR_DOCUMENTATION: Record<AppErrorKind, { meaning: string; exampleMessage: string; exampleDetails?: FieldProblem[] }> = {
  bad_request: {
    meaning:
      'The request is not valid: a path parameter, query parameter or body field is malformed or breaks a rule; `details` names each field and what is wrong with it.',
    exampleMessage: 'invalid request body',
    exampleDetails: [{ field: '/name', message: 'is required' }],
  },
  unauthenticated: { meaning: 'No credential, or one that is not valid: unknown, expired or revoked.', exampleMessage: 'missing or invalid credential' },
  payment_required: { meaning: "The organization's plan or billing does not allow it.", exampleMessage: "the organization's billing is not valid: an invoice is unpaid" },
  forbidden: {
    meaning: 'The credential is valid but may not do this: its role, its scope or its policy does not grant the permission.',
    exampleMessage: 'this role does not grant projects:create',
  },
  not_found: {
    meaning: 'No such resource in an organization you belong to (ids of other organizations answer 404 too, never 403).',
    exampleMessage: 'project 9a1e7c44-2b8d-4f36-8c51-6d0e3b2a7f18 not found',
  },
  method_not_allowed: { meaning: 'This path does not take this method.', exampleMessage: 'method not allowed' },
  conflict: {
    meaning: 'Conflicts with the current state: a name already taken, or a resource in a state that does not allow this now; `message` says which.',
    exampleMessage: 'a project named "web-shop" already exists in this organization',
  },
  payload_too_large: { meaning: 'The request body is too large.', exampleMessage: 'the request body is too large' },
  unsupported_media_type: { meaning: 'The request body is not application/json.', exampleMessage: 'unsupported content type; send application/json' },
  unprocessable: { meaning: 'The request is well formed but cannot be carried out as asked; `message` says why.', exampleMessage: 'the request cannot be carried out' },
  rate_limited: {
    meaning: 'Too many requests: wait for the time the `retry-after` header gives.',
    exampleMessage: 'too many requests: at most 600 a minute; retry in 12 seconds',
  },
  internal: {
    meaning: "Slipway failed; the body's request_id identifies the failure in the server log.",
    exampleMessage: 'internal error; the request id identifies it in the server log',
  },
  unavailable: {
    meaning: 'A service Slipway depends on is not reachable now; try again later.',
    exampleMessage: 'the invitation e-mail could not be sent; nothing was saved, try again later',
  },
};

const EXAMPLE_REQUEST_ID = '0195a3c2-7d41-7e8b-9f20-4c6d8e1a2b3f';

const DESCRIBED_ERROR_BODIES = Object.fromEntries(
  Object.entries(ERROR_DOCUMENTATION).map(([kind, { meaning, exampleMessage, exampleDetails }]) => {
    const status = STATUS_OF[kind as AppErrorKind];
    const example = payload(status, exampleMessage, EXAMPLE_REQUEST_ID, exampleDetails);
    return [kind, Type.Object(ErrorBody.properties, { additionalProperties: false, 'x-response-description': meaning, examples: [example] })];
  }),
) as Record<AppErrorKind, typeof ErrorBody>;

/** The error statuses a route may answer, by the kinds it can raise; used to declare response schemas. */
export function errorResponses(...kinds: AppErrorKind[]): Record<number, typeof ErrorBody> {
  const out: Record<number, typeof ErrorBody> = {};
  for (const kind of kinds) out[STATUS_OF[kind]] = DESCRIBED_ERROR_BODIES[kind];
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
