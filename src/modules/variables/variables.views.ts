import type { Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import type { BuiltInVariable } from './variables.builtins.ts';
import { kindNoun, type Definition, type Kind, type Owner, type VariableDefinitions } from './variables.definitions.ts';
import type { VariableRow } from './variables.repo.ts';
import { resolveVariables, scopeRank } from './variables.resolver.ts';
import type { VariablesDeps } from './variables.service.ts';
import type { VariableSnapshots } from './variables.snapshot.ts';

/**
 * What the API shows of variables and secrets: listings, the answer of a write, and the resolved view of a consumer.
 * A secret's value never appears; a hidden built-in's only with `reveal`.
 */

function booleanOf(value: number | null): boolean | null {
  return value === null ? null : value === 1;
}

export type VariableViews = ReturnType<typeof createVariableViews>;

type DefinitionsByKey = ReadonlyMap<string, readonly Definition[]>;

export function createVariableViews(
  deps: Pick<VariablesDeps, 'clock'>,
  reader: Pick<VariableDefinitions, 'consumer' | 'visibleDefinitions'>,
  snapshots: Pick<VariableSnapshots, 'contentHash'>,
) {
  const { clock } = deps;
  const { consumer, visibleDefinitions } = reader;
  const { contentHash } = snapshots;

  // ---- views --------------------------------------------------------------------------------------------------

  /** A consumer's definitions by name: what an override overrides and what an alias names are looked up in it. */
  function byKeyOf(definitions: readonly Definition[]): DefinitionsByKey {
    const index = new Map<string, Definition[]>();
    for (const definition of definitions) {
      const same = index.get(definition.key);
      if (same === undefined) index.set(definition.key, [definition]);
      else same.push(definition);
    }
    return index;
  }

  /** The definition of `key` a consumer sees below `rank` (what an override overrides), or undefined. */
  function broaderDefinition(byKey: DefinitionsByKey, key: string, rank: number): Definition | undefined {
    let best: Definition | undefined;
    for (const definition of byKey.get(key) ?? []) {
      if (scopeRank(definition.scope) >= rank) continue;
      if (best === undefined || scopeRank(definition.scope) > scopeRank(best.scope)) best = definition;
    }
    return best;
  }

  function finalDefinition(byKey: DefinitionsByKey, key: string): Definition | undefined {
    return broaderDefinition(byKey, key, Number.POSITIVE_INFINITY);
  }

  /**
   * The reference requires `value` and `mount_path` (strings, not nullable) on the variable an override overrides or
   * an alias names, so a hidden value is the empty string there and no mount path is the empty string.
   */
  function linkedVariable(definition: Definition, reveal: boolean) {
    const shown = !definition.secret && (!definition.sensitive || reveal);
    return {
      id: definition.id,
      key: definition.key,
      value: shown ? (definition.row?.value ?? definition.value ?? '') : '',
      mount_path: definition.mountPath ?? '',
      scope: definition.scope,
      variable_type: definition.variableType,
    };
  }

  function linkedSecret(definition: Definition) {
    return {
      id: definition.id,
      key: definition.key,
      mount_path: definition.mountPath ?? '',
      scope: definition.scope,
      variable_type: definition.variableType,
      description: definition.row?.description ?? null,
      enable_interpolation_in_file: booleanOf(definition.row?.enable_interpolation_in_file ?? null),
    };
  }

  function serviceFields(owner: Owner, row: VariableRow | undefined, builtIn: BuiltInVariable | undefined) {
    const service = builtIn?.service ?? (row?.service_id !== null && row?.service_id !== undefined && owner.service?.id === row.service_id ? owner.service : undefined);
    if (service === undefined) return {};
    return { service_id: service.id, service_name: service.name, service_type: service.kind };
  }

  function links(definition: Definition, byKey: DefinitionsByKey) {
    const overridden = definition.variableType === 'OVERRIDE' ? broaderDefinition(byKey, definition.key, scopeRank(definition.scope)) : undefined;
    const aliased = definition.aliasOf === undefined ? undefined : finalDefinition(byKey, definition.aliasOf);
    return { overridden, aliased };
  }

  function variableView(owner: Owner, definition: Definition, byKey: DefinitionsByKey, reveal: boolean) {
    const { overridden, aliased } = links(definition, byKey);
    const row = definition.row;
    const hidden = definition.sensitive && !reveal;
    return {
      id: definition.id,
      created_at: row?.created_at ?? owner.environment?.createdAt ?? isoTimestamp(clock),
      ...(row === undefined ? {} : { updated_at: row.updated_at }),
      key: definition.key,
      ...(hidden ? {} : { value: row?.value ?? definition.value ?? '' }),
      mount_path: definition.mountPath,
      description: row?.description ?? null,
      enable_interpolation_in_file: booleanOf(row?.enable_interpolation_in_file ?? null),
      ...(overridden === undefined ? {} : { overridden_variable: linkedVariable(overridden, reveal) }),
      ...(aliased === undefined ? {} : { aliased_variable: linkedVariable(aliased, reveal) }),
      scope: definition.scope,
      variable_type: definition.variableType,
      ...serviceFields(owner, row, definition.builtIn),
    };
  }

  function secretView(owner: Owner, definition: Definition, byKey: DefinitionsByKey) {
    const { overridden, aliased } = links(definition, byKey);
    const row = definition.row as VariableRow;
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      key: row.key,
      mount_path: row.mount_path,
      ...(overridden?.secret === true ? { overridden_secret: linkedSecret(overridden) } : {}),
      ...(aliased?.secret === true ? { aliased_secret: linkedSecret(aliased) } : {}),
      scope: definition.scope,
      variable_type: definition.variableType,
      ...serviceFields(owner, row, undefined),
      description: row.description,
      enable_interpolation_in_file: booleanOf(row.enable_interpolation_in_file),
    };
  }

  /**
   * The answer of a write, read inside its transaction: a concurrent replacement after commit cannot make it a 404.
   * The built-ins come from the services port, which reads through its own connection: they are computed before the
   * transaction (on SQLite it holds the one connection).
   */
  async function viewOf(trx: Transaction<DB>, owner: Owner, kind: Kind, rowId: string, builtIns: BuiltInVariable[]) {
    const context = (await visibleDefinitions(owner, trx, builtIns)).definitions;
    const definition = context.find((candidate) => candidate.id === rowId);
    if (definition === undefined) throw notFound(`${kindNoun(kind)} ${rowId} not found`);
    const byKey = byKeyOf(context);
    return kind === 'secret' ? secretView(owner, definition, byKey) : variableView(owner, definition, byKey, false);
  }

  // ---- listings (rule 1: a consumer sees its project's, its environment's and its own rows) ---------------------

  /** By name, then from the broadest scope to the narrowest. */
  function listingOrder(a: Definition, b: Definition): number {
    if (a.key !== b.key) return a.key < b.key ? -1 : 1;
    return scopeRank(a.scope) - scopeRank(b.scope);
  }

  async function listVariables(owner: Owner, reveal: boolean) {
    const context = (await visibleDefinitions(owner)).definitions;
    const byKey = byKeyOf(context);
    return context
      .filter((definition) => !definition.secret)
      .sort(listingOrder)
      .map((definition) => variableView(owner, definition, byKey, reveal));
  }

  async function listSecrets(owner: Owner) {
    const context = (await visibleDefinitions(owner)).definitions;
    const byKey = byKeyOf(context);
    return context
      .filter((definition) => definition.secret)
      .sort(listingOrder)
      .map((definition) => secretView(owner, definition, byKey));
  }

  // ---- the resolved view (what a deployment would get, and why) -----------------------------------------------

  type Link = { id: string; key: string; scope: Definition['scope']; variable_type: Definition['variableType']; is_secret: boolean };

  /** A definition as the chains and overrides name it; made once per definition, as many chains end at the same one. */
  function linkOf(links: Map<Definition, Link>, definition: Definition): Link {
    let made = links.get(definition);
    if (made === undefined) {
      made = { id: definition.id, key: definition.key, scope: definition.scope, variable_type: definition.variableType, is_secret: definition.secret };
      links.set(definition, made);
    }
    return made;
  }

  /**
   * Every final variable of an environment (or of one of its services), with the scope that set it, the alias chain
   * that produced its value and what it overrides. Secret values never appear; hidden built-ins only with `reveal`.
   */
  async function explain(environmentId: string, serviceId: string | undefined, reveal: boolean) {
    const owner = await consumer(environmentId, serviceId);
    const { definitions: context, project } = await visibleDefinitions(owner);
    const resolved = resolveVariables(context);
    const byKey = byKeyOf(context);
    const links = new Map<Definition, Link>();
    const results = resolved.map((variable) => {
      const hidden = variable.chain.some((definition) => definition.secret) || (variable.hidden && !reveal);
      const holder = variable.chain[variable.chain.length - 1] as Definition;
      const rank = scopeRank(variable.definition.scope);
      // Most names have one definition: only a name defined at several scopes has anything to override.
      const same = byKey.get(variable.key) ?? [];
      const overrides =
        same.length < 2
          ? []
          : same
              .filter((definition) => scopeRank(definition.scope) < rank)
              .sort((a, b) => scopeRank(b.scope) - scopeRank(a.scope))
              .map((definition) => linkOf(links, definition));
      return {
        key: variable.key,
        value: hidden || variable.unresolved !== undefined ? undefined : (holder.value ?? ''),
        hidden,
        scope: variable.definition.scope,
        variable_id: variable.definition.id,
        variable_type: variable.definition.variableType,
        is_secret: variable.definition.secret,
        mount_path: variable.definition.mountPath,
        alias_chain: variable.chain.map((definition) => linkOf(links, definition)),
        unresolved_alias: variable.unresolved ?? null,
        overrides,
      };
    });
    return { content_hash: contentHash(resolved, project), results };
  }

  return { viewOf, listVariables, listSecrets, explain };
}
