import { badRequest } from '../../lib/errors.ts';
import type { ServiceKind } from './variables.builtins.ts';
import { scopeRank, SERVICE_SCOPES, type ServiceScope, type StoredScope, type VariableScope } from './variables.resolver.ts';
import type { Static } from 'typebox';
import type { EnvironmentVariable, Secret, UnifiedVariableView } from './variables.schemas.ts';
import type { VariableOwner, VariablesService } from './variables.service.ts';

/**
 * The unified /variable API (the reference's "Variable Main Calls") over the same service as the per-scope routes: a
 * variable or a secret is addressed by its scope and its owner's id (or by its own id) instead of by the path. This
 * file turns those addresses into the owners the service writes at, and the service's two views (variables, secrets)
 * into the reference's one `VariableResponse`.
 */

/** What a service scope's owner is found by: the services module's lookup of one service of one kind (404 otherwise). */
export type ServiceLocator = (kind: Exclude<ServiceKind, 'DATABASE'>, serviceId: string) => Promise<{ id: string; environmentId: string }>;

/** The route-access target that holds an owner of `scope`, and the id the authorizer looks it up by. */
export interface OwnerTarget {
  target: 'project' | 'environment' | 'service';
  id: string;
}

export function isServiceScope(scope: VariableScope): scope is ServiceScope {
  return (SERVICE_SCOPES as readonly string[]).includes(scope);
}

/**
 * The target of the owner named by a scope and a parent id. BUILT_IN names no owner: built-ins are computed per
 * environment, and changed through an override at a stored scope.
 */
export function targetOfScope(scope: VariableScope, parentId: string, field: string): OwnerTarget & { scope: StoredScope } {
  if (scope === 'BUILT_IN') {
    throw badRequest('BUILT_IN variables are computed by the platform and belong to no owner; name a PROJECT, ENVIRONMENT or service scope', [
      { field, message: 'BUILT_IN is not a scope a variable can be written at or listed by' },
    ]);
  }
  if (scope === 'PROJECT') return { scope, target: 'project', id: parentId };
  if (scope === 'ENVIRONMENT') return { scope, target: 'environment', id: parentId };
  return { scope, target: 'service', id: parentId };
}

/** The owner a scope and parent id name, in the organization the authorizer established for it. */
export async function ownerOfScope(
  variables: VariablesService,
  locateService: ServiceLocator,
  scope: StoredScope,
  parentId: string,
  organizationId: string,
): Promise<VariableOwner> {
  if (scope === 'PROJECT') return variables.projectOwner(organizationId, parentId);
  if (scope === 'ENVIRONMENT') return variables.environmentOwner(parentId);
  const service = await locateService(scope, parentId);
  return variables.serviceOwner(service.environmentId, service.id);
}

/**
 * The per-scope views (a write answers either, typed as their union: the kind it was called with decides which).
 */
export type VariableView = Static<typeof EnvironmentVariable>;
export type SecretView = Static<typeof Secret>;
type LinkedView = NonNullable<VariableView['overridden_variable']>;
type LinkedSecretView = NonNullable<SecretView['overridden_secret']>;

function optionalFields(view: { description: string | null; enable_interpolation_in_file: boolean | null }) {
  return {
    ...(view.description === null ? {} : { description: view.description }),
    ...(view.enable_interpolation_in_file === null ? {} : { enable_interpolation_in_file: view.enable_interpolation_in_file }),
  };
}

function serviceFields(view: { service_id?: string; service_name?: string; service_type?: ServiceKind }) {
  return {
    ...(view.service_id === undefined ? {} : { service_id: view.service_id }),
    ...(view.service_name === undefined ? {} : { service_name: view.service_name }),
    ...(view.service_type === undefined ? {} : { service_type: view.service_type }),
  };
}

function linkedOfVariable(linked: LinkedView) {
  return { ...linked };
}

/** A secret's link carries no value: secrets are write-only. */
function linkedOfSecret(linked: LinkedSecretView) {
  return { id: linked.id, key: linked.key, value: null, mount_path: linked.mount_path, scope: linked.scope, variable_type: linked.variable_type };
}

/** A variable as the unified API answers it: its value, or null when hidden (a hidden built-in not revealed). */
export function unifiedOfVariable(view: VariableView): UnifiedVariableView {
  return {
    id: view.id,
    created_at: view.created_at,
    ...(view.updated_at === undefined ? {} : { updated_at: view.updated_at }),
    key: view.key,
    value: view.value ?? null,
    mount_path: view.mount_path,
    ...(view.overridden_variable === undefined ? {} : { overridden_variable: linkedOfVariable(view.overridden_variable) }),
    ...(view.aliased_variable === undefined ? {} : { aliased_variable: linkedOfVariable(view.aliased_variable) }),
    scope: view.scope,
    variable_type: view.variable_type,
    ...serviceFields(view),
    is_secret: false,
    ...optionalFields(view),
  };
}

/** A secret as the unified API answers it: never its value. */
export function unifiedOfSecret(view: SecretView): UnifiedVariableView {
  return {
    id: view.id,
    created_at: view.created_at,
    updated_at: view.updated_at,
    key: view.key,
    value: null,
    mount_path: view.mount_path,
    ...(view.overridden_secret === undefined ? {} : { overridden_variable: linkedOfSecret(view.overridden_secret) }),
    ...(view.aliased_secret === undefined ? {} : { aliased_variable: linkedOfSecret(view.aliased_secret) }),
    scope: view.scope,
    variable_type: view.variable_type,
    ...serviceFields(view),
    is_secret: true,
    ...optionalFields(view),
  };
}

/**
 * What a consumer at `owner` sees, variables and secrets together (each as the per-scope listings show it), by name
 * and from the broadest scope to the narrowest. `withVariables`/`withSecrets` say which kinds the caller asked for and
 * may read.
 */
export async function listUnified(
  variables: VariablesService,
  owner: VariableOwner,
  kinds: { withVariables: boolean; withSecrets: boolean },
): Promise<UnifiedVariableView[]> {
  const results = [
    ...(kinds.withVariables ? (await variables.listVariables(owner, false)).map((view) => unifiedOfVariable(view)) : []),
    ...(kinds.withSecrets ? (await variables.listSecrets(owner)).map((view) => unifiedOfSecret(view)) : []),
  ];
  return results.sort((a, b) => (a.key !== b.key ? (a.key < b.key ? -1 : 1) : scopeRank(a.scope) - scopeRank(b.scope)));
}
