import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import type { RegoValue } from '../rego.value.ts';
import { operand, stringOperand } from './operands.ts';

/**
 * Semantic versions as OPA parses and orders them (its vendored coreos/go-semver): `+` starts build metadata, the
 * first `-` after that a pre-release; the core is three dot-separated Go int64s (ParseInt: a sign and leading zeros
 * are accepted); identifiers are `[0-9A-Za-z-]+` separated by dots.
 */
interface Version {
  core: [bigint, bigint, bigint];
  prerelease: string[];
}

const IDENTIFIERS = /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/;
const GO_INT64 = /^[+-]?[0-9]+$/;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function splitOff(text: string, separator: string): [string, string] {
  const index = text.indexOf(separator);
  return index === -1 ? [text, ''] : [text.slice(0, index), text.slice(index + 1)];
}

function parseVersion(text: string): Version | undefined {
  const [withoutMetadata, metadata] = splitOff(text, '+');
  const [core, prerelease] = splitOff(withoutMetadata, '-');
  const parts = core.split('.');
  if (parts.length < 3) return undefined;
  const dotted = [parts[0], parts[1], parts.slice(2).join('.')] as [string, string, string];
  if ((prerelease !== '' && !IDENTIFIERS.test(prerelease)) || (metadata !== '' && !IDENTIFIERS.test(metadata))) return undefined;
  const numbers: bigint[] = [];
  for (const part of dotted) {
    if (!GO_INT64.test(part)) return undefined;
    const value = BigInt(part);
    if (value > INT64_MAX || value < INT64_MIN) return undefined;
    numbers.push(value);
  }
  return { core: numbers as [bigint, bigint, bigint], prerelease: prerelease === '' ? [] : prerelease.split('.') };
}

/** Go's strconv.Atoi success: an optional sign and decimal digits within int64. */
function atoi(text: string): bigint | undefined {
  if (!GO_INT64.test(text)) return undefined;
  const value = BigInt(text);
  return value > INT64_MAX || value < INT64_MIN ? undefined : value;
}

function comparePrerelease(a: string[], b: string[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    const numberX = atoi(x);
    const numberY = atoi(y);
    // Numeric identifiers sort before alphanumeric ones.
    if (numberX !== undefined && numberY === undefined) return -1;
    if (numberX === undefined && numberY !== undefined) return 1;
    if (numberX !== undefined && numberY !== undefined && numberX !== numberY) return numberX < numberY ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}

function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    if (a.core[i] !== b.core[i]) return (a.core[i] as bigint) < (b.core[i] as bigint) ? -1 : 1;
  }
  // A version without a pre-release sorts after one with.
  if (a.prerelease.length === 0 && b.prerelease.length > 0) return 1;
  if (b.prerelease.length === 0 && a.prerelease.length > 0) return -1;
  return comparePrerelease(a.prerelease, b.prerelease);
}

function versionOperand(operands: RegoValue[], position: number): Version {
  const text = stringOperand('semver.compare', operands, position);
  const version = parseVersion(text);
  if (!version) throw builtinFailure('semver.compare', `operand ${position}: string ${JSON.stringify(text)} is not a valid SemVer`);
  return version;
}

export const SEMVER_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'semver.is_valid',
    arity: 1,
    implementation: (operands) => {
      const value = operand(operands, 0);
      return typeof value === 'string' && parseVersion(value) !== undefined;
    },
  },
  {
    name: 'semver.compare',
    arity: 2,
    implementation: (operands) => compareVersions(versionOperand(operands, 1), versionOperand(operands, 2)),
  },
]);
