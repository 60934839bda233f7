import { builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import type { RegoValue } from '../rego.value.ts';
import { parseNumberText } from './json.text.ts';
import { oneOfError, operand } from './operands.ts';

/** Spellings Go's strconv.ParseFloat accepts for non-finite values; OPA rejects them as a type error. */
const NON_FINITE = /^[+-]?(inf|infinity|nan)$/i;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function toNumber(operands: RegoValue[]): RegoValue {
  const value = operand(operands, 0);
  if (value === null) return 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || typeof value === 'bigint') return value;
  if (typeof value !== 'string') throw oneOfError('to_number', 1, ['null', 'boolean', 'number', 'string'], value);
  if (NON_FINITE.test(value)) throw operandTypeError('to_number', 1, 'valid number string', 'string');
  if (!DECIMAL.test(value)) throw builtinFailure('to_number', `strconv.ParseFloat: parsing ${JSON.stringify(value)}: invalid syntax`);
  const normalised = value.replace(/^\+/, '').replace(/^(-?)\./, '$10.').replace(/\.(?=[eE]|$)/, '');
  if (!Number.isFinite(Number(normalised))) {
    throw builtinFailure('to_number', `strconv.ParseFloat: parsing ${JSON.stringify(value)}: value out of range`);
  }
  return parseNumberText(normalised);
}

export const CAST_BUILTINS: BuiltinDefinition[] = defineBuiltins([{ name: 'to_number', arity: 1, implementation: toNumber }]);
