import type { BuiltinDefinition } from '../rego.builtins.ts';
import { AGGREGATE_BUILTINS } from './aggregates.builtins.ts';
import { ARRAY_BUILTINS } from './arrays.builtins.ts';
import { CAST_BUILTINS } from './casts.builtins.ts';
import { COMPARISON_BUILTINS } from './comparison.builtins.ts';
import { CRYPTO_BUILTINS } from './crypto.builtins.ts';
import { ENCODING_BUILTINS } from './encoding.builtins.ts';
import { GLOB_BUILTINS } from './glob.builtins.ts';
import { GRAPH_BUILTINS } from './graph.builtins.ts';
import { JWT_BUILTINS } from './jwt.builtins.ts';
import { NUMBER_BUILTINS } from './numbers.builtins.ts';
import { OBJECT_BUILTINS } from './objects.builtins.ts';
import { REGEX_BUILTINS } from './regex.builtins.ts';
import { RUNTIME_BUILTINS } from './runtime.builtins.ts';
import { SEMVER_BUILTINS } from './semver.builtins.ts';
import { SET_BUILTINS } from './sets.builtins.ts';
import { STRING_BUILTINS } from './strings.builtins.ts';
import { TIME_BUILTINS } from './time.builtins.ts';
import { TYPE_BUILTINS } from './types.builtins.ts';
import { UNIT_BUILTINS } from './units.builtins.ts';
import { UUID_BUILTINS } from './uuid.builtins.ts';
import { YAML_BUILTINS } from './yaml.builtins.ts';

/** Every builtin the engine offers, one definition per name. */
export const ALL_BUILTINS: BuiltinDefinition[] = [
  ...NUMBER_BUILTINS,
  ...COMPARISON_BUILTINS,
  ...AGGREGATE_BUILTINS,
  ...ARRAY_BUILTINS,
  ...SET_BUILTINS,
  ...OBJECT_BUILTINS,
  ...STRING_BUILTINS,
  ...REGEX_BUILTINS,
  ...GLOB_BUILTINS,
  ...ENCODING_BUILTINS,
  ...TYPE_BUILTINS,
  ...CAST_BUILTINS,
  ...TIME_BUILTINS,
  ...SEMVER_BUILTINS,
  ...UUID_BUILTINS,
  ...JWT_BUILTINS,
  ...CRYPTO_BUILTINS,
  ...GRAPH_BUILTINS,
  ...UNIT_BUILTINS,
  ...YAML_BUILTINS,
  ...RUNTIME_BUILTINS,
];
