import type { Kysely, Transaction } from 'kysely';
import type { Static } from 'typebox';
import type { Access, Principal } from '../../auth/principal.ts';
import type { AwsAccess } from '../../aws/aws-access.ts';
import { ecrRegistryHost, isAwsRegion } from '../../aws/aws-regions.ts';
import type { DB } from '../../db/db.schema.ts';
import { badRequest, forbidden, notFound } from '../../lib/errors.ts';
import { cleanName } from '../../lib/names.ts';
import type { AwsCredentialsSecret, CloudCredentialsService } from '../cloud-credentials/cloud-credentials.service.ts';
import type { ClusterPlatformConfigurationRequest } from '../platform-templates/platform-templates.schemas.ts';
import type { ClustersService } from '../clusters/clusters.service.ts';
import type { SelfManagedClusterRequestBody, SelfManagedClusterResponse } from './self-managed-clusters.schemas.ts';

/**
 * The collaborators of self-managed cluster creation, as their modules export them (contracts of issue 7): each
 * writes its own tables inside the one transaction this service opens.
 */
export interface PlatformConfigurationPort<Validated> {
  validatePlatformConfiguration(input: {
    request: ClusterPlatformConfigurationRequest;
    clusterMode: 'PLATFORM_MANAGED' | 'CUSTOMER_MANAGED';
    cloudProvider: string;
  }): Promise<Validated>;
  storeClusterPlatformConfiguration(trx: Transaction<DB>, input: { organizationId: string; clusterId: string; configuration: Validated }): Promise<void>;
}

export interface DefaultRegistryPort {
  createClusterDefaultRegistry(
    trx: Transaction<DB>,
    input: { organizationId: string; name: string; url: string; region: string; awsCredentialsId: string },
  ): Promise<{ registryId: string }>;
}

export interface PlanFeaturesPort {
  planFeatures(organizationId: string): Promise<{ plan: string; selfManagedClusters: boolean }>;
}

export interface SelfManagedClustersDeps<Validated> {
  db: Kysely<DB>;
  credentials: Pick<CloudCredentialsService, 'findCredentialsSummary' | 'findAwsCredentials'>;
  aws: Pick<AwsAccess, 'checkClusterCredentials'>;
  plans: PlanFeaturesPort;
  platformConfigurations: PlatformConfigurationPort<Validated>;
  clusterRecords: Pick<ClustersService, 'createSelfManagedClusterRecords'>;
  clusterViews: Pick<ClustersService, 'getCluster' | 'bootstrapView'>;
  registries: DefaultRegistryPort;
}

/** The cluster mode of a cluster whose Kubernetes the customer runs (PlatformClusterMode). */
const SELF_MANAGED_MODE = 'CUSTOMER_MANAGED';

/**
 * createSelfManagedCluster (SPEC.md "Self-managed cluster creation rules" 1–7), in this order: the body's own rules
 * (AWS only, a known region, the credential's provider and region agreeing) → the credential (404 when the
 * organization has no such credential, 400 when it belongs to another provider) → the plan (403) → the AWS checks
 * and the platform configuration (400/404/500/503), both before anything is written → ONE transaction writing the
 * cluster with its providers, initial status and operator enrollment (clusters), its default ECR registry
 * (container registries) and its platform configuration (platform templates). A failure anywhere in the
 * transaction leaves nothing behind.
 */
export function createSelfManagedClustersService<Validated>(
  deps: SelfManagedClustersDeps<Validated>,
): SelfManagedClustersService {
  const { db } = deps;

  function checkBody(input: SelfManagedClusterRequestBody): void {
    if (input.cloud_provider !== 'AWS') {
      throw badRequest(`self-managed clusters support only the AWS provider, not ${input.cloud_provider}`, [
        { field: '/cloud_provider', message: 'must be AWS' },
      ]);
    }
    if (input.cloud_provider_credentials.cloud_provider !== 'AWS') {
      throw badRequest(`self-managed clusters support only AWS credentials, not ${input.cloud_provider_credentials.cloud_provider}`, [
        { field: '/cloud_provider_credentials/cloud_provider', message: 'must be AWS' },
      ]);
    }
    if (!isAwsRegion(input.region)) {
      throw badRequest(`unknown AWS region "${input.region}"`, [{ field: '/region', message: 'not an AWS region' }]);
    }
    const credentialRegion = input.cloud_provider_credentials.region;
    if (credentialRegion !== undefined && credentialRegion !== input.region) {
      throw badRequest(`cloud_provider_credentials.region "${credentialRegion}" differs from the cluster region "${input.region}"`, [
        { field: '/cloud_provider_credentials/region', message: 'must equal region' },
      ]);
    }
  }

  /** Both checks run; the credential's failure is reported first, so the answer does not depend on timing. */
  async function checkBeforeWriting(credential: AwsCredentialsSecret, input: SelfManagedClusterRequestBody) {
    const [identity, configuration] = await Promise.allSettled([
      deps.aws.checkClusterCredentials(credential, input.region),
      deps.platformConfigurations.validatePlatformConfiguration({
        request: input.platform_configuration,
        clusterMode: SELF_MANAGED_MODE,
        cloudProvider: 'AWS',
      }),
    ]);
    if (identity.status === 'rejected') throw identity.reason;
    if (configuration.status === 'rejected') throw configuration.reason;
    return { accountId: identity.value.accountId, configuration: configuration.value };
  }

  async function createSelfManagedCluster(principal: Principal, access: Access, input: SelfManagedClusterRequestBody) {
    const { organizationId } = access;
    checkBody(input);

    const credentialsId = input.cloud_provider_credentials.credentials.id;
    const summary = await deps.credentials.findCredentialsSummary(organizationId, credentialsId);
    if (summary === undefined) throw notFound(`cloud credentials ${credentialsId} not found`);
    if (summary.cloudProvider !== 'AWS') {
      throw badRequest(`cloud credentials ${credentialsId} are ${summary.cloudProvider} credentials; a self-managed cluster needs AWS credentials`, [
        { field: '/cloud_provider_credentials/credentials/id', message: `credentials of provider ${summary.cloudProvider}` },
      ]);
    }
    const credential = await deps.credentials.findAwsCredentials(organizationId, credentialsId);
    // Deleted between the two reads: as if it had never existed.
    if (credential === undefined) throw notFound(`cloud credentials ${credentialsId} not found`);

    const plan = await deps.plans.planFeatures(organizationId);
    if (!plan.selfManagedClusters) {
      throw forbidden(`the ${plan.plan} plan does not include self-managed clusters; change the organization's plan first`);
    }

    const { accountId, configuration } = await checkBeforeWriting(credential, input);

    const name = cleanName(input.name);
    const dnsProvider = input.dns_provider ?? 'PLATFORM_DNS';
    const buildProvider = input.build_provider ?? 'CLUSTER';
    const registryUrl = `https://${ecrRegistryHost(accountId, input.region)}`;
    const written = await db.transaction().execute(async (trx) => {
      const records = await deps.clusterRecords.createSelfManagedClusterRecords(trx, {
        organizationId,
        name,
        description: input.description ?? null,
        region: input.region,
        credentialsId,
        dnsProvider,
        buildProvider,
        production: input.production ?? false,
        createdBy: principal,
      });
      const registry = await deps.registries.createClusterDefaultRegistry(trx, {
        organizationId,
        name: `ECR of cluster ${name}`.slice(0, 255),
        url: registryUrl,
        region: input.region,
        awsCredentialsId: credentialsId,
      });
      await deps.platformConfigurations.storeClusterPlatformConfiguration(trx, { organizationId, clusterId: records.clusterId, configuration });
      return { ...records, registryId: registry.registryId };
    });

    const cluster = await deps.clusterViews.getCluster(organizationId, written.clusterId);
    return {
      ...cluster,
      credentials: { id: credential.id, name: credential.name },
      dns_provider: dnsProvider,
      build_provider: buildProvider,
      default_container_registry: { id: written.registryId, url: registryUrl },
      operator_bootstrap: deps.clusterViews.bootstrapView(written.clusterId, written.enrollmentToken, written.enrollmentExpiresAt),
    };
  }

  return { createSelfManagedCluster };
}

export interface SelfManagedClustersService {
  createSelfManagedCluster(principal: Principal, access: Access, input: SelfManagedClusterRequestBody): Promise<Static<typeof SelfManagedClusterResponse>>;
}
