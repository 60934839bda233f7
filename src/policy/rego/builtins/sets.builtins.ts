import { defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { setOperand } from './operands.ts';

function setsOf(name: string, operands: RegoValue[]): RegoSet[] {
  const outer = setOperand(name, operands, 1);
  const sets: RegoSet[] = [];
  for (const member of outer.values()) {
    if (!(member instanceof RegoSet)) throw operandTypeError(name, 1, 'set of sets', `set containing ${typeName(member)}`);
    sets.push(member);
  }
  return sets;
}

function intersect(a: RegoSet, b: RegoSet): RegoSet {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  const result = new RegoSet();
  for (const member of small.values()) if (large.has(member)) result.add(member);
  return result;
}

function unite(sets: RegoSet[]): RegoSet {
  const result = new RegoSet();
  for (const set of sets) for (const member of set.values()) result.add(member);
  return result;
}

export const SET_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'and', arity: 2, implementation: (operands) => intersect(setOperand('and', operands, 1), setOperand('and', operands, 2)) },
  { name: 'or', arity: 2, implementation: (operands) => unite([setOperand('or', operands, 1), setOperand('or', operands, 2)]) },
  {
    name: 'intersection',
    arity: 1,
    implementation: (operands) => {
      const sets = setsOf('intersection', operands);
      if (sets.length === 0) return new RegoSet();
      return sets.reduce(intersect);
    },
  },
  { name: 'union', arity: 1, implementation: (operands) => unite(setsOf('union', operands)) },
]);
