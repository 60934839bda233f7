import { Type, type TSchema } from 'typebox';
import { ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';

/**
 * The reference's cloud provider credential shapes. Requests carry secrets; responses (ClusterCredentials,
 * discriminated by `object_type`) never do.
 */

/** An AWS access key id: AKIA… (long-term) or ASIA… (temporary) and the other documented prefixes, upper case. */
const AccessKeyId = Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Z0-9]+$' });
/** Secret values: printable ASCII without spaces (they travel in signing inputs and HTTP headers). */
const SecretValue = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' });
const RoleArn = Type.String({ maxLength: 2048, pattern: '^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$' });
const Identifier = Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' });
const UserName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]+$' });

function closed<T extends Record<string, TSchema>>(properties: T, $id: string) {
  return Type.Object(properties, { $id, additionalProperties: false });
}

export const AwsStaticCredentialsRequest = closed(
  { type: Type.Literal('AWS_STATIC'), name: Name, access_key_id: AccessKeyId, secret_access_key: SecretValue },
  'AwsStaticCredentialsRequest',
);
export const AwsRoleCredentialsRequest = closed({ type: Type.Literal('AWS_ROLE'), name: Name, role_arn: RoleArn }, 'AwsRoleCredentialsRequest');
export const EksAnywhereVsphereStaticCredentialsRequest = closed(
  {
    type: Type.Literal('EKS_ANYWHERE_VSPHERE_STATIC'),
    name: Name,
    vsphere_user: UserName,
    vsphere_password: SecretValue,
    access_key_id: AccessKeyId,
    secret_access_key: SecretValue,
  },
  'EksAnywhereVsphereStaticCredentialsRequest',
);
export const EksAnywhereVsphereRoleCredentialsRequest = closed(
  {
    type: Type.Literal('EKS_ANYWHERE_VSPHERE_ROLE'),
    name: Name,
    vsphere_user: UserName,
    vsphere_password: SecretValue,
    role_arn: RoleArn,
  },
  'EksAnywhereVsphereRoleCredentialsRequest',
);
export const AwsCredentialsRequest = Type.Union(
  [AwsRoleCredentialsRequest, AwsStaticCredentialsRequest, EksAnywhereVsphereRoleCredentialsRequest, EksAnywhereVsphereStaticCredentialsRequest],
  { $id: 'AwsCredentialsRequest' },
);

export const ScalewayCredentialsRequest = closed(
  {
    name: Name,
    scaleway_access_key: Identifier,
    scaleway_secret_key: SecretValue,
    scaleway_project_id: Identifier,
    scaleway_organization_id: Identifier,
  },
  'ScalewayCredentialsRequest',
);

/** A service-account key file: JSON text, kept whole (it is the secret). */
const GcpServiceAccountKey = Type.String({ minLength: 2, maxLength: 65536 });
export const GcpServiceAccountKeyCredentialsRequest = closed(
  { name: Name, credential_type: Type.Optional(Type.Literal('SERVICE_ACCOUNT_KEY')), gcp_credentials: GcpServiceAccountKey },
  'GcpServiceAccountKeyCredentialsRequest',
);
export const GcpWorkloadIdentityFederationCredentialsRequest = closed(
  {
    name: Name,
    credential_type: Type.Optional(Type.Union([Type.Literal('WORKLOAD_IDENTITY_FEDERATION'), Type.Literal('WIF')])),
    service_account_email: Type.String({ maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' }),
    workload_identity_provider_resource: Type.String({
      maxLength: 1024,
      pattern: '^(//iam\\.googleapis\\.com/)?projects/[0-9]+/locations/[a-z0-9-]+/workloadIdentityPools/[A-Za-z0-9_-]+/providers/[A-Za-z0-9_-]+$',
    }),
  },
  'GcpWorkloadIdentityFederationCredentialsRequest',
);
export const GcpCredentialsRequest = Type.Union([GcpServiceAccountKeyCredentialsRequest, GcpWorkloadIdentityFederationCredentialsRequest], {
  $id: 'GcpCredentialsRequest',
});

export const OnPremiseCredentialsRequest = closed({ name: Name }, 'OnPremiseCredentialsRequest');

/** Azure identifies tenants, subscriptions, applications and their objects by GUID. */
const AzureGuid = Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$' });
/**
 * The reference's AzureCredentialsRequest (name, subscription, tenant) and Slipway's three optional fields: the app
 * registration the organization created in its tenant for Slipway, and that application's client secret (sealed).
 */
export const AzureCredentialsRequest = closed(
  {
    name: Name,
    azure_subscription_id: AzureGuid,
    azure_tenant_id: AzureGuid,
    azure_application_id: Type.Optional(AzureGuid),
    azure_application_object_id: Type.Optional(AzureGuid),
    azure_client_secret: Type.Optional(SecretValue),
  },
  'AzureCredentialsRequest',
);

const identity = { id: Uuid, name: Type.String() };

export const AwsStaticClusterCredentials = Type.Object(
  { ...identity, access_key_id: Type.String(), object_type: Type.Literal('AWS') },
  { $id: 'AwsStaticClusterCredentials' },
);
export const AwsRoleClusterCredentials = Type.Object(
  { ...identity, role_arn: Type.String(), object_type: Type.Literal('AWS_ROLE') },
  { $id: 'AwsRoleClusterCredentials' },
);
export const EksAnywhereVsphereClusterCredentials = Type.Object(
  {
    ...identity,
    vsphere_user: Type.String(),
    access_key_id: Nullable(Type.String()),
    role_arn: Nullable(Type.String()),
    object_type: Type.Literal('EKS_ANYWHERE_VSPHERE'),
  },
  { $id: 'EksAnywhereVsphereClusterCredentials' },
);
export const ScalewayClusterCredentials = Type.Object(
  {
    ...identity,
    scaleway_access_key: Type.String(),
    object_type: Type.Literal('SCW'),
    scaleway_project_id: Type.String(),
    scaleway_organization_id: Type.String(),
  },
  { $id: 'ScalewayClusterCredentials' },
);
export const AzureStaticClusterCredentials = Type.Object(
  {
    ...identity,
    azure_subscription_id: Type.String(),
    azure_tenant_id: Type.String(),
    object_type: Type.Literal('AZURE'),
    azure_application_id: Type.String(),
    azure_application_object_id: Type.String(),
  },
  { $id: 'AzureStaticClusterCredentials' },
);
export const GenericClusterCredentials = Type.Object({ ...identity, object_type: Type.Literal('OTHER') }, { $id: 'GenericClusterCredentials' });
export const GcpStaticClusterCredentials = Type.Object({ ...identity, object_type: Type.Literal('GCP') }, { $id: 'GcpStaticClusterCredentials' });
export const GcpWorkloadIdentityFederationClusterCredentials = Type.Object(
  {
    ...identity,
    object_type: Type.Literal('GCP_WORKLOAD_IDENTITY_FEDERATION'),
    project_id: Type.String(),
    service_account_email: Type.String(),
    workload_identity_provider_resource: Type.String(),
    token_lifetime_seconds: Type.Integer(),
  },
  { $id: 'GcpWorkloadIdentityFederationClusterCredentials' },
);

export const ClusterCredentials = Type.Union(
  [
    AwsStaticClusterCredentials,
    ScalewayClusterCredentials,
    GenericClusterCredentials,
    AwsRoleClusterCredentials,
    EksAnywhereVsphereClusterCredentials,
    AzureStaticClusterCredentials,
    GcpStaticClusterCredentials,
    GcpWorkloadIdentityFederationClusterCredentials,
  ],
  { $id: 'ClusterCredentials' },
);
export const ClusterCredentialsResponseList = ListOf(ClusterCredentials, 'ClusterCredentialsResponseList');

export const CredentialsParams = Type.Object({ organizationId: Uuid, credentialsId: Uuid }, { additionalProperties: false });
