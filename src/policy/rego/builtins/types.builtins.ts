import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, RegoSet, typeName, type RegoValue } from '../rego.value.ts';

function typeCheck(name: string, test: (value: RegoValue) => boolean): BuiltinDefinition {
  // OPA answers false (not undefined) when the type does not match.
  return { name, arity: 1, implementation: ([value]) => test(value as RegoValue) };
}

/** Type checks: is_<type> and type_name. */
export const TYPE_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  typeCheck('is_number', (value) => typeof value === 'number' || typeof value === 'bigint'),
  typeCheck('is_string', (value) => typeof value === 'string'),
  typeCheck('is_boolean', (value) => typeof value === 'boolean'),
  typeCheck('is_array', (value) => Array.isArray(value)),
  typeCheck('is_set', (value) => value instanceof RegoSet),
  typeCheck('is_object', (value) => value instanceof RegoObject),
  typeCheck('is_null', (value) => value === null),
  { name: 'type_name', arity: 1, implementation: ([value]) => typeName(value as RegoValue) },
]);
