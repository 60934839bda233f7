import { Type, type Static } from 'typebox';
import { BaseFields, ListOf, Nullable, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from './variables.builtins.ts';

/** Longest value of one variable or secret, in characters (a certificate chain fits; a file of megabytes does not). */
export const MAX_VALUE_LENGTH = 32_768;

/**
 * A POSIX environment variable name: letters, digits and underscores, not starting with a digit. Case is kept and
 * significant, as it is in a process environment.
 */
export const VARIABLE_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
export const VariableKey = Type.String({ minLength: 1, maxLength: 255, pattern: VARIABLE_KEY_PATTERN });
/** Any text but NUL (PostgreSQL text cannot hold it). */
const VariableValue = Type.String({ maxLength: MAX_VALUE_LENGTH, pattern: '^[^\\x00]*$' });
/** Where a FILE variable is mounted: an absolute path. */
const MountPath = Type.String({ minLength: 2, maxLength: 1024, pattern: '^/[^\\x00-\\x1f\\x7f]*$' });
const VariableDescription = Type.String({ maxLength: 255, pattern: '^[^\\x00]*$' });

/** The reference's enums, inline (a named schema may appear only once in a response). */
export const APIVariableScopeEnum = Type.Enum(
  ['APPLICATION', 'BUILT_IN', 'ENVIRONMENT', 'PROJECT', 'CONTAINER', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW'],
);
export const APIVariableTypeEnum = Type.Enum(['VALUE', 'ALIAS', 'OVERRIDE', 'BUILT_IN', 'FILE', 'EXTERNAL_SECRET', 'FILE_EXTERNAL_SECRET']);
export const LinkedServiceTypeEnum = Type.Enum(SERVICE_KINDS);

const commonRequestFields = {
  key: VariableKey,
  value: Type.Optional(VariableValue),
  description: Type.Optional(Nullable(VariableDescription)),
  enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
};

export const EnvironmentVariableRequest = Type.Object(
  { ...commonRequestFields, mount_path: Type.Optional(Nullable(MountPath)) },
  {
    $id: 'EnvironmentVariableRequest',
    additionalProperties: false,
    examples: [{ key: 'SHOP_BASE_URL', value: 'https://shop.acme.com', description: 'Where customers reach the shop' }],
  },
);
export type VariableRequestBody = Static<typeof EnvironmentVariableRequest>;

/** As EnvironmentVariableRequest; an absent value keeps the stored one. */
export const EnvironmentVariableEditRequest = Type.Object(
  { ...commonRequestFields, mount_path: Type.Optional(Nullable(MountPath)) },
  { $id: 'EnvironmentVariableEditRequest', additionalProperties: false },
);

export const SecretRequest = Type.Object(
  { ...commonRequestFields, mount_path: Type.Optional(Nullable(MountPath)) },
  {
    $id: 'SecretRequest',
    additionalProperties: false,
    examples: [{ key: 'STRIPE_API_KEY', value: 'sk_test_EXAMPLEnotARealKey000000', description: 'Payments' }],
  },
);

/** As the reference: no mount_path on edit (the mount stays); an absent value keeps the sealed one. */
export const SecretEditRequest = Type.Object(commonRequestFields, { $id: 'SecretEditRequest', additionalProperties: false });
export type SecretEditBody = Static<typeof SecretEditRequest>;

/** The reference's `Value` (EnvironmentVariableOverrideRequest): the overriding value. */
export const OverrideRequest = Type.Object(
  {
    value: Type.Optional(VariableValue),
    description: Type.Optional(Nullable(VariableDescription)),
    enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'Value', additionalProperties: false },
);
export type OverrideBody = Static<typeof OverrideRequest>;

/** The reference's `Key` (EnvironmentVariableAliasRequest): the alias's own name. */
export const AliasRequest = Type.Object(
  {
    key: VariableKey,
    description: Type.Optional(Nullable(VariableDescription)),
    enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'Key', additionalProperties: false },
);
export type AliasBody = Static<typeof AliasRequest>;

/**
 * The variable an override overrides or an alias names. The reference requires `value` and `mount_path` here: a
 * hidden value is the empty string, as is the mount path of a variable that is not a file.
 */
const LinkedVariable = Type.Object({
  id: Uuid,
  key: Type.String(),
  value: Type.String(),
  mount_path: Type.String(),
  scope: APIVariableScopeEnum,
  variable_type: APIVariableTypeEnum,
});
const LinkedSecret = Type.Object({
  id: Uuid,
  key: Type.String(),
  mount_path: Type.String(),
  scope: APIVariableScopeEnum,
  variable_type: APIVariableTypeEnum,
  description: Nullable(Type.String()),
  enable_interpolation_in_file: Nullable(Type.Boolean()),
});

const linkedServiceFields = {
  service_id: Type.Optional(Uuid),
  service_name: Type.Optional(Type.String()),
  service_type: Type.Optional(LinkedServiceTypeEnum),
};

/** `value` is absent for a hidden built-in, unless the caller asked to reveal it and may (rule 5). */
export const EnvironmentVariable = Type.Object(
  {
    ...BaseFields,
    key: Type.String(),
    value: Type.Optional(Type.String()),
    mount_path: Nullable(Type.String()),
    description: Nullable(Type.String()),
    enable_interpolation_in_file: Nullable(Type.Boolean()),
    overridden_variable: Type.Optional(LinkedVariable),
    aliased_variable: Type.Optional(LinkedVariable),
    scope: APIVariableScopeEnum,
    variable_type: APIVariableTypeEnum,
    ...linkedServiceFields,
  },
  {
    $id: 'EnvironmentVariable',
    examples: [
      {
        id: 'b5e9c2a7-4d1f-4e83-9b60-2a7d5f1c8e39',
        created_at: '2026-03-02T11:27:11.890Z',
        key: 'SHOP_BASE_URL',
        mount_path: null,
        description: 'Where customers reach the shop',
        enable_interpolation_in_file: null,
        scope: 'ENVIRONMENT',
        variable_type: 'VALUE',
        updated_at: '2026-03-02T11:27:11.890Z',
        value: 'https://shop.acme.com',
      },
    ],
  },
);
export const EnvironmentVariableResponseList = ListOf(EnvironmentVariable, 'EnvironmentVariableResponseList');

/** Never a value: secrets are write-only. `mount_path` is an addition to the reference's shape. */
export const Secret = Type.Object(
  {
    ...BaseFields,
    key: Type.String(),
    mount_path: Nullable(Type.String()),
    overridden_secret: Type.Optional(LinkedSecret),
    aliased_secret: Type.Optional(LinkedSecret),
    scope: APIVariableScopeEnum,
    variable_type: APIVariableTypeEnum,
    ...linkedServiceFields,
    description: Nullable(Type.String()),
    enable_interpolation_in_file: Nullable(Type.Boolean()),
  },
  {
    $id: 'Secret',
    examples: [
      {
        id: '3c7a1e5d-8b4f-4c29-a6e3-9d0b2f7c4a81',
        created_at: '2026-03-02T11:27:11.967Z',
        key: 'STRIPE_API_KEY',
        mount_path: null,
        scope: 'APPLICATION',
        variable_type: 'VALUE',
        description: 'Payments',
        enable_interpolation_in_file: null,
        updated_at: '2026-03-02T11:27:11.967Z',
        service_id: 'a3f5c1e8-2d7b-4c94-8e06-1f9b5d2a7c34',
        service_name: 'shop-api',
        service_type: 'APPLICATION',
      },
    ],
  },
);
export const SecretResponseList = ListOf(Secret, 'SecretResponseList');

/** One final variable of a consumer, with where it came from (Slipway's addition: the reference has no such view). */
const ResolvedVariableLink = Type.Object({
  id: Uuid,
  key: Type.String(),
  scope: APIVariableScopeEnum,
  variable_type: APIVariableTypeEnum,
  is_secret: Type.Boolean(),
});
export const ResolvedVariable = Type.Object(
  {
    key: Type.String(),
    /** Absent when hidden: a secret (always), or a hidden built-in not revealed, anywhere on the alias chain. */
    value: Type.Optional(Type.String()),
    hidden: Type.Boolean(),
    /** The scope of the definition that set the name for this consumer. */
    scope: APIVariableScopeEnum,
    variable_id: Uuid,
    variable_type: APIVariableTypeEnum,
    is_secret: Type.Boolean(),
    mount_path: Nullable(Type.String()),
    /** The definitions followed through aliases, from the one that set the name to the one that holds the value. */
    alias_chain: Type.Array(ResolvedVariableLink),
    /** An alias name at the end of the chain that names no variable here (the deployment would be refused). */
    unresolved_alias: Nullable(Type.String()),
    /** Definitions of the same name in broader scopes that this one overrides, narrowest first. */
    overrides: Type.Array(ResolvedVariableLink),
  },
  { $id: 'ResolvedVariable' },
);
export const ResolvedVariableResponseList = Type.Object(
  { content_hash: Type.String(), results: Type.Array(ResolvedVariable) },
  { $id: 'ResolvedVariableResponseList' },
);

export const RevealQuery = Type.Object(
  { reveal: Type.Optional(Type.Boolean({ description: 'Show the values of hidden built-in variables (needs the secrets:reveal permission; without it 403).' })) },
  { additionalProperties: false },
);

export const ProjectVariableParams = Type.Object({ projectId: Uuid, environmentVariableId: Uuid }, { additionalProperties: false });
export const ProjectSecretParams = Type.Object({ projectId: Uuid, secretId: Uuid }, { additionalProperties: false });
export const EnvironmentVariableParams = Type.Object({ environmentId: Uuid, environmentVariableId: Uuid }, { additionalProperties: false });
export const EnvironmentSecretParams = Type.Object({ environmentId: Uuid, secretId: Uuid }, { additionalProperties: false });
export const VariablesProjectParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
export const VariablesEnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });

// ---- the unified /variable API (Variable Main Calls) and the .env imports ---------------------------------------

/** Where a unified operation acts: a scope and the id of its owner (a project, an environment or a service). */
const ScopeOwnerId = Uuid;

/** The reference's `VariableRequest`: a variable or a secret (`is_secret`) at any stored scope. */
export const UnifiedVariableRequest = Type.Object(
  {
    ...commonRequestFields,
    value: VariableValue,
    mount_path: Type.Optional(Nullable(MountPath)),
    is_secret: Type.Boolean(),
    variable_scope: APIVariableScopeEnum,
    variable_parent_id: ScopeOwnerId,
    secret_manager_access_id: Type.Optional(Nullable(Uuid)),
  },
  { $id: 'VariableRequest', additionalProperties: false },
);
export type UnifiedVariableRequestBody = Static<typeof UnifiedVariableRequest>;

/** The reference's `VariableEditRequest`: an absent or null value keeps the stored one (a secret's sealed one). */
export const UnifiedVariableEditRequest = Type.Object(
  {
    key: VariableKey,
    value: Type.Optional(Nullable(VariableValue)),
    description: Type.Optional(Nullable(VariableDescription)),
    enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
    secret_manager_access_id: Type.Optional(Nullable(Uuid)),
  },
  { $id: 'VariableEditRequest', additionalProperties: false },
);
export type UnifiedVariableEditBody = Static<typeof UnifiedVariableEditRequest>;

export const UnifiedAliasRequest = Type.Object(
  {
    key: VariableKey,
    alias_scope: APIVariableScopeEnum,
    alias_parent_id: ScopeOwnerId,
    description: Type.Optional(Nullable(VariableDescription)),
    enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'VariableAliasRequest', additionalProperties: false },
);
export type UnifiedAliasBody = Static<typeof UnifiedAliasRequest>;

export const UnifiedOverrideRequest = Type.Object(
  {
    value: VariableValue,
    override_scope: APIVariableScopeEnum,
    override_parent_id: ScopeOwnerId,
    description: Type.Optional(Nullable(VariableDescription)),
    enable_interpolation_in_file: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'VariableOverrideRequest', additionalProperties: false },
);
export type UnifiedOverrideBody = Static<typeof UnifiedOverrideRequest>;

/** The variable an override overrides or an alias names; `value` is null when hidden (a secret, a hidden built-in). */
const UnifiedLinkedVariable = Type.Object({
  id: Uuid,
  key: Type.String(),
  value: Nullable(Type.String()),
  mount_path: Type.String(),
  scope: APIVariableScopeEnum,
  variable_type: APIVariableTypeEnum,
});

/**
 * The reference's `VariableResponse`: variables and secrets alike. `value` is null for a secret (write-only) and for a
 * hidden built-in; `description` and `enable_interpolation_in_file` are left out when unset (the reference's are not
 * nullable). `owned_by` names the owner's id (project, environment or service).
 */
export const UnifiedVariable = Type.Object(
  {
    ...BaseFields,
    key: Type.String(),
    value: Nullable(Type.String()),
    mount_path: Nullable(Type.String()),
    overridden_variable: Type.Optional(UnifiedLinkedVariable),
    aliased_variable: Type.Optional(UnifiedLinkedVariable),
    scope: APIVariableScopeEnum,
    variable_type: APIVariableTypeEnum,
    ...linkedServiceFields,
    owned_by: Type.Optional(Type.String()),
    is_secret: Type.Boolean(),
    description: Type.Optional(Type.String()),
    enable_interpolation_in_file: Type.Optional(Type.Boolean()),
    secret_manager_access_id: Type.Optional(Nullable(Uuid)),
  },
  { $id: 'VariableResponse' },
);
export type UnifiedVariableView = Static<typeof UnifiedVariable>;
export const UnifiedVariableResponseList = ListOf(UnifiedVariable, 'VariableResponseList');

export const ListVariablesQuery = Type.Object(
  {
    parent_id: ScopeOwnerId,
    scope: APIVariableScopeEnum,
    is_secret: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);
export type ListVariablesQueryValue = Static<typeof ListVariablesQuery>;

export const VariableIdParams = Type.Object({ variableId: Uuid }, { additionalProperties: false });

/** The most rows one import takes: a scope holds at most MAX_VARIABLES_PER_SCOPE, and an import writes three scopes. */
export const MAX_IMPORTED_VARIABLES = 3000;

/** The reference's `VariableImportRequest`: the rows of a parsed .env file, each with its scope and secrecy. */
export const VariableImportRequest = Type.Object(
  {
    overwrite: Type.Boolean({ default: false }),
    vars: Type.Array(
      Type.Object(
        { name: Type.String({ maxLength: 255 }), value: VariableValue, scope: APIVariableScopeEnum, is_secret: Type.Boolean() },
        { additionalProperties: false },
      ),
      { maxItems: MAX_IMPORTED_VARIABLES },
    ),
  },
  { $id: 'VariableImportRequest', additionalProperties: false },
);
export type VariableImportBody = Static<typeof VariableImportRequest>;

const ImportedVariable = Type.Object({
  name: Type.String(),
  /** Left out for a secret. */
  value: Type.Optional(Type.String()),
  scope: APIVariableScopeEnum,
  is_secret: Type.Boolean(),
});

/**
 * The reference's `VariableImport`: how many rows were sent and those written (created or overwritten). Slipway adds
 * which of the written ones replaced an existing value and which rows were skipped because the name existed.
 */
export const VariableImport = Type.Object(
  {
    total_variables_to_import: Type.Number(),
    successful_imported_variables: Type.Array(ImportedVariable),
    overwritten_variables: Type.Array(ImportedVariable),
    skipped_variables: Type.Array(ImportedVariable),
  },
  { $id: 'VariableImport' },
);
export type VariableImportResult = Static<typeof VariableImport>;

export const ImportEnvironmentVariablesQuery = Type.Object(
  { service_id: Uuid, service_type: Type.Enum(['APPLICATION', 'CONTAINER', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW']) },
  { additionalProperties: false },
);
