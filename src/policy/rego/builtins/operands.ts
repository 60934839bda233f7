import { BuiltinError, operandTypeError } from '../rego.builtins.ts';
import { compareValues, RegoObject, RegoSet, typeName, type RegoValue } from '../rego.value.ts';

/**
 * Operand checks shared by the builtin families, each throwing OPA's exact type error on a mismatch.
 * `position` is 1-based, as in OPA's messages.
 */
export function operand(operands: RegoValue[], index: number): RegoValue {
  return operands[index] as RegoValue;
}

export function stringOperand(name: string, operands: RegoValue[], position: number): string {
  const value = operand(operands, position - 1);
  if (typeof value !== 'string') throw operandTypeError(name, position, 'string', typeName(value));
  return value;
}

export function numberOperand(name: string, operands: RegoValue[], position: number): number | bigint {
  const value = operand(operands, position - 1);
  if (typeof value !== 'number' && typeof value !== 'bigint') throw operandTypeError(name, position, 'number', typeName(value));
  return value;
}

export function arrayOperand(name: string, operands: RegoValue[], position: number): RegoValue[] {
  const value = operand(operands, position - 1);
  if (!Array.isArray(value)) throw operandTypeError(name, position, 'array', typeName(value));
  return value;
}

export function objectOperand(name: string, operands: RegoValue[], position: number): RegoObject {
  const value = operand(operands, position - 1);
  if (!(value instanceof RegoObject)) throw operandTypeError(name, position, 'object', typeName(value));
  return value;
}

export function setOperand(name: string, operands: RegoValue[], position: number): RegoSet {
  const value = operand(operands, position - 1);
  if (!(value instanceof RegoSet)) throw operandTypeError(name, position, 'set', typeName(value));
  return value;
}

/** OPA's `operand <n> must be one of {a, b} but got <type>`. */
export function oneOfError(name: string, position: number, expected: string[], actual: RegoValue): BuiltinError {
  return operandTypeError(name, position, `one of {${expected.join(', ')}}`, typeName(actual));
}

/** OPA's element error: `operand <n> must be array of strings but got array containing number`. */
export function elementError(name: string, position: number, composite: RegoValue, element: RegoValue, expected: string): BuiltinError {
  const kind = typeName(composite);
  return new BuiltinError('eval_type_error', `${name}: operand ${position} must be ${kind} of ${expected}s but got ${kind} containing ${typeName(element)}`);
}

/** Members of an array or a set (sets in Rego order, as OPA iterates them). */
export function collectionOperand(name: string, operands: RegoValue[], position: number, expected = ['set', 'array']): RegoValue[] {
  const value = operand(operands, position - 1);
  if (Array.isArray(value)) return value;
  if (value instanceof RegoSet) return sortedMembers(value);
  throw oneOfError(name, position, expected, value);
}

export function sortedMembers(set: RegoSet): RegoValue[] {
  return [...set.values()].sort(compareValues);
}

/** A JS integer within the safe range, or a bigint: the integers of the value model. */
export function isIntegral(value: number | bigint): boolean {
  return typeof value === 'bigint' || Number.isInteger(value);
}

/** An integer operand as bigint; floats are rejected with OPA's `integer number` wording. */
export function integerOperand(name: string, operands: RegoValue[], position: number): bigint {
  const value = numberOperand(name, operands, position);
  if (!isIntegral(value)) throw operandTypeError(name, position, 'integer number', 'floating-point number');
  return BigInt(value);
}

/** An integer operand that must fit a JS number (counts, offsets, bases). */
export function smallIntegerOperand(name: string, operands: RegoValue[], position: number): number {
  const value = numberOperand(name, operands, position);
  if (!isIntegral(value)) throw operandTypeError(name, position, 'integer number', 'floating-point number');
  return Number(value);
}
