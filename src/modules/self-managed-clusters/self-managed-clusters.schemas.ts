import { Type, type Static } from 'typebox';
import { Description, Name, Nullable, Uuid } from '../../protocol/wire.ts';
import { CLOUD_VENDORS, ClusterOperatorBootstrapResponse, ClusterResponse } from '../clusters/clusters.schemas.ts';
import { ClusterPlatformConfigurationRequest } from '../platform-templates/platform-templates.schemas.ts';

/**
 * SelfManagedClusterRequest / SelfManagedClusterResponse (SPEC.md "Self-managed cluster creation rules"; the
 * reference has no such shapes, so they follow its ClusterRequest / Cluster: docs/self-managed-clusters.md).
 */

/** Where the cluster's DNS records live: the zone Slipway manages for the organization. */
export const DNS_PROVIDERS = ['PLATFORM_DNS'] as const;
/** Where its images are built: on the cluster itself, pushed to the default ECR registry. */
export const BUILD_PROVIDERS = ['CLUSTER'] as const;

/**
 * Any lower-case region spelling is accepted by the schema; the service then answers an unknown one with a 400 that
 * names it (the region table is src/aws/aws-regions.ts).
 */
const Region = Type.String({ minLength: 1, maxLength: 64 });

export const SelfManagedClusterRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    region: Region,
    /** Any CloudVendorEnum value is understood, so that a provider other than AWS gets its own 400. */
    cloud_provider: Type.Enum(CLOUD_VENDORS),
    cloud_provider_credentials: Type.Object(
      {
        cloud_provider: Type.Enum(['AWS', 'SCW', 'GCP', 'ON_PREMISE', 'AZURE']),
        credentials: Type.Object({ id: Uuid, name: Type.Optional(Type.String({ maxLength: 255 })) }, { additionalProperties: false }),
        region: Type.Optional(Region),
      },
      { additionalProperties: false },
    ),
    production: Type.Optional(Type.Boolean()),
    dns_provider: Type.Optional(Type.Enum(DNS_PROVIDERS)),
    build_provider: Type.Optional(Type.Enum(BUILD_PROVIDERS)),
    platform_configuration: ClusterPlatformConfigurationRequest,
  },
  { $id: 'SelfManagedClusterRequest', additionalProperties: false },
);
export type SelfManagedClusterRequestBody = Static<typeof SelfManagedClusterRequest>;

/** The Cluster, what it was created with, and how to install its operator (SPEC.md rule 7). */
export const SelfManagedClusterResponse = Type.Object(
  {
    ...ClusterResponse.properties,
    credentials: Type.Object({ id: Uuid, name: Type.String() }),
    dns_provider: Type.Enum(DNS_PROVIDERS),
    build_provider: Type.Enum(BUILD_PROVIDERS),
    default_container_registry: Type.Object({ id: Uuid, url: Type.String() }),
    /**
     * What installs the operator (SPEC.md rule 7), with the cluster's first one-time enrollment token; shown only
     * here. getClusterOperatorBootstrap issues a new token (and retires this one) when it is needed again.
     */
    operator_bootstrap: ClusterOperatorBootstrapResponse,
  },
  { $id: 'SelfManagedClusterResponse' },
);
