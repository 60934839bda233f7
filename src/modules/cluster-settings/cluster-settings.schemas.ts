import { Type, type Static } from 'typebox';
import { ListOf, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/**
 * Wire shapes of a cluster's network and provider settings and of its analyses, following the reference's
 * ClusterRoutingTable, ClusterDnsProvider*, ClusterCloudProviderInfo, ClusterAnalysis*, EksAnywhere* and
 * ClusterKarpenterPrivateSubnetIdsPutRequest (docs/cluster-network.md).
 */

export const OrganizationClusterParams = Type.Object({ organizationId: Uuid, clusterId: Uuid }, { additionalProperties: false });
export const ClusterOnlyParams = Type.Object({ clusterId: Uuid }, { additionalProperties: false });
export const AnalysisParams = Type.Object({ clusterId: Uuid, analysisId: Uuid }, { additionalProperties: false });
export const ComponentResolveParams = Type.Object(
  { organizationId: Uuid, clusterId: Uuid, componentKey: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }) },
  { additionalProperties: false },
);

/** One line of text: no control characters. */
const Line = (maxLength: number) => Type.String({ maxLength, pattern: '^[^\\x00-\\x1f\\x7f]*$' });

// Routing table ---------------------------------------------------------------------------------------------------

/** Destination and target are checked by the service (CIDR arithmetic, target forms) so the 400 can say why. */
const Route = Type.Object(
  {
    destination: Type.String({ minLength: 1, maxLength: 64 }),
    target: Type.String({ minLength: 1, maxLength: 64 }),
    description: Line(255),
  },
  { additionalProperties: false },
);
export type RouteInput = Static<typeof Route>;

export const MAX_ROUTES = 100;

export const ClusterRoutingTableRequest = Type.Object(
  { routes: Type.Array(Route, { maxItems: MAX_ROUTES }) },
  { additionalProperties: false, $id: 'ClusterRoutingTableRequest' },
);

export const ClusterRoutingTable = Type.Object(
  { results: Type.Array(Type.Object({ destination: Type.String(), target: Type.String(), description: Type.String() })) },
  { $id: 'ClusterRoutingTable' },
);

// DNS provider ----------------------------------------------------------------------------------------------------

/** A DNS zone: lower-case labels of letters, digits and hyphens, at least two of them. */
const Domain = Type.String({
  minLength: 3,
  maxLength: 253,
  pattern: '^(?=.{3,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.?$',
});
const AwsRegion = Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$' });
const Secret = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\x00-\\x1f\\x7f]*$' });

const PlatformDnsProviderRequest = Type.Object(
  { provider: Type.Literal('PLATFORM'), domain: Domain },
  { additionalProperties: false, $id: 'PlatformDnsProviderRequest' },
);
const CloudflareDnsProviderRequest = Type.Object(
  {
    provider: Type.Literal('CLOUDFLARE'),
    domain: Domain,
    email: Type.String({ format: 'email', maxLength: 320 }),
    api_token: Secret,
    proxied: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, $id: 'CloudflareDnsProviderRequest' },
);
const Route53DnsProviderRequest = Type.Object(
  {
    provider: Type.Literal('ROUTE53'),
    domain: Domain,
    credentials: Type.Object(
      {
        type: Type.Literal('STATIC'),
        aws_access_key_id: Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Z0-9]+$' }),
        aws_secret_access_key: Secret,
      },
      { additionalProperties: false },
    ),
    aws_region: AwsRegion,
    hosted_zone_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, pattern: '^(/hostedzone/)?[A-Z0-9]+$' }))),
  },
  { additionalProperties: false, $id: 'Route53DnsProviderRequest' },
);

export const ClusterDnsProviderRequest = Type.Object(
  { dns_provider: Type.Union([PlatformDnsProviderRequest, CloudflareDnsProviderRequest, Route53DnsProviderRequest]) },
  { additionalProperties: false, $id: 'ClusterDnsProviderRequest' },
);
export type DnsProviderInput = Static<typeof ClusterDnsProviderRequest>['dns_provider'];

export const ClusterDnsProviderResponse = Type.Object(
  {
    dns_provider: Type.Union([
      Type.Object({ provider: Type.Literal('PLATFORM'), domain: Type.String() }),
      Type.Object({ provider: Type.Literal('CLOUDFLARE'), domain: Type.String(), email: Type.String(), proxied: Type.Boolean() }),
      Type.Object({
        provider: Type.Literal('ROUTE53'),
        domain: Type.String(),
        credentials: Type.Object({ type: Type.Literal('STATIC'), aws_access_key_id: Type.String() }),
        aws_region: Type.String(),
        hosted_zone_id: Type.Optional(Nullable(Type.String())),
      }),
    ]),
  },
  { $id: 'ClusterDnsProviderResponse' },
);
export type DnsProviderView = Static<typeof ClusterDnsProviderResponse>['dns_provider'];

// Cloud provider info ---------------------------------------------------------------------------------------------

export const CLOUD_PROVIDERS = ['AWS', 'SCW', 'GCP', 'ON_PREMISE', 'AZURE'] as const;
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];
const CloudProviderEnum = Type.Enum(CLOUD_PROVIDERS);

export const ClusterCloudProviderInfoRequest = Type.Object(
  {
    cloud_provider: Type.Optional(CloudProviderEnum),
    credentials: Type.Optional(
      Type.Object({ id: Type.Optional(Uuid), name: Type.Optional(Type.String({ maxLength: 255 })) }, { additionalProperties: false }),
    ),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9-]*$' })),
  },
  { additionalProperties: false, $id: 'ClusterCloudProviderInfoRequest' },
);
export type CloudProviderInfoInput = Static<typeof ClusterCloudProviderInfoRequest>;

export const ClusterCloudProviderInfo = Type.Object(
  {
    cloud_provider: Type.Optional(CloudProviderEnum),
    credentials: Type.Optional(Type.Object({ id: Type.Optional(Uuid), name: Type.Optional(Type.String()) })),
    region: Type.Optional(Type.String()),
  },
  { $id: 'ClusterCloudProviderInfo' },
);
export type CloudProviderInfoView = Static<typeof ClusterCloudProviderInfo>;

// Analyses --------------------------------------------------------------------------------------------------------

export const ANALYSIS_KINDS = ['COST_RECOMMENDATION', 'DEPRECATED_API_CHECK'] as const;
export type AnalysisKind = (typeof ANALYSIS_KINDS)[number];
export const ANALYSIS_FORMATS = ['TABLE', 'JSON', 'CSV'] as const;
export type AnalysisFormat = (typeof ANALYSIS_FORMATS)[number];
export const ANALYSIS_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TERMINATED'] as const;

export const ClusterAnalysisRequest = Type.Object(
  {
    kind: Type.Enum(ANALYSIS_KINDS),
    output_format: Type.Enum(ANALYSIS_FORMATS),
    prometheus_url: Type.Optional(Nullable(Type.String({ maxLength: 2048, pattern: '^https?://[^\\s\\x00-\\x1f\\x7f]+$' }))),
    cmd_args: Type.Optional(Type.Array(Type.String({ maxLength: 256, pattern: '^[^\\x00-\\x1f\\x7f]*$' }), { maxItems: 32 })),
    target_kubernetes_version: Type.Optional(Nullable(Type.String({ maxLength: 16, pattern: '^\\d+\\.\\d+$' }))),
  },
  { additionalProperties: false, $id: 'ClusterAnalysisRequest' },
);
export type ClusterAnalysisInput = Static<typeof ClusterAnalysisRequest>;

export const ClusterAnalysisResponse = Type.Object(
  {
    id: Uuid,
    cluster_id: Uuid,
    organization_id: Uuid,
    kind: Type.Enum(ANALYSIS_KINDS),
    status: Type.Enum(ANALYSIS_STATUSES),
    output_format: Type.Enum(ANALYSIS_FORMATS),
    created_at: Timestamp,
    updated_at: Timestamp,
    triggered_by: Type.String(),
    error_message: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'ClusterAnalysisResponse' },
);
export const ClusterAnalysisResponseList = ListOf(ClusterAnalysisResponse, 'ClusterAnalysisResponseList');

export const ClusterAnalysisLogResponseList = ListOf(
  Type.Object({ timestamp: Timestamp, level: Type.String(), message: Type.String(), line_order: Type.Integer() }, { $id: 'ClusterAnalysisLogResponse' }),
  'ClusterAnalysisLogResponseList',
);

// EKS Anywhere and Karpenter --------------------------------------------------------------------------------------

export const EksAnywhereClusterJwtResponse = Type.Object({ jwt: Type.String() }, { $id: 'EksAnywhereClusterJwtResponse' });

/** A full commit id or an abbreviation of at least 7 hexadecimal digits, as git shows them. */
export const EksAnywhereCommitRequest = Type.Object(
  { commit_id: Type.String({ minLength: 7, maxLength: 40, pattern: '^[0-9a-fA-F]+$' }) },
  { additionalProperties: false, $id: 'EksAnywhereCommitRequest' },
);
export const EksAnywhereCommitResponse = Type.Object({ commit_id: Type.String() }, { $id: 'EksAnywhereCommitResponse' });

const SubnetIds = Type.Array(Type.String({ pattern: '^subnet-[0-9a-f]{8}([0-9a-f]{9})?$' }), { maxItems: 16, uniqueItems: true });
export const ClusterKarpenterPrivateSubnetIdsPutRequest = Type.Object(
  {
    eks_karpenter_fargate_subnets_zone_a_ids: Type.Optional(SubnetIds),
    eks_karpenter_fargate_subnets_zone_b_ids: Type.Optional(SubnetIds),
    eks_karpenter_fargate_subnets_zone_c_ids: Type.Optional(SubnetIds),
  },
  { additionalProperties: false, $id: 'ClusterKarpenterPrivateSubnetIdsPutRequest' },
);
export type KarpenterSubnetsInput = Static<typeof ClusterKarpenterPrivateSubnetIdsPutRequest>;
