import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import type { RegoValue } from '../rego.value.ts';
import { arrayOperand, smallIntegerOperand } from './operands.ts';

/** One level only: nested arrays inside nested arrays stay arrays (OPA's array.flatten). */
function flatten(values: RegoValue[]): RegoValue[] {
  return values.flatMap((value) => (Array.isArray(value) ? value : [value]));
}

export const ARRAY_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'array.concat',
    arity: 2,
    implementation: (operands) => [...arrayOperand('array.concat', operands, 1), ...arrayOperand('array.concat', operands, 2)],
  },
  {
    name: 'array.slice',
    arity: 3,
    implementation: (operands) => {
      const array = arrayOperand('array.slice', operands, 1);
      // OPA clamps both indices into the array; a start at or past the stop gives an empty array.
      const start = Math.max(0, smallIntegerOperand('array.slice', operands, 2));
      const stop = Math.min(array.length, smallIntegerOperand('array.slice', operands, 3));
      return start >= stop ? [] : array.slice(start, stop);
    },
  },
  { name: 'array.reverse', arity: 1, implementation: (operands) => [...arrayOperand('array.reverse', operands, 1)].reverse() },
  { name: 'array.flatten', arity: 1, implementation: (operands) => flatten(arrayOperand('array.flatten', operands, 1)) },
]);
