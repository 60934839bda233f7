import { Type, type Static } from 'typebox';
import { ListOf, Nullable, Uuid } from '../../protocol/wire.ts';

/**
 * Wire shapes of the "Cloud Provider" operations, after the reference's CloudProvider, ClusterRegion,
 * ClusterFeatureResponse, ClusterInstanceTypeResponseList and ManagedDatabase*Response. The feature value variants
 * are also what the catalog files are checked against (cloud-provider-catalogs.catalog.ts), so a default a file
 * declares is one a client can decode.
 */

export const CATALOG_PROVIDERS = ['AWS', 'SCW', 'GCP', 'AZURE'] as const;
export type CatalogProvider = (typeof CATALOG_PROVIDERS)[number];
export const CPU_ARCHITECTURES = ['AMD64', 'ARM64'] as const;
export const MANAGED_DATABASE_TYPES = ['POSTGRESQL', 'MYSQL', 'MONGODB', 'REDIS'] as const;
export const GPU_FILTERS = ['ONLY', 'INCLUDE', 'EXCLUDE'] as const;
export type GpuFilter = (typeof GPU_FILTERS)[number];

export const ClusterRegion = Type.Object(
  {
    name: Type.String(),
    country_code: Type.String(),
    country: Type.String(),
    city: Type.String(),
    arm_supported: Type.Boolean(),
    zones: Type.Array(Type.String()),
  },
  { $id: 'ClusterRegion' },
);
export const ClusterRegionResponseList = ListOf(ClusterRegion, 'ClusterRegionResponseList');

export const CloudProvider = Type.Object(
  { short_name: Type.Enum(CATALOG_PROVIDERS), name: Type.String(), logo_url: Type.String(), regions: Type.Array(ClusterRegion) },
  { $id: 'CloudProvider' },
);
export const CloudProviderResponseList = ListOf(CloudProvider, 'CloudProviderResponseList');

const StringList = Type.Array(Type.String());

const AwsExistingVpc = Type.Object(
  {
    aws_vpc_eks_id: Type.String(),
    eks_subnets_zone_a_ids: StringList,
    eks_subnets_zone_b_ids: StringList,
    eks_subnets_zone_c_ids: StringList,
    documentdb_subnets_zone_a_ids: Type.Optional(Nullable(StringList)),
    documentdb_subnets_zone_b_ids: Type.Optional(Nullable(StringList)),
    documentdb_subnets_zone_c_ids: Type.Optional(Nullable(StringList)),
    elasticache_subnets_zone_a_ids: Type.Optional(Nullable(StringList)),
    elasticache_subnets_zone_b_ids: Type.Optional(Nullable(StringList)),
    elasticache_subnets_zone_c_ids: Type.Optional(Nullable(StringList)),
    rds_subnets_zone_a_ids: Type.Optional(Nullable(StringList)),
    rds_subnets_zone_b_ids: Type.Optional(Nullable(StringList)),
    rds_subnets_zone_c_ids: Type.Optional(Nullable(StringList)),
    eks_karpenter_fargate_subnets_zone_a_ids: Type.Optional(Nullable(StringList)),
    eks_karpenter_fargate_subnets_zone_b_ids: Type.Optional(Nullable(StringList)),
    eks_karpenter_fargate_subnets_zone_c_ids: Type.Optional(Nullable(StringList)),
    eks_create_nodes_in_private_subnet: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const GcpExistingVpc = Type.Object(
  {
    vpc_name: Type.String(),
    vpc_project_id: Type.Optional(Nullable(Type.String())),
    subnetwork_name: Type.Optional(Nullable(Type.String())),
    ip_range_services_name: Type.Optional(Nullable(Type.String())),
    ip_range_pods_name: Type.Optional(Nullable(Type.String())),
    additional_ip_range_pods_names: Type.Optional(StringList),
    private_nodes: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const KARPENTER_REQUIREMENT_KEYS = ['InstanceFamily', 'InstanceSize', 'Arch', 'SkuFamily', 'SkuVersion'] as const;
const KarpenterRequirement = Type.Object(
  { key: Type.Enum(KARPENTER_REQUIREMENT_KEYS), operator: Type.Literal('In'), values: Type.Array(Type.String(), { minItems: 1 }) },
  { additionalProperties: false },
);
/** The node pool overrides are the cluster's business (clusters apply them); a default here only names requirements. */
const KarpenterOverride = Type.Object({}, { additionalProperties: true });

const KarpenterParameters = Type.Object(
  {
    spot_enabled: Type.Boolean(),
    disk_size_in_gib: Type.Integer({ minimum: 20 }),
    disk_iops: Type.Optional(Type.Integer({ minimum: 3000, maximum: 16000 })),
    disk_throughput: Type.Optional(Type.Integer({ minimum: 125, maximum: 1000 })),
    default_service_architecture: Type.Enum(CPU_ARCHITECTURES),
    platform_node_pools: Type.Object(
      {
        requirements: Type.Array(KarpenterRequirement),
        stable_override: Type.Optional(KarpenterOverride),
        default_override: Type.Optional(KarpenterOverride),
        gpu_override: Type.Optional(KarpenterOverride),
        cronjob_override: Type.Optional(KarpenterOverride),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const SCALEWAY_GATEWAY_TYPES = ['VPC-GW-S', 'VPC-GW-M', 'VPC-GW-L', 'VPC-GW-XL'] as const;
const NatGatewayParameters = Type.Object(
  {
    nat_gateway_type: Type.Optional(
      Nullable(
        Type.Union([
          Type.Object({ provider: Type.Literal('scaleway'), type: Type.Enum(SCALEWAY_GATEWAY_TYPES) }, { additionalProperties: false }),
          Type.Object(
            { provider: Type.Literal('gcp'), static_ips_enabled: Type.Boolean(), static_ips_count: Type.Integer({ minimum: 1 }) },
            { additionalProperties: false },
          ),
        ]),
      ),
    ),
  },
  { additionalProperties: false },
);

/** A feature's value, told apart by `type` as the reference's discriminator does. */
export const ClusterFeatureValue = Type.Union([
  Type.Object({ type: Type.Literal('STRING'), value: Type.String() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('BOOLEAN'), value: Type.Boolean() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('AWS_USER_PROVIDED_NETWORK'), value: AwsExistingVpc }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('GCP_USER_PROVIDED_NETWORK'), value: GcpExistingVpc }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('KARPENTER'), value: KarpenterParameters }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('NAT_GATEWAY'), value: Nullable(NatGatewayParameters) }, { additionalProperties: false }),
]);
export type ClusterFeatureValue = Static<typeof ClusterFeatureValue>;

const featureProperties = {
  id: Uuid,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(Type.String({ maxLength: 2000 })),
  is_cloud_provider_paying_feature: Type.Boolean(),
  cloud_provider_feature_documentation: Nullable(Type.String({ pattern: '^https://' })),
  is_platform_paying_feature: Type.Boolean(),
  platform_feature_documentation: Nullable(Type.String({ pattern: '^https://' })),
  /**
   * The value a new cluster starts with; absent when the feature has no default (it is off until given a value). The
   * reference allows null too, but its discriminator makes generated clients decode null as a variant and fail.
   */
  value_object: Type.Optional(ClusterFeatureValue),
  is_value_updatable: Type.Boolean(),
  accepted_values: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Boolean()]), { minItems: 1 })),
};
/** Also the catalog files' feature entry, with its `key` (see cloud-provider-catalogs.catalog.ts). */
export const clusterFeatureProperties = featureProperties;

export const ClusterFeatureResponse = Type.Object(featureProperties, { $id: 'ClusterFeatureResponse' });
export const ClusterFeatureResponseList = ListOf(ClusterFeatureResponse, 'ClusterFeatureResponseList');

export const ClusterInstanceType = Type.Object(
  {
    /** What a cluster's instance_type names. */
    type: Type.String(),
    name: Type.String(),
    cpu: Type.Integer(),
    ram_in_gb: Type.Integer(),
    /** The most the network carries, in Gbit/s; bandwidth_guarantee says whether it is sustained or a burst ceiling. */
    bandwidth_in_gbps: Type.String(),
    bandwidth_guarantee: Type.Enum(['UP_TO', 'GUARANTEED']),
    architecture: Type.Enum(CPU_ARCHITECTURES),
    gpu_info: Type.Optional(
      Type.Object({ count: Type.Integer(), name: Type.String(), manufacturer: Type.String(), memory_in_mib: Type.String({ description: 'Memory of each GPU.' }) }),
    ),
    attributes: Type.Object({
      instance_category: Type.String(),
      instance_generation: Type.Optional(Type.Integer()),
      instance_family: Type.String(),
      instance_size: Type.String(),
      meets_resource_reqs: Type.Boolean(),
    }),
  },
);
export type ClusterInstanceTypeView = Static<typeof ClusterInstanceType>;
export const ClusterInstanceTypeResponseList = ListOf(ClusterInstanceType, 'ClusterInstanceTypeResponseList');

export const ManagedDatabaseTypeResponse = Type.Object({ name: Type.Enum(MANAGED_DATABASE_TYPES) }, { $id: 'ManagedDatabaseTypeResponse' });
export const ManagedDatabaseTypeResponseList = ListOf(ManagedDatabaseTypeResponse, 'ManagedDatabaseTypeResponseList');
export const ManagedDatabaseInstanceTypeResponse = Type.Object({ name: Type.String() }, { $id: 'ManagedDatabaseInstanceTypeResponse' });
export const ManagedDatabaseInstanceTypeResponseList = ListOf(ManagedDatabaseInstanceTypeResponse, 'ManagedDatabaseInstanceTypeResponseList');

const PathText = Type.String({ minLength: 1, maxLength: 64 });
export const RegionParams = Type.Object({ region: PathText }, { additionalProperties: false });
export const ZoneParams = Type.Object({ zone: PathText }, { additionalProperties: false });
export const ManagedDatabaseParams = Type.Object({ region: PathText, databaseType: PathText }, { additionalProperties: false });

/** No `default` on gpu: with_gpu, its deprecated predecessor, decides when gpu is not given. */
export const NodeInstanceTypeQuery = Type.Object(
  {
    only_meets_resource_reqs: Type.Optional(
      Type.Boolean({ description: 'Only the types big enough to be a node (at least 2 vCPUs and 4 GB of memory).' }),
    ),
    with_gpu: Type.Optional(Type.Boolean({ deprecated: true, description: 'Used when gpu is not given: true is INCLUDE, false is EXCLUDE.' })),
    gpu: Type.Optional(Type.Enum(GPU_FILTERS, { description: 'ONLY the types with a GPU, EXCLUDE them, or INCLUDE them (when neither gpu nor with_gpu is given).' })),
  },
  { additionalProperties: false },
);
