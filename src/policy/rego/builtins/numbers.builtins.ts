import { builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { regoNumber, RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { integerOperand, numberOperand, oneOfError, operand } from './operands.ts';

/**
 * Numbers and arithmetic. Integers stay exact at any size (JS number within the safe range, bigint beyond, as
 * `regoNumber` normalises); anything involving a fraction is a float64, as in OPA.
 */

/** An integer of the value model: a bigint, or a JS number that is a safe integer. */
function exactInteger(value: number | bigint): bigint | undefined {
  if (typeof value === 'bigint') return value;
  return Number.isSafeInteger(value) ? BigInt(value) : undefined;
}

function bothIntegers(a: number | bigint, b: number | bigint): [bigint, bigint] | undefined {
  const x = exactInteger(a);
  const y = exactInteger(b);
  return x === undefined || y === undefined ? undefined : [x, y];
}

/**
 * A float result. OPA computes with arbitrary-precision floats; float64 here, so a result beyond float64's range
 * (which the value model cannot hold) is an error rather than Infinity.
 */
function floatResult(name: string, value: number): number {
  if (!Number.isFinite(value)) throw builtinFailure(name, 'number too large');
  return regoNumber(value) as number;
}

function fitsSafely(a: number, b: number, result: number): boolean {
  return !Number.isSafeInteger(a) || !Number.isSafeInteger(b) || Number.isSafeInteger(result);
}

export function addNumbers(a: number | bigint, b: number | bigint, name = 'plus'): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && fitsSafely(a, b, a + b)) return floatResult(name, a + b);
  const ints = bothIntegers(a, b);
  return ints ? regoNumber(ints[0] + ints[1]) : floatResult(name, Number(a) + Number(b));
}

export function subtractNumbers(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && fitsSafely(a, b, a - b)) return floatResult('minus', a - b);
  const ints = bothIntegers(a, b);
  return ints ? regoNumber(ints[0] - ints[1]) : floatResult('minus', Number(a) - Number(b));
}

export function multiplyNumbers(a: number | bigint, b: number | bigint, name = 'mul'): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && fitsSafely(a, b, a * b)) return floatResult(name, a * b);
  const ints = bothIntegers(a, b);
  return ints ? regoNumber(ints[0] * ints[1]) : floatResult(name, Number(a) * Number(b));
}

function bitLength(value: bigint): number {
  return (value < 0n ? -value : value).toString(2).length;
}

/** a / b as a float64 even when the operands themselves are beyond float64's range. */
function ratio(a: number | bigint, b: number | bigint): number {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y)) return x / y;
  const big = (value: number | bigint): bigint => (typeof value === 'bigint' ? value : BigInt(Math.trunc(value)));
  const shift = BigInt(Math.max(bitLength(big(a)), bitLength(big(b))) - 1000);
  return Number(big(a) >> shift) / Number(big(b) >> shift);
}

function divide(a: number | bigint, b: number | bigint): number | bigint {
  if (Number(b) === 0) throw builtinFailure('div', 'divide by zero');
  const ints = bothIntegers(a, b);
  // Exact only when the divisor divides the dividend; otherwise the quotient is a float.
  if (ints && ints[0] % ints[1] === 0n) return regoNumber(ints[0] / ints[1]);
  return floatResult('div', ratio(a, b));
}

function remainder(a: number | bigint, b: number | bigint): number | bigint {
  const ints = bothIntegers(a, b);
  if (!ints) throw builtinFailure('rem', 'modulo on floating-point number');
  if (ints[1] === 0n) throw builtinFailure('rem', 'modulo by zero');
  return regoNumber(ints[0] % ints[1]);
}

function numericBinary(name: string, apply: (a: number | bigint, b: number | bigint) => number | bigint): BuiltinDefinition {
  return {
    name,
    arity: 2,
    implementation: (operands) => apply(numberOperand(name, operands, 1), numberOperand(name, operands, 2)),
  };
}

function setDifference(a: RegoSet, b: RegoSet): RegoSet {
  const result = new RegoSet();
  for (const member of a.values()) if (!b.has(member)) result.add(member);
  return result;
}

/** `-` is both numeric subtraction and set difference; OPA's errors name the operand that breaks the pairing. */
function minus(operands: RegoValue[]): RegoValue {
  const a = operand(operands, 0);
  const b = operand(operands, 1);
  if (typeof a === 'number' || typeof a === 'bigint') {
    if (typeof b !== 'number' && typeof b !== 'bigint') throw operandTypeError('minus', 2, 'number', typeName(b));
    return subtractNumbers(a, b);
  }
  if (a instanceof RegoSet) {
    if (!(b instanceof RegoSet)) throw operandTypeError('minus', 2, 'set', typeName(b));
    return setDifference(a, b);
  }
  throw oneOfError('minus', 1, ['number', 'set'], a);
}

function roundHalfAwayFromZero(value: number): number {
  return value < 0 ? -Math.round(-value) : Math.round(value);
}

function rounding(name: string, apply: (value: number) => number): BuiltinDefinition {
  return {
    name,
    arity: 1,
    implementation: (operands) => {
      const value = numberOperand(name, operands, 1);
      return typeof value === 'bigint' ? value : regoNumber(apply(value));
    },
  };
}

function absolute(value: number | bigint): number | bigint {
  if (typeof value === 'bigint') return regoNumber(value < 0n ? -value : value);
  return regoNumber(Math.abs(value));
}

/**
 * The cap on range lengths. OPA has none, but a builtin call cannot be interrupted by the evaluation budget, so an
 * enormous range would stall the server; a million numbers is far beyond any authorization policy's needs.
 */
const MAX_RANGE_LENGTH = 1_000_000;

function rangeValues(name: string, from: bigint, to: bigint, step: bigint): RegoValue[] {
  const length = (from <= to ? to - from : from - to) / step + 1n;
  if (length > BigInt(MAX_RANGE_LENGTH)) throw builtinFailure(name, 'range too large');
  const values: RegoValue[] = [];
  if (from <= to) for (let current = from; current <= to; current += step) values.push(regoNumber(current));
  else for (let current = from; current >= to; current -= step) values.push(regoNumber(current));
  return values;
}

function unsignedShift(name: string, operands: RegoValue[]): [bigint, bigint] {
  const value = integerOperand(name, operands, 1);
  const shift = integerOperand(name, operands, 2);
  if (shift < 0n) throw operandTypeError(name, 2, 'an unsigned integer number', 'a negative integer');
  return [value, shift];
}

function bitwise(name: string, apply: (a: bigint, b: bigint) => bigint): BuiltinDefinition {
  return {
    name,
    arity: 2,
    implementation: (operands) => regoNumber(apply(integerOperand(name, operands, 1), integerOperand(name, operands, 2))),
  };
}

/** Largest shift accepted: beyond it the result would be a number with millions of digits. */
const MAX_SHIFT = 65_536n;

export const NUMBER_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  numericBinary('plus', (a, b) => addNumbers(a, b)),
  { name: 'minus', arity: 2, implementation: minus },
  numericBinary('mul', (a, b) => multiplyNumbers(a, b)),
  numericBinary('div', divide),
  numericBinary('rem', remainder),
  { name: 'abs', arity: 1, implementation: (operands) => absolute(numberOperand('abs', operands, 1)) },
  rounding('round', roundHalfAwayFromZero),
  rounding('ceil', Math.ceil),
  rounding('floor', Math.floor),
  {
    name: 'numbers.range',
    arity: 2,
    implementation: (operands) =>
      rangeValues('numbers.range', integerOperand('numbers.range', operands, 1), integerOperand('numbers.range', operands, 2), 1n),
  },
  {
    name: 'numbers.range_step',
    arity: 3,
    implementation: (operands) => {
      const name = 'numbers.range_step';
      const from = integerOperand(name, operands, 1);
      const to = integerOperand(name, operands, 2);
      const step = integerOperand(name, operands, 3);
      if (step <= 0n) throw builtinFailure(name, 'step must be a positive number above zero');
      return rangeValues(name, from, to, step);
    },
  },
  bitwise('bits.and', (a, b) => a & b),
  bitwise('bits.or', (a, b) => a | b),
  bitwise('bits.xor', (a, b) => a ^ b),
  {
    name: 'bits.negate',
    arity: 1,
    implementation: (operands) => regoNumber(~integerOperand('bits.negate', operands, 1)),
  },
  {
    name: 'bits.lsh',
    arity: 2,
    implementation: (operands) => {
      const [value, shift] = unsignedShift('bits.lsh', operands);
      if (shift > MAX_SHIFT) throw builtinFailure('bits.lsh', 'shift too large');
      return regoNumber(value << shift);
    },
  },
  {
    name: 'bits.rsh',
    arity: 2,
    implementation: (operands) => {
      const [value, shift] = unsignedShift('bits.rsh', operands);
      return regoNumber(value >> shift);
    },
  },
]);
