import { Type, type Static } from 'typebox';
import { BaseFields, ListOf, Nullable, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from './variables.builtins.ts';

/** Longest value of one variable or secret, in characters (a certificate chain fits; a file of megabytes does not). */
export const MAX_VALUE_LENGTH = 32_768;

/**
 * A POSIX environment variable name: letters, digits and underscores, not starting with a digit. Case is kept and
 * significant, as it is in a process environment.
 */
export const VariableKey = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });
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
  { $id: 'EnvironmentVariableRequest', additionalProperties: false },
);
export type VariableRequestBody = Static<typeof EnvironmentVariableRequest>;

/** As EnvironmentVariableRequest; an absent value keeps the stored one. */
export const EnvironmentVariableEditRequest = Type.Object(
  { ...commonRequestFields, mount_path: Type.Optional(Nullable(MountPath)) },
  { $id: 'EnvironmentVariableEditRequest', additionalProperties: false },
);

export const SecretRequest = Type.Object(
  { ...commonRequestFields, mount_path: Type.Optional(Nullable(MountPath)) },
  { $id: 'SecretRequest', additionalProperties: false },
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
  { $id: 'EnvironmentVariable' },
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
  { $id: 'Secret' },
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
