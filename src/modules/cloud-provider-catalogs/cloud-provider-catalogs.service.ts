import { notFound, type FieldProblem } from '../../lib/errors.ts';
import {
  instanceTypeAttributes,
  loadBundledCatalogs,
  meetsResourceRequirements,
  offeredInRegion,
  offeredInZone,
  type CatalogDocument,
  type CatalogInstanceType,
  type CatalogRegion,
  type CloudProviderCatalogs,
} from './cloud-provider-catalogs.catalog.ts';
import { CATALOG_PROVIDERS, type CatalogProvider, type ClusterInstanceTypeView, type GpuFilter } from './cloud-provider-catalogs.schemas.ts';

/**
 * Answers from the provider catalogs (cloud-provider-catalogs.catalog.ts): what a console shows before a cluster or a
 * managed database exists. Nothing here is per organization, and nothing is stored.
 */

const PROVIDER_LABELS: Record<CatalogProvider, string> = { AWS: 'AWS', SCW: 'Scaleway', GCP: 'GCP', AZURE: 'Azure' };

export interface InstanceTypeFilter {
  onlyMeetsResourceReqs?: boolean | undefined;
  gpu?: GpuFilter | undefined;
  /** The deprecated form of gpu: true is INCLUDE, false EXCLUDE; gpu wins when both are given. */
  withGpu?: boolean | undefined;
}

function regionView(region: CatalogRegion) {
  return { name: region.name, country_code: region.country_code, country: region.country, city: region.city, arm_supported: region.arm_supported, zones: [...region.zones] };
}

function instanceTypeView(provider: CatalogProvider, type: CatalogInstanceType): ClusterInstanceTypeView {
  // The catalog check guarantees every name parses.
  const attributes = instanceTypeAttributes(provider, type.type) ?? { instance_category: '', instance_family: '', instance_size: '' };
  return {
    type: type.type,
    name: type.type,
    cpu: type.cpu,
    ram_in_gb: type.ram_in_gb,
    bandwidth_in_gbps: type.bandwidth_in_gbps,
    bandwidth_guarantee: type.bandwidth_guarantee,
    architecture: type.architecture,
    ...(type.gpu === undefined
      ? {}
      : { gpu_info: { count: type.gpu.count, name: type.gpu.name, manufacturer: type.gpu.manufacturer, memory_in_mib: String(type.gpu.memory_in_mib) } }),
    attributes: { ...attributes, meets_resource_reqs: meetsResourceRequirements(type) },
  };
}

function gpuFilterOf(filter: InstanceTypeFilter): GpuFilter {
  if (filter.gpu !== undefined) return filter.gpu;
  if (filter.withGpu !== undefined) return filter.withGpu ? 'INCLUDE' : 'EXCLUDE';
  return 'INCLUDE';
}

function matches(type: CatalogInstanceType, filter: InstanceTypeFilter): boolean {
  if (filter.onlyMeetsResourceReqs === true && !meetsResourceRequirements(type)) return false;
  const gpu = gpuFilterOf(filter);
  if (gpu === 'ONLY') return type.gpu !== undefined;
  if (gpu === 'EXCLUDE') return type.gpu === undefined;
  return true;
}

function requireRegion(provider: CatalogProvider, document: CatalogDocument, name: string): CatalogRegion {
  const region = document.regions.find((candidate) => candidate.name === name);
  if (region === undefined) throw notFound(`${PROVIDER_LABELS[provider]} has no region "${name}"; the provider's region list names them`);
  return region;
}

export function createCloudProviderCatalogsService(load: () => Promise<CloudProviderCatalogs> = loadBundledCatalogs) {
  async function catalogOf(provider: CatalogProvider): Promise<CatalogDocument> {
    return (await load())[provider];
  }

  return {
    async listCloudProviders() {
      const catalogs = await load();
      return CATALOG_PROVIDERS.map((provider) => ({
        short_name: provider,
        name: catalogs[provider].name,
        logo_url: catalogs[provider].logo_url,
        regions: catalogs[provider].regions.map(regionView),
      }));
    },

    async listRegions(provider: CatalogProvider) {
      return (await catalogOf(provider)).regions.map(regionView);
    },

    async listFeatures(provider: CatalogProvider) {
      return (await catalogOf(provider)).features.map(({ key: _key, ...feature }) => structuredClone(feature));
    },

    /** Every instance type of the provider, whatever the region (the reference's region-less listings). */
    async listAllInstanceTypes(provider: CatalogProvider): Promise<ClusterInstanceTypeView[]> {
      return (await catalogOf(provider)).instance_types.map((type) => instanceTypeView(provider, type));
    },

    /** The node types a region offers, filtered; 404 for a region the provider does not have. */
    async listRegionInstanceTypes(provider: CatalogProvider, regionName: string, filter: InstanceTypeFilter = {}): Promise<ClusterInstanceTypeView[]> {
      const document = await catalogOf(provider);
      const region = requireRegion(provider, document, regionName);
      return document.instance_types.filter((type) => offeredInRegion(type, region) && matches(type, filter)).map((type) => instanceTypeView(provider, type));
    },

    /** The node types a zone offers; 404 for an unknown zone (naming the zones when a region was given instead). */
    async listZoneInstanceTypes(provider: CatalogProvider, zone: string): Promise<ClusterInstanceTypeView[]> {
      const document = await catalogOf(provider);
      const region = document.regions.find((candidate) => candidate.zones.includes(zone));
      if (region === undefined) {
        const named = document.regions.find((candidate) => candidate.name === zone);
        throw notFound(
          named === undefined
            ? `${PROVIDER_LABELS[provider]} has no zone "${zone}"`
            : `"${zone}" is a ${PROVIDER_LABELS[provider]} region, not a zone; its zones are ${named.zones.join(', ')}`,
        );
      }
      return document.instance_types.filter((type) => offeredInZone(type, region, zone)).map((type) => instanceTypeView(provider, type));
    },

    async listManagedDatabaseTypes(provider: CatalogProvider) {
      return ((await catalogOf(provider)).managed_databases ?? []).map((database) => ({ name: database.type }));
    },

    /**
     * The instance types of a managed database type in a region: 404 for an unknown region or type; an empty list
     * where the provider does not run that type in the region (DocumentDB is in some AWS regions only).
     */
    async listManagedDatabaseInstanceTypes(provider: CatalogProvider, regionName: string, databaseType: string) {
      const document = await catalogOf(provider);
      const region = requireRegion(provider, document, regionName);
      const database = (document.managed_databases ?? []).find((candidate) => candidate.type === databaseType.toUpperCase());
      if (database === undefined) throw notFound(`${PROVIDER_LABELS[provider]} has no managed database type "${databaseType}"`);
      if (database.regions !== undefined && !database.regions.includes(region.name)) return [];
      return (database.instance_types ?? []).map((name) => ({ name }));
    },

    /**
     * What is wrong with a cluster's placement for a provider the catalogs cover: a region the provider does not
     * have, or an instance type the region does not offer (compared without case, as providers' consoles do).
     * Empty when the placement is fine or the provider is not one the catalogs cover.
     */
    async clusterPlacementProblems(cloudProvider: string, regionName: string, instanceType: string | undefined): Promise<FieldProblem[]> {
      if (!(CATALOG_PROVIDERS as readonly string[]).includes(cloudProvider)) return [];
      const provider = cloudProvider as CatalogProvider;
      const document = await catalogOf(provider);
      const region = document.regions.find((candidate) => candidate.name === regionName);
      if (region === undefined) return [{ field: '/region', message: `${PROVIDER_LABELS[provider]} has no such region` }];
      if (instanceType === undefined) return [];
      const type = document.instance_types.find((candidate) => candidate.type.toLowerCase() === instanceType.toLowerCase());
      if (type === undefined) return [{ field: '/instance_type', message: `${PROVIDER_LABELS[provider]} has no such instance type` }];
      if (!offeredInRegion(type, region)) return [{ field: '/instance_type', message: `${type.type} is not offered in ${region.name}` }];
      return [];
    },
  };
}

export type CloudProviderCatalogsService = ReturnType<typeof createCloudProviderCatalogsService>;
