import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { compareValues, valuesEqual, type RegoValue } from '../rego.value.ts';

function comparison(name: string, test: (a: RegoValue, b: RegoValue) => boolean): BuiltinDefinition {
  return { name, arity: 2, implementation: ([a, b]) => test(a as RegoValue, b as RegoValue) };
}

/** Comparison operators over Rego's total order (any two values compare, across types too). */
export const COMPARISON_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  comparison('equal', valuesEqual),
  comparison('neq', (a, b) => !valuesEqual(a, b)),
  comparison('lt', (a, b) => compareValues(a, b) < 0),
  comparison('lte', (a, b) => compareValues(a, b) <= 0),
  comparison('gt', (a, b) => compareValues(a, b) > 0),
  comparison('gte', (a, b) => compareValues(a, b) >= 0),
]);
