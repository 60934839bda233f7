/**
 * Domain errors. Services throw these; they know nothing of HTTP. `http/errors.ts` is the one place that turns
 * a kind into a status code and the wire error body.
 */
export type AppErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'payment_required'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'method_not_allowed'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

export interface FieldProblem {
  /** JSON pointer into the request part, e.g. `/name`. */
  field: string;
  message: string;
}

/**
 * Kinds that report the caller's mistake or a refusal: answered and forgotten, never logged with a stack, so none is
 * captured (V8 walks the stack at construction: several µs on every 401, 404 or 409).
 */
const EXPECTED_KINDS: ReadonlySet<AppErrorKind> = new Set<AppErrorKind>([
  'bad_request',
  'unauthenticated',
  'forbidden',
  'payment_required',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'method_not_allowed',
  'unprocessable',
  'rate_limited',
]);

export class AppError extends Error {
  readonly kind: AppErrorKind;
  readonly details: FieldProblem[] | undefined;

  constructor(kind: AppErrorKind, message: string, details?: FieldProblem[]) {
    const stackTraceLimit = Error.stackTraceLimit;
    if (EXPECTED_KINDS.has(kind)) Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'AppError';
    this.kind = kind;
    this.details = details;
  }
}

export const badRequest = (message: string, details?: FieldProblem[]): AppError =>
  new AppError('bad_request', message, details);
export const notFound = (message: string): AppError => new AppError('not_found', message);
export const conflict = (message: string, details?: FieldProblem[]): AppError => new AppError('conflict', message, details);
export const forbidden = (message: string): AppError => new AppError('forbidden', message);
/** The organization's billing is not valid (SPEC.md's billing status rule), so what would cost money is refused. */
export const paymentRequired = (message: string): AppError => new AppError('payment_required', message);
export const unauthenticated = (message: string): AppError => new AppError('unauthenticated', message);
