import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { compareValues, RegoObject, RegoSet, type RegoValue } from '../rego.value.ts';
import { addNumbers, multiplyNumbers } from './numbers.builtins.ts';
import { collectionOperand, elementError, oneOfError, operand } from './operands.ts';

/** Number of Unicode code points, which is what Go's rune count gives for the strings we hold. */
function codePointLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

function count(operands: RegoValue[]): RegoValue {
  const value = operand(operands, 0);
  if (typeof value === 'string') return codePointLength(value);
  if (Array.isArray(value)) return value.length;
  if (value instanceof RegoObject || value instanceof RegoSet) return value.size;
  throw oneOfError('count', 1, ['array', 'object', 'set', 'string'], value);
}

function numericFold(name: string, start: number, apply: (a: number | bigint, b: number | bigint) => number | bigint): BuiltinDefinition {
  return {
    name,
    arity: 1,
    implementation: (operands) => {
      const members = collectionOperand(name, operands, 1);
      let result: number | bigint = start;
      for (const member of members) {
        if (typeof member !== 'number' && typeof member !== 'bigint') throw elementError(name, 1, operand(operands, 0), member, 'number');
        result = apply(result, member);
      }
      return result;
    },
  };
}

function extreme(name: string, wantGreater: boolean): BuiltinDefinition {
  return {
    name,
    arity: 1,
    implementation: (operands) => {
      const members = collectionOperand(name, operands, 1);
      // OPA: max/min of an empty collection is undefined.
      if (members.length === 0) return undefined;
      let best = members[0] as RegoValue;
      for (const member of members) {
        const order = compareValues(member, best);
        if (wantGreater ? order > 0 : order < 0) best = member;
      }
      return best;
    },
  };
}

/** Aggregates. The deprecated `all` and `any` are absent, as in Rego v1. */
export const AGGREGATE_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'count', arity: 1, implementation: count },
  numericFold('sum', 0, (a, b) => addNumbers(a, b, 'sum')),
  numericFold('product', 1, (a, b) => multiplyNumbers(a, b, 'product')),
  extreme('max', true),
  extreme('min', false),
  {
    name: 'sort',
    arity: 1,
    implementation: (operands) => [...collectionOperand('sort', operands, 1, ['array', 'set'])].sort(compareValues),
  },
]);
