import type { Kysely } from 'kysely';
import type { Access, Principal } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { AwsAccess } from '../../aws/aws-access.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import {
  clusterNamesUsing,
  deleteCloudCredentials,
  findCloudCredentials,
  insertCloudCredentials,
  listAllCloudCredentials,
  listCloudCredentials,
  listClustersOnCredentials,
  updateCloudCredentials,
  type CloudCredentialsRow,
} from './cloud-credentials.repo.ts';

/** Providers with credential paths: the reference's CloudProviderEnum. */
export const CREDENTIAL_PROVIDERS = ['AWS', 'SCW', 'GCP', 'ON_PREMISE', 'AZURE'] as const;
export type CredentialProvider = (typeof CREDENTIAL_PROVIDERS)[number];

/** Any of the reference's credential requests; the provider's TypeBox schema has already checked the shape. */
export type CredentialsRequest = { name: string } & Record<string, unknown>;

type PublicFields = Record<string, string | number | null>;

/** How a request is kept: its variant, what may be shown, and what is sealed. */
interface StoredForm {
  kind: string;
  publicFields: PublicFields;
  secrets: Record<string, string> | null;
}

/** The reference's ClusterCredentials variants, by `object_type`. */
export type ClusterCredentialsView =
  | { id: string; name: string; object_type: 'AWS'; access_key_id: string }
  | { id: string; name: string; object_type: 'AWS_ROLE'; role_arn: string }
  | { id: string; name: string; object_type: 'EKS_ANYWHERE_VSPHERE'; vsphere_user: string; access_key_id: string | null; role_arn: string | null }
  | { id: string; name: string; object_type: 'SCW'; scaleway_access_key: string; scaleway_project_id: string; scaleway_organization_id: string }
  | { id: string; name: string; object_type: 'GCP' }
  | {
      id: string;
      name: string;
      object_type: 'AZURE';
      azure_subscription_id: string;
      azure_tenant_id: string;
      azure_application_id: string;
      azure_application_object_id: string;
    }
  | {
      id: string;
      name: string;
      object_type: 'GCP_WORKLOAD_IDENTITY_FEDERATION';
      project_id: string;
      service_account_email: string;
      workload_identity_provider_resource: string;
      token_lifetime_seconds: number;
    }
  | { id: string; name: string; object_type: 'OTHER' };

/** What other modules learn of a credential without its secrets. */
export interface CloudCredentialsSummary {
  id: string;
  name: string;
  cloudProvider: CredentialProvider;
  kind: string;
}

/**
 * An AWS credential opened for a call to AWS: static keys, or a role to assume (EKS Anywhere credentials carry
 * the same AWS part beside their vSphere account).
 */
export interface AwsCredentialsSecret {
  id: string;
  organizationId: string;
  name: string;
  kind: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  roleArn: string | null;
}

export interface CloudCredentialsDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  aws: AwsAccess;
  /** Names of what else signs in with a credential (ECR registries, OCI ECR Helm repositories), by their modules. */
  otherUsers: (organizationId: string, credentialsId: string) => Promise<string[]>;
}

/** GCP's default lifetime of a federated access token. */
const GCP_TOKEN_LIFETIME_SECONDS = 3600;

function text(input: CredentialsRequest, field: string): string {
  const value = input[field];
  if (typeof value !== 'string') throw new Error(`validated request lacks ${field}`);
  return value;
}

function awsForm(input: CredentialsRequest): StoredForm {
  const type = text(input, 'type');
  switch (type) {
    case 'AWS_STATIC':
      return { kind: type, publicFields: { access_key_id: text(input, 'access_key_id') }, secrets: { secret_access_key: text(input, 'secret_access_key') } };
    case 'AWS_ROLE':
      return { kind: type, publicFields: { role_arn: text(input, 'role_arn') }, secrets: null };
    case 'EKS_ANYWHERE_VSPHERE_STATIC':
      return {
        kind: type,
        publicFields: { vsphere_user: text(input, 'vsphere_user'), access_key_id: text(input, 'access_key_id') },
        secrets: { vsphere_password: text(input, 'vsphere_password'), secret_access_key: text(input, 'secret_access_key') },
      };
    case 'EKS_ANYWHERE_VSPHERE_ROLE':
      return {
        kind: type,
        publicFields: { vsphere_user: text(input, 'vsphere_user'), role_arn: text(input, 'role_arn') },
        secrets: { vsphere_password: text(input, 'vsphere_password') },
      };
    default:
      throw new Error(`unknown AWS credential type ${type}`);
  }
}

function gcpForm(input: CredentialsRequest): StoredForm {
  if (typeof input.gcp_credentials === 'string') {
    let key: unknown;
    try {
      key = JSON.parse(input.gcp_credentials);
    } catch {
      key = undefined;
    }
    if (typeof key !== 'object' || key === null || Array.isArray(key)) {
      throw badRequest('gcp_credentials must be the JSON text of a service-account key', [{ field: '/gcp_credentials', message: 'not a JSON object' }]);
    }
    return { kind: 'GCP', publicFields: {}, secrets: { gcp_credentials: input.gcp_credentials } };
  }
  const resource = text(input, 'workload_identity_provider_resource');
  // The resource names the project by number: projects/<number>/locations/global/workloadIdentityPools/…
  const projectId = /projects\/([0-9]+)\//.exec(resource)?.[1] ?? '';
  return {
    kind: 'GCP_WORKLOAD_IDENTITY_FEDERATION',
    publicFields: {
      project_id: projectId,
      service_account_email: text(input, 'service_account_email'),
      workload_identity_provider_resource: resource,
      token_lifetime_seconds: GCP_TOKEN_LIFETIME_SECONDS,
    },
    secrets: null,
  };
}

/**
 * Azure credentials name the tenant and subscription; the app registration the organization made for Slipway (ids
 * and client secret) is optional, so a client of the reference, which sends neither, is served. A client secret
 * belongs to an application, so it is refused without one. GUIDs are kept lower-case, as Azure answers them.
 */
function azureForm(input: CredentialsRequest): StoredForm {
  const optional = (field: string) => (typeof input[field] === 'string' ? (input[field] as string).toLowerCase() : undefined);
  const applicationId = optional('azure_application_id');
  const applicationObjectId = optional('azure_application_object_id');
  const clientSecret = input.azure_client_secret;
  if (typeof clientSecret === 'string' && applicationId === undefined) {
    throw badRequest('azure_client_secret is the secret of an application: give azure_application_id with it', [
      { field: '/azure_application_id', message: 'required with azure_client_secret' },
    ]);
  }
  return {
    kind: 'AZURE',
    publicFields: {
      azure_subscription_id: text(input, 'azure_subscription_id').toLowerCase(),
      azure_tenant_id: text(input, 'azure_tenant_id').toLowerCase(),
      azure_application_id: applicationId ?? null,
      azure_application_object_id: applicationObjectId ?? null,
    },
    secrets: typeof clientSecret === 'string' ? { azure_client_secret: clientSecret } : null,
  };
}

function storedForm(provider: CredentialProvider, input: CredentialsRequest): StoredForm {
  switch (provider) {
    case 'AWS':
      return awsForm(input);
    case 'SCW':
      return {
        kind: 'SCW',
        publicFields: {
          scaleway_access_key: text(input, 'scaleway_access_key'),
          scaleway_project_id: text(input, 'scaleway_project_id'),
          scaleway_organization_id: text(input, 'scaleway_organization_id'),
        },
        secrets: { scaleway_secret_key: text(input, 'scaleway_secret_key') },
      };
    case 'GCP':
      return gcpForm(input);
    case 'ON_PREMISE':
      return { kind: 'OTHER', publicFields: {}, secrets: null };
    case 'AZURE':
      return azureForm(input);
  }
}

function field(fields: PublicFields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
}

function optionalField(fields: PublicFields, name: string): string | null {
  const value = fields[name];
  return typeof value === 'string' ? value : null;
}

function view(row: CloudCredentialsRow): ClusterCredentialsView {
  const fields = readJson<PublicFields>(row.public_fields);
  const base = { id: row.id, name: row.name };
  switch (row.kind) {
    case 'AWS_STATIC':
      return { ...base, access_key_id: field(fields, 'access_key_id'), object_type: 'AWS' };
    case 'AWS_ROLE':
      return { ...base, role_arn: field(fields, 'role_arn'), object_type: 'AWS_ROLE' };
    case 'EKS_ANYWHERE_VSPHERE_STATIC':
    case 'EKS_ANYWHERE_VSPHERE_ROLE':
      return {
        ...base,
        vsphere_user: field(fields, 'vsphere_user'),
        access_key_id: optionalField(fields, 'access_key_id'),
        role_arn: optionalField(fields, 'role_arn'),
        object_type: 'EKS_ANYWHERE_VSPHERE',
      };
    case 'SCW':
      return {
        ...base,
        scaleway_access_key: field(fields, 'scaleway_access_key'),
        scaleway_project_id: field(fields, 'scaleway_project_id'),
        scaleway_organization_id: field(fields, 'scaleway_organization_id'),
        object_type: 'SCW',
      };
    case 'GCP':
      return { ...base, object_type: 'GCP' };
    case 'AZURE':
      // Without an app registration the reference's required application ids are answered empty.
      return {
        ...base,
        object_type: 'AZURE',
        azure_subscription_id: field(fields, 'azure_subscription_id'),
        azure_tenant_id: field(fields, 'azure_tenant_id'),
        azure_application_id: field(fields, 'azure_application_id'),
        azure_application_object_id: field(fields, 'azure_application_object_id'),
      };
    case 'GCP_WORKLOAD_IDENTITY_FEDERATION':
      return {
        ...base,
        object_type: 'GCP_WORKLOAD_IDENTITY_FEDERATION',
        project_id: field(fields, 'project_id'),
        service_account_email: field(fields, 'service_account_email'),
        workload_identity_provider_resource: field(fields, 'workload_identity_provider_resource'),
        token_lifetime_seconds: typeof fields.token_lifetime_seconds === 'number' ? fields.token_lifetime_seconds : GCP_TOKEN_LIFETIME_SECONDS,
      };
    default:
      return { ...base, object_type: 'OTHER' };
  }
}

/** Binds a sealed value to its row: an envelope copied into another row or organization does not open. */
function associatedData(row: Pick<CloudCredentialsRow, 'id' | 'organization_id'>): string {
  return `cloud_credentials:${row.organization_id}:${row.id}`;
}

function nameTakenMessage(name: string): string {
  return `a cloud credential named "${name}" already exists in this organization`;
}

function notFoundError(provider: CredentialProvider, credentialsId: string) {
  return notFound(`${provider} credentials ${credentialsId} not found`);
}

/**
 * Cloud provider credentials (issue 7 part 5): what clusters are created on. Secrets are sealed with the secret box
 * and opened only to call the provider (the AWS checks); no operation returns them and nothing logs them. Names are
 * unique within the organization across providers, so a cluster's `credentials.name` names one credential.
 */
export function createCloudCredentialsService(deps: CloudCredentialsDeps) {
  const { db, clock, secrets, aws } = deps;

  async function requireRow(provider: CredentialProvider, organizationId: string, credentialsId: string): Promise<CloudCredentialsRow> {
    const row = await findCloudCredentials(db, organizationId, credentialsId);
    if (row?.cloud_provider !== provider) throw notFoundError(provider, credentialsId);
    return row;
  }

  function seal(form: StoredForm, row: Pick<CloudCredentialsRow, 'id' | 'organization_id'>): string | null {
    return form.secrets === null ? null : secrets.seal(JSON.stringify(form.secrets), associatedData(row));
  }

  async function listCredentials(provider: CredentialProvider, organizationId: string): Promise<ClusterCredentialsView[]> {
    return (await listCloudCredentials(db, organizationId, provider)).map(view);
  }

  async function getCredentials(provider: CredentialProvider, organizationId: string, credentialsId: string): Promise<ClusterCredentialsView> {
    return view(await requireRow(provider, organizationId, credentialsId));
  }

  async function createCredentials(
    provider: CredentialProvider,
    principal: Principal,
    access: Access,
    input: CredentialsRequest,
  ): Promise<ClusterCredentialsView> {
    const form = storedForm(provider, input);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const id = newId();
    const row: CloudCredentialsRow = {
      id,
      organization_id: access.organizationId,
      cloud_provider: provider,
      kind: form.kind,
      name,
      name_key: nameKey(name),
      public_fields: writeJson(form.publicFields),
      secret_envelope: seal(form, { id, organization_id: access.organizationId }),
      creator_user_id: principal.kind === 'user' ? principal.userId : null,
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertCloudCredentials(db, row), nameTakenMessage(name));
    return view({ ...row, public_fields: form.publicFields });
  }

  async function editCredentials(
    provider: CredentialProvider,
    organizationId: string,
    credentialsId: string,
    input: CredentialsRequest,
  ): Promise<ClusterCredentialsView> {
    const row = await requireRow(provider, organizationId, credentialsId);
    const form = storedForm(provider, input);
    const name = cleanName(input.name);
    const changes = {
      kind: form.kind,
      name,
      name_key: nameKey(name),
      public_fields: writeJson(form.publicFields),
      secret_envelope: seal(form, row),
      updated_at: isoTimestamp(clock),
    };
    const updated = await uniqueOrConflict(
      () => updateCloudCredentials(db, organizationId, credentialsId, provider, changes),
      nameTakenMessage(name),
    );
    if (!updated) throw notFoundError(provider, credentialsId);
    return view({ ...row, ...changes, public_fields: form.publicFields });
  }

  /** A credential that clusters (or their registries) still run on is not deleted: they would lose access. */
  async function removeCredentials(provider: CredentialProvider, organizationId: string, credentialsId: string): Promise<void> {
    await requireRow(provider, organizationId, credentialsId);
    const clusters = await clusterNamesUsing(db, organizationId, credentialsId);
    if (clusters.length > 0) {
      const names = clusters.map((name) => `"${name}"`).join(', ');
      throw conflict(`credentials ${credentialsId} are used by ${clusters.length} cluster(s): ${names}; delete them first`);
    }
    const others = await deps.otherUsers(organizationId, credentialsId);
    if (others.length > 0) throw conflict(`credentials ${credentialsId} are used by ${others.join(', ')}; change or delete them first`);
    let deleted: boolean;
    try {
      deleted = await deleteCloudCredentials(db, organizationId, credentialsId, provider);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw conflict(`credentials ${credentialsId} are still referenced (e.g. by a container registry)`);
      throw error;
    }
    if (!deleted) throw notFoundError(provider, credentialsId);
  }

  /**
   * Every credential of the organization, each with the clusters created on it (listOrganizationCredentials). A
   * cluster's provider is answered as the credential's when the cluster's own is not one credentials exist for.
   */
  async function listOrganizationCredentials(organizationId: string) {
    const [rows, clusters] = await Promise.all([listAllCloudCredentials(db, organizationId), listClustersOnCredentials(db, organizationId)]);
    return rows.map((row) => ({
      credential: view(row),
      clusters: clusters
        .filter((cluster) => cluster.credentials_id === row.id)
        .map((cluster) => ({
          id: cluster.id,
          name: cluster.name,
          cloud_provider: ((CREDENTIAL_PROVIDERS as readonly string[]).includes(cluster.cloud_provider) ? cluster.cloud_provider : row.cloud_provider) as CredentialProvider,
        })),
    }));
  }

  /** The credential without secrets; undefined when it does not exist in that organization. */
  async function findCredentialsSummary(organizationId: string, credentialsId: string): Promise<CloudCredentialsSummary | undefined> {
    const row = await findCloudCredentials(db, organizationId, credentialsId);
    if (row === undefined) return undefined;
    return { id: row.id, name: row.name, cloudProvider: row.cloud_provider as CredentialProvider, kind: row.kind };
  }

  /**
   * An AWS credential of the organization with its secret opened, for a call to AWS; undefined for another
   * organization's, another provider's or an unknown id.
   */
  async function findAwsCredentials(organizationId: string, credentialsId: string): Promise<AwsCredentialsSecret | undefined> {
    const row = await findCloudCredentials(db, organizationId, credentialsId);
    if (row?.cloud_provider !== 'AWS') return undefined;
    const fields = readJson<PublicFields>(row.public_fields);
    let opened: Record<string, string> = {};
    if (row.secret_envelope !== null) {
      try {
        opened = JSON.parse(secrets.open(row.secret_envelope, associatedData(row))) as Record<string, string>;
      } catch {
        // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the value is lost, not exposed.
        throw badRequest(`credentials ${credentialsId} can no longer be decrypted (the server's secret key changed); edit them with their secret again`, [
          { field: '/cloud_provider_credentials/credentials/id', message: 'credentials unreadable' },
        ]);
      }
    }
    return {
      id: row.id,
      organizationId: row.organization_id,
      name: row.name,
      kind: row.kind,
      accessKeyId: optionalField(fields, 'access_key_id'),
      secretAccessKey: opened.secret_access_key ?? null,
      roleArn: optionalField(fields, 'role_arn'),
    };
  }

  /**
   * The EcrAuthorizer port of the container registries: an ECR login (GetAuthorizationToken) in `region` with the
   * organization's AWS credential.
   */
  async function authorizeEcr(organizationId: string, credentialsId: string, region: string) {
    const credential = await findAwsCredentials(organizationId, credentialsId);
    if (credential === undefined) throw badRequest(`AWS credentials ${credentialsId} not found in this organization`);
    const login = await aws.authorizeEcr(credential, region);
    return { registryUrl: login.registryUrl, username: login.username, password: login.password };
  }

  return {
    authorizeEcr,
    listCredentials,
    listOrganizationCredentials,
    getCredentials,
    createCredentials,
    editCredentials,
    removeCredentials,
    findCredentialsSummary,
    findAwsCredentials,
  };
}

export type CloudCredentialsService = ReturnType<typeof createCloudCredentialsService>;
