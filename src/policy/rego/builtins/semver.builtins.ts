import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { compareStrings, type RegoValue } from '../rego.value.ts';
import { operand, stringOperand } from './operands.ts';

/** Semantic versions (semver.org 2.0.0), as OPA's semver builtins validate and order them. */
interface Version {
  core: [bigint, bigint, bigint];
  prerelease: string[];
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

function parseVersion(text: string): Version | undefined {
  const match = SEMVER.exec(text);
  if (!match) return undefined;
  return {
    core: [BigInt(match[1] as string), BigInt(match[2] as string), BigInt(match[3] as string)],
    prerelease: match[4] === undefined ? [] : match[4].split('.'),
  };
}

function compareIdentifiers(a: string, b: string): number {
  const numericA = /^\d+$/.test(a);
  const numericB = /^\d+$/.test(b);
  if (numericA && numericB) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (numericA !== numericB) return numericA ? -1 : 1;
  return Math.sign(compareStrings(a, b));
}

function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    if (a.core[i] !== b.core[i]) return (a.core[i] as bigint) < (b.core[i] as bigint) ? -1 : 1;
  }
  // A pre-release sorts before its release.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length === 0 ? 0 : a.prerelease.length === 0 ? 1 : -1;
  const length = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < length; i++) {
    const order = compareIdentifiers(a.prerelease[i] as string, b.prerelease[i] as string);
    if (order !== 0) return order;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
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
