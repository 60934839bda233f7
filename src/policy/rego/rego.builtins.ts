import type { RegoValue } from './rego.value.ts';

/**
 * The builtin function contract. A builtin takes evaluated operands and answers a value, or `undefined` when the
 * call is undefined (e.g. a regex that does not match under `regex.find_n` answering nothing is NOT undefined; only
 * use undefined where OPA's builtin is undefined). Bad operands throw a BuiltinError; the evaluator turns it into an
 * error (strict mode) or an undefined call (non-strict), exactly as OPA's `strict_builtin_errors` does.
 *
 * Builtins are registered by family files under builtins/ (one file per family) and collected into one registry
 * by the evaluator; a name is registered once.
 */
export type BuiltinErrorCode = 'eval_type_error' | 'eval_builtin_error';

export class BuiltinError extends Error {
  readonly code: BuiltinErrorCode;
  constructor(
    code: BuiltinErrorCode,
    message: string,
  ) {
    super(message);
    this.code = code;
    this.name = 'BuiltinError';
  }
}

/** OPA's operand type error: `<name>: operand <n> must be <expected> but got <actual>`. */
export function operandTypeError(name: string, position: number, expected: string, actual: string): BuiltinError {
  return new BuiltinError('eval_type_error', `${name}: operand ${position} must be ${expected} but got ${actual}`);
}

/** A builtin's own failure, e.g. `div: divide by zero`. */
export function builtinFailure(name: string, message: string): BuiltinError {
  return new BuiltinError('eval_builtin_error', `${name}: ${message}`);
}

/** Per-evaluation state: values that must be stable within one evaluation (time.now_ns, uuid.rfc4122). */
export interface BuiltinContext {
  /** Nanoseconds since the epoch, fixed at the start of the evaluation. */
  nowNs: bigint;
  /** Memo shared by the calls of one evaluation, keyed by builtin name and operands. */
  cache: Map<string, RegoValue>;
}

export type BuiltinImplementation = (operands: RegoValue[], context: BuiltinContext) => RegoValue | undefined;

export interface BuiltinDefinition {
  /** Dotted name as called from Rego, e.g. `strings.replace_n`. */
  name: string;
  /** Number of operands (the output operand of the `f(x, out)` call form is not counted). */
  arity: number;
  implementation: BuiltinImplementation;
}

export function defineBuiltins(definitions: BuiltinDefinition[]): BuiltinDefinition[] {
  return definitions;
}
