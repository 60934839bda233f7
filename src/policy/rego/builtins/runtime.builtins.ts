import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject } from '../rego.value.ts';

/** opa.runtime: OPA's view of its configuration and environment. Slipway exposes none of it to policies. */
export const RUNTIME_BUILTINS: BuiltinDefinition[] = defineBuiltins([{ name: 'opa.runtime', arity: 0, implementation: () => new RegoObject() }]);
