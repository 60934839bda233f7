import { Type, type Static } from 'typebox';
import { BaseFields, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/**
 * Wire shapes of environments, following the reference's CreateEnvironmentRequest / EnvironmentEditRequest /
 * Environment; CloneEnvironmentRequest is the original product's. Their actions' shapes are the deployments module's.
 */

export const ENVIRONMENT_MODES = ['PRODUCTION', 'STAGING', 'DEVELOPMENT', 'PREVIEW'] as const;

/** The reference's EnvironmentModeEnum. Creation accepts PREVIEW too (the reference's create enum lacks it). */
const EnvironmentModeEnum = Type.Enum(ENVIRONMENT_MODES);

export const ProjectEnvironmentParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
export const EnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });

export const CreateEnvironmentRequest = Type.Object(
  {
    name: Name,
    /** The cluster it runs on; may be left out when the organization has exactly one. */
    cluster: Type.Optional(Uuid),
    mode: Type.Optional(EnvironmentModeEnum),
  },
  { $id: 'CreateEnvironmentRequest', additionalProperties: false },
);
export type CreateEnvironmentBody = Static<typeof CreateEnvironmentRequest>;

export const EnvironmentEditRequest = Type.Object(
  { name: Type.Optional(Name), mode: Type.Optional(EnvironmentModeEnum) },
  { $id: 'EnvironmentEditRequest', additionalProperties: false },
);
export type EditEnvironmentBody = Static<typeof EnvironmentEditRequest>;

export const CloneEnvironmentRequest = Type.Object(
  {
    name: Name,
    /** Defaults to the source's cluster. */
    cluster_id: Type.Optional(Uuid),
    /** Defaults to the source's mode. */
    mode: Type.Optional(EnvironmentModeEnum),
    /** Accepted for the original product's clients; deployment rules do not exist here yet, so it changes nothing. */
    apply_deployment_rule: Type.Optional(Type.Boolean()),
    /** Copies the source's environment-scoped variables and secrets (default false). */
    clone_variables: Type.Optional(Type.Boolean()),
  },
  { $id: 'CloneEnvironmentRequest', additionalProperties: false },
);
export type CloneEnvironmentBody = Static<typeof CloneEnvironmentRequest>;

export const Environment = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    organization: Type.Object({ id: Uuid }),
    project: Type.Object({ id: Uuid }),
    last_updated_by: Type.Optional(Uuid),
    cloud_provider: Type.Object({ provider: Type.Optional(Type.String()), cluster: Type.Optional(Type.String()) }),
    mode: EnvironmentModeEnum,
    cluster_id: Uuid,
    cluster_name: Type.Optional(Type.String()),
    expires_at: Nullable(Timestamp),
  },
  { $id: 'Environment' },
);
export const EnvironmentResponseList = ListOf(Environment, 'EnvironmentResponseList');
