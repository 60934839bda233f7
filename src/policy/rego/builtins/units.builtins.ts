import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { regoNumber, type RegoValue } from '../rego.value.ts';
import { multiplyNumbers } from './numbers.builtins.ts';
import { parseNumberText } from './json.text.ts';
import { stringOperand } from './operands.ts';

/** units.parse_bytes and units.parse: amounts with SI (k, M, ...) or binary (Ki, Mi, ...) suffixes. */
const BYTE_UNITS: Record<string, bigint> = {
  '': 1n,
  b: 1n,
  k: 1000n,
  kb: 1000n,
  ki: 1024n,
  kib: 1024n,
  m: 1000n ** 2n,
  mb: 1000n ** 2n,
  mi: 1024n ** 2n,
  mib: 1024n ** 2n,
  g: 1000n ** 3n,
  gb: 1000n ** 3n,
  gi: 1024n ** 3n,
  gib: 1024n ** 3n,
  t: 1000n ** 4n,
  tb: 1000n ** 4n,
  ti: 1024n ** 4n,
  tib: 1024n ** 4n,
  p: 1000n ** 5n,
  pb: 1000n ** 5n,
  pi: 1024n ** 5n,
  pib: 1024n ** 5n,
  e: 1000n ** 6n,
  eb: 1000n ** 6n,
  ei: 1024n ** 6n,
  eib: 1024n ** 6n,
};

/** Case-sensitive: `m` is milli, `M` mega. */
const SI_UNITS: Record<string, number | bigint> = {
  '': 1,
  m: 0.001,
  k: 1000,
  K: 1000,
  Ki: 1024,
  M: 1000 ** 2,
  Mi: 1024 ** 2,
  G: 1000 ** 3,
  Gi: 1024 ** 3,
  T: 1000 ** 4,
  Ti: 1024 ** 4,
  P: 1000 ** 5,
  Pi: 1024 ** 5,
  E: 1000n ** 6n,
  Ei: 1024n ** 6n,
};

const AMOUNT = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.)(.*)$/;

function splitAmount(name: string, raw: string): [string, string] {
  const text = raw.replace(/^"+|"+$/g, '');
  if (text.includes(' ')) throw builtinFailure(name, 'spaces not allowed in resource strings');
  const match = AMOUNT.exec(text);
  if (!match) throw builtinFailure(name, name === 'units.parse_bytes' ? 'no byte amount provided' : 'no amount provided');
  return [match[1] as string, match[2] as string];
}

/** Exponents beyond this would build numbers with millions of digits. */
const MAX_EXPONENT = 400;

/** amount × factor, truncated to an integer, computed exactly. */
function scaleToInteger(name: string, amount: string, factor: bigint): bigint {
  const [whole, fraction = ''] = amount.toLowerCase().split('e')[0]?.split('.') ?? ['0'];
  const exponent = Number(amount.toLowerCase().split('e')[1] ?? 0) - fraction.length;
  if (Math.abs(exponent) > MAX_EXPONENT) throw builtinFailure(name, 'could not parse byte amount to a number');
  let value = BigInt(`${whole || '0'}${fraction}`) * factor;
  if (exponent >= 0) value *= 10n ** BigInt(exponent);
  else value /= 10n ** BigInt(-exponent);
  return value;
}

function parseBytes(operands: RegoValue[]): RegoValue {
  const name = 'units.parse_bytes';
  const [amount, unit] = splitAmount(name, stringOperand(name, operands, 1));
  const factor = BYTE_UNITS[unit.toLowerCase()];
  if (factor === undefined) throw builtinFailure(name, `byte unit ${unit.toLowerCase()} not recognized`);
  return regoNumber(scaleToInteger(name, amount, factor));
}

function parseUnits(operands: RegoValue[]): RegoValue {
  const name = 'units.parse';
  const [amount, unit] = splitAmount(name, stringOperand(name, operands, 1));
  const factor = SI_UNITS[unit];
  if (factor === undefined) throw builtinFailure(name, `unit ${unit} not recognized`);
  if (typeof factor === 'number' && !Number.isInteger(factor)) return Number(amount) * factor;
  let value: number | bigint;
  try {
    value = parseNumberText(amount.replace(/^\./, '0.').replace(/\.$/, ''));
  } catch {
    throw builtinFailure(name, 'could not parse amount to a number');
  }
  return multiplyNumbers(value, factor, name);
}

export const UNIT_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'units.parse_bytes', arity: 1, implementation: parseBytes },
  { name: 'units.parse', arity: 1, implementation: parseUnits },
]);
