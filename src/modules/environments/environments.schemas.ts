import { Type, type Static } from 'typebox';
import { BaseFields, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { CLOUD_VENDORS } from '../clusters/clusters.schemas.ts';
import { EnvironmentStatus } from '../deployments/deployments.schemas.ts';

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
  {
    $id: 'CreateEnvironmentRequest',
    additionalProperties: false,
    examples: [{ name: 'production', cluster: '2a9d4c6e-8f1b-4a37-9e52-6b0c3d7f1e85', mode: 'PRODUCTION' }],
  },
);
export type CreateEnvironmentBody = Static<typeof CreateEnvironmentRequest>;

export const EnvironmentEditRequest = Type.Object(
  { name: Type.Optional(Name), mode: Type.Optional(EnvironmentModeEnum) },
  {
    $id: 'EnvironmentEditRequest',
    additionalProperties: false,
    examples: [{ name: 'production-eu' }],
  },
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
  {
    $id: 'CloneEnvironmentRequest',
    additionalProperties: false,
    examples: [{ name: 'staging', mode: 'STAGING', clone_variables: true }],
  },
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
  {
    $id: 'Environment',
    examples: [
      {
        id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93',
        created_at: '2026-03-02T11:27:08.065Z',
        name: 'production',
        organization: { id: '3f6c2a8e-5b1d-4c7a-9e2f-1a4b6c8d0e12' },
        project: { id: '9a1e7c44-2b8d-4f36-8c51-6d0e3b2a7f18' },
        cloud_provider: { provider: 'AWS', cluster: 'acme-eu-west' },
        mode: 'PRODUCTION',
        cluster_id: '2a9d4c6e-8f1b-4a37-9e52-6b0c3d7f1e85',
        expires_at: null,
        updated_at: '2026-03-02T11:27:08.065Z',
        last_updated_by: '0b6f3d2e-8c1a-4b97-a5e4-3f9c7d1b2e60',
        cluster_name: 'acme-eu-west',
      },
    ],
  },
);
export const EnvironmentResponseList = ListOf(Environment, 'EnvironmentResponseList');

/** The reference's EnvironmentOverviewResponse (getProjectEnvironmentsOverview): an environment with its cluster, services and status. */
const EnvironmentOverviewResponse = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
    name: Type.String(),
    mode: Type.Enum(ENVIRONMENT_MODES),
    cluster: Type.Object({ id: Uuid, name: Type.String(), cloud_provider: Type.Enum(CLOUD_VENDORS), is_demo: Type.Boolean() }),
    services_overview: Type.Object({ service_count: Type.Integer(), managed_by: Type.Literal('PLATFORM') }),
    deployment_status: Nullable(EnvironmentStatus),
  },
  { $id: 'EnvironmentOverviewResponse' },
);
export const EnvironmentOverviewResponseList = Type.Object({ results: Type.Array(EnvironmentOverviewResponse) }, { $id: 'EnvironmentOverviewResponseList' });
