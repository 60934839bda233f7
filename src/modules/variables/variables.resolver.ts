/**
 * Variable resolution, without I/O (SPEC.md "Environment variable scopes and behaviour"; DESIGN.md §6):
 *
 *   - precedence: of the definitions of one name that a consumer sees, the narrowest scope wins
 *     (APPLICATION and the other service scopes > ENVIRONMENT > PROJECT > BUILT_IN);
 *   - aliases (rule 2): a definition whose value is `$NAME` takes the final value of NAME as the same consumer sees
 *     it, so a PROJECT alias of a name that one environment overrides follows that override there; chains are
 *     followed to the definition that holds a value;
 *   - a cycle has no value: writers refuse it (findAliasCycle), and resolution reports it rather than looping.
 */

export const SERVICE_SCOPES = ['APPLICATION', 'CONTAINER', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW'] as const;
export type ServiceScope = (typeof SERVICE_SCOPES)[number];
export type StoredScope = 'PROJECT' | 'ENVIRONMENT' | ServiceScope;
export type VariableScope = 'BUILT_IN' | StoredScope;

const SCOPE_RANK: Record<VariableScope, number> = {
  BUILT_IN: 0,
  PROJECT: 1,
  ENVIRONMENT: 2,
  APPLICATION: 3,
  CONTAINER: 3,
  JOB: 3,
  HELM: 3,
  TERRAFORM: 3,
  AGENTIC_WORKFLOW: 3,
};

export function scopeRank(scope: VariableScope): number {
  return SCOPE_RANK[scope];
}

/** `$NAME` where NAME is a valid variable name: the whole value is the alias (rule 2); anything else is literal. */
const ALIAS_VALUE = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

export function aliasTargetOf(value: string): string | undefined {
  return ALIAS_VALUE.exec(value)?.[1];
}

export interface VariableDefinition {
  id: string;
  key: string;
  scope: VariableScope;
  /** A user secret: its value is sealed and not known here. */
  secret: boolean;
  /** A hidden built-in (SPEC.md's table). */
  sensitive: boolean;
  /** The literal value; undefined for secrets and aliases. */
  value: string | undefined;
  /** The name this definition aliases, if it is an alias. */
  aliasOf: string | undefined;
}

export interface ResolvedVariable<D extends VariableDefinition = VariableDefinition> {
  key: string;
  /** The definition that set the name for this consumer. */
  definition: D;
  /** The definitions followed from `definition` through aliases; the last one holds the value (unless unresolved). */
  chain: D[];
  /** The alias name at the end of the chain that names nothing, or that closes a cycle. */
  unresolved: string | undefined;
  /** True when a secret or a hidden built-in is anywhere on the chain: the value must not be shown. */
  hidden: boolean;
}

/** For each name, the definition of the narrowest scope. */
export function finalDefinitions<D extends VariableDefinition>(definitions: readonly D[]): Map<string, D> {
  const final = new Map<string, D>();
  for (const definition of definitions) {
    const current = final.get(definition.key);
    if (current === undefined || SCOPE_RANK[definition.scope] > SCOPE_RANK[current.scope]) final.set(definition.key, definition);
  }
  return final;
}

/**
 * Every final variable of a consumer that sees `definitions` (all its scopes together), sorted by name. Chains are
 * memoised by name, so resolving n variables costs O(n) whatever the aliases.
 */
export function resolveVariables<D extends VariableDefinition>(definitions: readonly D[]): ResolvedVariable<D>[] {
  const final = finalDefinitions(definitions);
  const done = new Map<string, ResolvedVariable<D>>();

  function resolve(key: string, definition: D): ResolvedVariable<D> {
    const known = done.get(key);
    if (known !== undefined) return known;
    const chain: D[] = [definition];
    const onChain = new Set([key]);
    let unresolved: string | undefined;
    let tail: ResolvedVariable<D> | undefined;
    let current = definition;
    while (current.aliasOf !== undefined) {
      const nextKey = current.aliasOf;
      const resolvedNext = done.get(nextKey);
      if (resolvedNext !== undefined) {
        tail = resolvedNext;
        break;
      }
      const next = final.get(nextKey);
      if (next === undefined || onChain.has(nextKey)) {
        unresolved = nextKey;
        break;
      }
      chain.push(next);
      onChain.add(nextKey);
      current = next;
    }
    if (tail !== undefined) {
      chain.push(...tail.chain);
      unresolved = tail.unresolved;
    }
    const result: ResolvedVariable<D> = {
      key,
      definition,
      chain,
      unresolved,
      hidden: chain.some((link) => link.secret || link.sensitive),
    };
    done.set(key, result);
    return result;
  }

  return [...final.keys()].sort().map((key) => resolve(key, final.get(key) as D));
}

/**
 * The first alias cycle among what one consumer sees, as the names around it (`["A", "B", "A"]`), or undefined.
 * Only final definitions count: an alias shadowed by a narrower definition of its name takes no part.
 */
export function findAliasCycle(definitions: readonly VariableDefinition[]): string[] | undefined {
  const final = finalDefinitions(definitions);
  const cleared = new Set<string>();
  for (const start of [...final.keys()].sort()) {
    if (cleared.has(start)) continue;
    const path: string[] = [];
    const onPath = new Map<string, number>();
    let key: string | undefined = start;
    while (key !== undefined && !cleared.has(key)) {
      const seenAt = onPath.get(key);
      if (seenAt !== undefined) return [...path.slice(seenAt), key];
      onPath.set(key, path.length);
      path.push(key);
      key = final.get(key)?.aliasOf;
    }
    for (const visited of path) cleared.add(visited);
  }
  return undefined;
}
