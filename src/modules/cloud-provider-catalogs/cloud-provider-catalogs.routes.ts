import { authenticatedErrors, errorResponses } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import {
  CloudProviderResponseList,
  ClusterFeatureResponseList,
  ClusterInstanceTypeResponseList,
  ClusterRegionResponseList,
  ManagedDatabaseInstanceTypeResponseList,
  ManagedDatabaseParams,
  ManagedDatabaseTypeResponseList,
  NodeInstanceTypeQuery,
  RegionParams,
  ZoneParams,
  type CatalogProvider,
} from './cloud-provider-catalogs.schemas.ts';
import type { CloudProviderCatalogsService } from './cloud-provider-catalogs.service.ts';

/**
 * The reference's "Cloud Provider" operations (docs/cloud-provider-catalogs.md): what each provider offers, the same
 * for every signed-in caller, read from the catalogs shipped with Slipway.
 */

const TAGS = ['Cloud Provider'];
const ACCESS = { access: { permission: 'catalogs:read', target: 'none' } } as const;
const RESPONSES = { ...authenticatedErrors(), ...errorResponses('internal') };
const NODE_FILTERS =
  'only_meets_resource_reqs=true keeps the types big enough to be a node (at least 2 vCPUs and 4 GB); gpu=ONLY keeps the ' +
  'types with a GPU, EXCLUDE drops them, INCLUDE (the default) keeps both; the deprecated with_gpu is used when gpu is ' +
  'not given (true: INCLUDE, false: EXCLUDE).';

interface ProviderRoutes {
  provider: CatalogProvider;
  label: string;
  prefix: string;
  regions: string;
  features: string;
}

const PROVIDERS: readonly ProviderRoutes[] = [
  { provider: 'AWS', label: 'AWS', prefix: '/aws', regions: 'listAWSRegions', features: 'listAWSFeatures' },
  { provider: 'SCW', label: 'Scaleway', prefix: '/scaleway', regions: 'listScalewayRegions', features: 'listScalewayFeatures' },
  { provider: 'GCP', label: 'GCP', prefix: '/gcp', regions: 'listGcpRegions', features: 'listGcpFeatures' },
  { provider: 'AZURE', label: 'Azure', prefix: '/azure', regions: 'listAzureRegions', features: 'listAzureFeatures' },
];

export function registerCloudProviderCatalogRoutes(app: FastifyTypeBox, catalogs: CloudProviderCatalogsService): void {
  app.get(
    '/cloudProvider',
    {
      schema: {
        operationId: 'listCloudProvider',
        summary: 'List the cloud providers clusters can run on, with their regions',
        description: 'AWS, Scaleway, GCP and Azure, each with its name, a logo URL and its regions (zones, ARM support).',
        tags: TAGS,
        response: { 200: CloudProviderResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async () => ({ results: await catalogs.listCloudProviders() }),
  );

  for (const { provider, label, prefix, regions, features } of PROVIDERS) {
    app.get(
      `${prefix}/region`,
      {
        schema: {
          operationId: regions,
          summary: `List the ${label} regions`,
          description: `Every ${label} region a cluster can be created in: its id, country, city, zones and whether it runs ARM nodes.`,
          tags: TAGS,
          response: { 200: ClusterRegionResponseList, ...RESPONSES },
        },
        config: ACCESS,
      },
      async () => ({ results: await catalogs.listRegions(provider) }),
    );

    app.get(
      `${prefix}/clusterFeature`,
      {
        schema: {
          operationId: features,
          summary: `List the optional features of a ${label} cluster`,
          description:
            `The features a ${label} cluster can be created with (static IP, network settings, ...): each with its id, what it ` +
            'costs whom, the value a new cluster starts with (value_object) and the values it accepts.',
          tags: TAGS,
          response: { 200: ClusterFeatureResponseList, ...RESPONSES },
        },
        config: ACCESS,
      },
      async () => ({ results: await catalogs.listFeatures(provider) }),
    );
  }

  app.get(
    '/aws/instanceType',
    {
      schema: {
        operationId: 'listAWSInstanceType',
        summary: 'List the AWS instance types of any region',
        description: 'Every EC2 instance type Slipway runs nodes on, whatever the region; listAWSEKSInstanceType says which a region offers.',
        tags: TAGS,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async () => ({ results: await catalogs.listAllInstanceTypes('AWS') }),
  );

  app.get(
    '/aws/eks/instanceType/:region',
    {
      schema: {
        operationId: 'listAWSEKSInstanceType',
        summary: 'List the EKS node instance types of an AWS region',
        description: `The EC2 instance types an EKS node group can use in the region. ${NODE_FILTERS} An unknown region answers 404.`,
        tags: TAGS,
        params: RegionParams,
        querystring: NodeInstanceTypeQuery,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async (request) => ({ results: await catalogs.listRegionInstanceTypes('AWS', request.params.region, nodeFilter(request.query)) }),
  );

  app.get(
    '/azure/aks/instanceType/:region',
    {
      schema: {
        operationId: 'listAzureAKSInstanceType',
        summary: 'List the AKS node VM sizes of an Azure region',
        description: `The VM sizes an AKS node pool can use in the region. ${NODE_FILTERS} An unknown region answers 404.`,
        tags: TAGS,
        params: RegionParams,
        querystring: NodeInstanceTypeQuery,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async (request) => ({ results: await catalogs.listRegionInstanceTypes('AZURE', request.params.region, nodeFilter(request.query)) }),
  );

  app.get(
    '/gcp/instanceType/:region',
    {
      schema: {
        operationId: 'listGcpGkeInstanceType',
        summary: 'List the GKE node machine types of a GCP region',
        description: 'The Compute Engine machine types a GKE node pool can use in the region. An unknown region answers 404.',
        tags: TAGS,
        params: RegionParams,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async (request) => ({ results: await catalogs.listRegionInstanceTypes('GCP', request.params.region) }),
  );

  app.get(
    '/scaleway/instanceType',
    {
      schema: {
        operationId: 'listScalewayInstanceType',
        summary: 'List the Scaleway instance types of any zone',
        description: 'Every Scaleway instance type Slipway runs nodes on, whatever the zone; listScalewayKapsuleInstanceType says which a zone offers.',
        tags: TAGS,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async () => ({ results: await catalogs.listAllInstanceTypes('SCW') }),
  );

  app.get(
    '/scaleway/instanceType/:zone',
    {
      schema: {
        operationId: 'listScalewayKapsuleInstanceType',
        summary: 'List the Kapsule node instance types of a Scaleway zone',
        description:
          'The instance types a Kapsule pool can use in the zone (fr-par-2, nl-ams-1, ...). An unknown zone answers 404; so does a ' +
          'region (fr-par), with its zones in the message.',
        tags: TAGS,
        params: ZoneParams,
        response: { 200: ClusterInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async (request) => ({ results: await catalogs.listZoneInstanceTypes('SCW', request.params.zone) }),
  );

  app.get(
    '/aws/managedDatabase/type',
    {
      schema: {
        operationId: 'listAWSManagedDatabaseType',
        summary: 'List the database types AWS runs as managed databases',
        description: 'POSTGRESQL and MYSQL (RDS), MONGODB (DocumentDB) and REDIS (ElastiCache).',
        tags: TAGS,
        response: { 200: ManagedDatabaseTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async () => ({ results: await catalogs.listManagedDatabaseTypes('AWS') }),
  );

  app.get(
    '/aws/managedDatabase/instanceType/:region/:databaseType',
    {
      schema: {
        operationId: 'listAWSManagedDatabaseInstanceType',
        summary: 'List the instance types of an AWS managed database type in a region',
        description:
          'The instance classes a managed database of the type (POSTGRESQL, MYSQL, MONGODB, REDIS; any case) can use in the region. ' +
          'An unknown region or type answers 404; a type AWS does not run in the region (DocumentDB is in some regions only) an ' +
          'empty list.',
        tags: TAGS,
        params: ManagedDatabaseParams,
        response: { 200: ManagedDatabaseInstanceTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async (request) => ({ results: await catalogs.listManagedDatabaseInstanceTypes('AWS', request.params.region, request.params.databaseType) }),
  );

  app.get(
    '/scaleway/managedDatabase/type',
    {
      schema: {
        operationId: 'listSCWManagedDatabaseType',
        summary: 'List the database types Scaleway runs as managed databases',
        description: 'POSTGRESQL, MYSQL, REDIS and MONGODB, each run by a Scaleway managed database product.',
        tags: TAGS,
        response: { 200: ManagedDatabaseTypeResponseList, ...RESPONSES },
      },
      config: ACCESS,
    },
    async () => ({ results: await catalogs.listManagedDatabaseTypes('SCW') }),
  );
}

function nodeFilter(query: { only_meets_resource_reqs?: boolean; with_gpu?: boolean; gpu?: 'ONLY' | 'INCLUDE' | 'EXCLUDE' }) {
  return { onlyMeetsResourceReqs: query.only_meets_resource_reqs, withGpu: query.with_gpu, gpu: query.gpu };
}
