import { parse, stringify, YAMLParseError } from 'yaml';
import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { fromJson, toJson, type RegoValue } from '../rego.value.ts';
import { operand, stringOperand } from './operands.ts';

/**
 * yaml.* builtins. OPA goes through sigs.k8s.io/yaml (YAML 1.1 via go-yaml, converted to JSON), so documents are
 * read as YAML 1.1 and must be JSON-compatible; output sorts keys and does not indent sequences under keys, as
 * go-yaml does. Error texts follow go-yaml's `yaml: line N: ...` form.
 */
const MAX_ALIAS_COUNT = 100;

function goYamlMessage(error: YAMLParseError): string {
  const line = error.linePos?.[0]?.line ?? 1;
  const first = error.message.split('\n')[0] ?? error.message;
  let text = first.replace(/ at line \d+, column \d+:?$/, '');
  if (error.code === 'MISSING_CHAR' && /\]/.test(first)) text = "did not find expected ',' or ']'";
  else if (error.code === 'MISSING_CHAR' && /\}/.test(first)) text = "did not find expected ',' or '}'";
  return `yaml: line ${line}: ${text}`;
}

function parseYaml(name: string, text: string): RegoValue {
  let document: unknown;
  try {
    document = parse(text, { version: '1.1', intAsBigInt: true, maxAliasCount: MAX_ALIAS_COUNT, uniqueKeys: true });
  } catch (error) {
    if (error instanceof YAMLParseError) throw builtinFailure(name, goYamlMessage(error));
    if (error instanceof Error) throw builtinFailure(name, `yaml: ${error.message}`);
    throw error;
  }
  try {
    return fromJson(document ?? null);
  } catch {
    throw builtinFailure(name, 'yaml: document is not JSON-compatible');
  }
}

export const YAML_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'yaml.marshal',
    arity: 1,
    implementation: (operands) => {
      // Through JSON, as OPA does: sets become arrays, non-string keys their JSON text.
      return stringify(toJson(operand(operands, 0)), { sortMapEntries: true, indentSeq: false, version: '1.1' });
    },
  },
  { name: 'yaml.unmarshal', arity: 1, implementation: (operands) => parseYaml('yaml.unmarshal', stringOperand('yaml.unmarshal', operands, 1)) },
  {
    name: 'yaml.is_valid',
    arity: 1,
    implementation: (operands) => {
      const text = operand(operands, 0);
      if (typeof text !== 'string') return false;
      try {
        parseYaml('yaml.is_valid', text);
        return true;
      } catch {
        return false;
      }
    },
  },
]);
