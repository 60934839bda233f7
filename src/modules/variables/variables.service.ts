import type { Kysely, Transaction } from 'kysely';
import type { DialectName } from '../../db/db.client.ts';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { readListRevision } from '../../db/db.list-revisions.ts';
import { deriveKey } from '../../lib/crypto.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { EnvironmentForVariables, ServiceForVariables } from './variables.builtins.ts';
import { createVariableDefinitions, type Owner } from './variables.definitions.ts';
import type { VariableScope } from './variables.resolver.ts';
import type { AliasBody, OverrideBody, SecretEditBody, VariableRequestBody } from './variables.schemas.ts';
import { findVariable } from './variables.repo.ts';
import { createVariableSnapshots } from './variables.snapshot.ts';
import { createVariableViews } from './variables.views.ts';
import { createVariableWrites } from './variables.writes.ts';

/**
 * Variables and secrets (SPEC.md "Environment variable scopes and behaviour", rules 1–6; DESIGN.md §6).
 *
 *   - Rows live at PROJECT, ENVIRONMENT or a service scope; built-ins are computed, never stored.
 *   - A name is one row per scope: creating it again replaces the earlier row (rule 3), unless one is a secret and
 *     the other is not (409: a secret is never silently turned into plain text, nor the reverse).
 *   - Every write runs in one transaction that, before committing, refuses an alias cycle in any environment or
 *     service the written scope reaches (400 naming the cycle), so nothing half-written or cyclic is ever stored.
 *   - Secrets are sealed with the secret box, bound to their row; no answer, log or error carries their value.
 *
 * The service is assembled from parts over the same deps: variables.definitions.ts (owners and what a consumer sees),
 * variables.views.ts (listings and the resolved view), variables.writes.ts (writes and their checks) and
 * variables.snapshot.ts (the deployment snapshot and its content hash).
 */

export { MAX_VARIABLES_PER_SCOPE } from './variables.writes.ts';

/** The services of an environment, as the services module will report them; until it exists, there are none. */
export interface ServiceVariableContext {
  services(environmentId: string): Promise<ServiceForVariables[]>;
}

export const NO_SERVICES: ServiceVariableContext = { services: async () => [] };

/**
 * Told, inside the writing transaction, that what a scope's consumers resolve may have changed, so the owner of
 * deployments can mark running services OUT_OF_DATE (rule 4). environmentId is null for a PROJECT-scope change.
 */
export interface VariableChangeListener {
  variablesChanged(trx: Transaction<DB>, change: { projectId: string; environmentId: string | null }): Promise<void>;
}

export const NO_CHANGE_LISTENER: VariableChangeListener = { variablesChanged: async () => undefined };

export interface VariablesDeps {
  db: Kysely<DB>;
  dialect: DialectName;
  clock: Clock;
  secrets: SecretBox;
  /** Keys the content hash's fingerprints of secret values (variablesFingerprintKey). */
  fingerprintKey: Buffer;
  environments: { findEnvironmentSummary(environmentId: string): Promise<(EnvironmentForVariables & { createdAt?: string }) | undefined> };
  services: ServiceVariableContext;
  changes: VariableChangeListener;
}

/** A key of its own for the content hash, derived from the secret key, so fingerprints say nothing without it. */
export function variablesFingerprintKey(secretKey: Buffer): Buffer {
  return deriveKey(secretKey, 'slipway/variables-fingerprints/v1');
}

export interface SnapshotVariable {
  key: string;
  scope: VariableScope;
  variable_id: string;
  mount_path: string | null;
  /** The names followed through aliases, from the variable itself to the one that holds the value. */
  alias_chain: string[];
  /** The plain value, or, for a secret or a hidden built-in, its sealed form (open with openSnapshotValue). */
  value?: string;
  sealed?: { envelope: string; associated_data: string };
}

export interface VariableSnapshot {
  environment_id: string;
  service_id: string | null;
  /** Changes exactly when a name, a mount or a resolved value changes; compare it to tell OUT_OF_DATE (rule 4). */
  content_hash: string;
  variables: SnapshotVariable[];
}

export function createVariablesService(deps: VariablesDeps) {
  const reader = createVariableDefinitions(deps);
  const snapshots = createVariableSnapshots(deps, reader);
  const views = createVariableViews(deps, reader, snapshots);
  const writes = createVariableWrites(deps, reader, views);

  return {
    projectOwner: reader.projectOwner,
    environmentOwner: reader.environmentOwner,
    serviceOwner: reader.serviceOwner,
    listVariables: views.listVariables,
    listSecrets: views.listSecrets,
    createVariable: (owner: Owner, body: VariableRequestBody) => writes.create(owner, 'variable', body),
    createSecret: (owner: Owner, body: VariableRequestBody) => writes.create(owner, 'secret', body),
    editVariable: (owner: Owner, id: string, body: VariableRequestBody) => writes.edit(owner, 'variable', id, body),
    editSecret: (owner: Owner, id: string, body: SecretEditBody) => writes.edit(owner, 'secret', id, body),
    deleteVariable: (owner: Owner, id: string) => writes.remove(owner, 'variable', id),
    deleteSecret: (owner: Owner, id: string) => writes.remove(owner, 'secret', id),
    overrideVariable: (owner: Owner, id: string, body: OverrideBody) => writes.override(owner, 'variable', id, body),
    overrideSecret: (owner: Owner, id: string, body: OverrideBody) => writes.override(owner, 'secret', id, body),
    aliasVariable: (owner: Owner, id: string, body: AliasBody) => writes.alias(owner, 'variable', id, body),
    aliasSecret: (owner: Owner, id: string, body: AliasBody) => writes.alias(owner, 'secret', id, body),
    importVariables: writes.importRows,
    /** The stored row of an id (any organization's: callers check access to its owner), for the unified /variable API. */
    findVariableRow: (id: string) => findVariable(deps.db, id),
    explain: views.explain,
    /**
     * Where what a project's variable listings and resolutions show is at: the database moves it forward with every
     * write to one of its variables or services, or to an environment's name, mode or cluster. Read it before the answer.
     */
    variablesRevision: (projectId: string) => readListRevision(deps.db, projectId, 'variables'),
    resolveForDeployment: snapshots.resolveForDeployment,
    openSnapshotValue: snapshots.openSnapshotValue,
    copyEnvironmentVariables: writes.copyEnvironmentVariables,
    copyServiceVariables: writes.copyServiceVariables,
    deleteServiceVariables: writes.removeServiceVariables,
  };
}

export type VariablesService = ReturnType<typeof createVariablesService>;
export type VariableOwner = Owner;
