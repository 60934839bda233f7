import { Type, type Static } from 'typebox';
import { schemaProblem } from '../../protocol/wire.ts';
import { AppError } from '../../lib/errors.ts';
import {
  CATALOG_PROVIDERS,
  clusterFeatureProperties,
  CPU_ARCHITECTURES,
  MANAGED_DATABASE_TYPES,
  SCALEWAY_GATEWAY_TYPES,
  type CatalogProvider,
} from './cloud-provider-catalogs.schemas.ts';

/**
 * What each cloud provider offers, as it is written down: one JSON document per provider under catalogs/, versioned
 * with the code (a provider adding a region or an instance type is a reviewed edit of its file). Each document is
 * checked against CatalogDocument, then for what a schema cannot say (unique names, availability lists naming
 * regions and zones that exist, every region offering a node big enough to run a cluster, Karpenter defaults naming
 * families the catalog has). A document that fails makes the catalogs unloadable: answering half a catalog would
 * let a console offer a region whose instance types silently vanished. test/cloud-provider-catalogs.test.ts runs the
 * same checks, so a bad edit fails CI before it can fail a request.
 */

const Text = Type.String({ minLength: 1, maxLength: 200 });
const NameList = (pattern: string) => Type.Array(Type.String({ pattern }), { minItems: 1, uniqueItems: true });
const REGION_NAME = '^[a-z][a-z0-9-]*[a-z0-9]$';
/** As clusters' instance_type accepts them. */
const INSTANCE_TYPE_NAME = '^[A-Za-z0-9][A-Za-z0-9._-]*$';

const CatalogRegion = Type.Object(
  {
    name: Type.String({ pattern: REGION_NAME, maxLength: 64 }),
    country_code: Type.String({ pattern: '^[A-Z]{2}$' }),
    country: Text,
    city: Text,
    arm_supported: Type.Boolean(),
    zones: Type.Array(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 }), { uniqueItems: true }),
  },
  { additionalProperties: false },
);

const CatalogFeature = Type.Object(
  { key: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$' }), ...clusterFeatureProperties },
  { additionalProperties: false },
);

const CatalogInstanceType = Type.Object(
  {
    type: Type.String({ pattern: INSTANCE_TYPE_NAME, maxLength: 64 }),
    cpu: Type.Integer({ minimum: 1 }),
    ram_in_gb: Type.Integer({ minimum: 1 }),
    bandwidth_in_gbps: Type.String({ pattern: '^(0|[1-9][0-9]*)(\\.[0-9]+)?$' }),
    bandwidth_guarantee: Type.Enum(['UP_TO', 'GUARANTEED']),
    architecture: Type.Enum(CPU_ARCHITECTURES),
    gpu: Type.Optional(
      Type.Object(
        { count: Type.Integer({ minimum: 1 }), name: Text, manufacturer: Text, memory_in_mib: Type.Integer({ minimum: 1 }) },
        { additionalProperties: false },
      ),
    ),
    /** Only these regions offer the type (absent: every region, ARM types only where arm_supported). */
    regions: Type.Optional(NameList(REGION_NAME)),
    /** Only these zones offer the type, for providers whose node types are chosen per zone (Scaleway). */
    zones: Type.Optional(NameList('^[a-z0-9][a-z0-9-]*$')),
  },
  { additionalProperties: false },
);

const CatalogManagedDatabase = Type.Object(
  {
    type: Type.Enum(MANAGED_DATABASE_TYPES),
    /** The provider's product that runs it, for the reader of the file and the docs. */
    service: Text,
    regions: Type.Optional(NameList(REGION_NAME)),
    instance_types: Type.Optional(NameList(INSTANCE_TYPE_NAME)),
  },
  { additionalProperties: false },
);

export const CatalogDocument = Type.Object(
  {
    provider: Type.Enum(CATALOG_PROVIDERS),
    name: Text,
    logo_url: Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2048 }),
    regions: Type.Array(CatalogRegion, { minItems: 1 }),
    features: Type.Array(CatalogFeature),
    instance_types: Type.Array(CatalogInstanceType, { minItems: 1 }),
    managed_databases: Type.Optional(Type.Array(CatalogManagedDatabase)),
  },
  { additionalProperties: false },
);

export type CatalogDocument = Static<typeof CatalogDocument>;
export type CatalogRegion = Static<typeof CatalogRegion>;
export type CatalogFeature = Static<typeof CatalogFeature>;
export type CatalogInstanceType = Static<typeof CatalogInstanceType>;
export type CatalogManagedDatabase = Static<typeof CatalogManagedDatabase>;

/** Thrown when a catalog document is malformed; the message names the document and its first problems. */
export class CatalogInvalidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogInvalidError';
  }
}

/**
 * The smallest node a cluster can run on: the platform's own components (ingress controller, DNS, certificate
 * manager, metrics, the Slipway agent) take about 1.5 vCPU and 2.5 GB, and a node must keep room for workloads.
 */
export const NODE_MINIMUM = { cpu: 2, ramInGb: 4 } as const;

export function meetsResourceRequirements(type: Pick<CatalogInstanceType, 'cpu' | 'ram_in_gb'>): boolean {
  return type.cpu >= NODE_MINIMUM.cpu && type.ram_in_gb >= NODE_MINIMUM.ramInGb;
}

export interface InstanceTypeAttributes {
  instance_category: string;
  instance_generation?: number;
  instance_family: string;
  instance_size: string;
}

/**
 * What a type's name says, in each provider's naming scheme: the labels node autoscalers select on (Karpenter's
 * instance-category/-family/-generation/-size on AWS; the SKU family and version on Azure). Undefined when the name
 * does not follow the scheme, which the catalog check refuses.
 */
export function instanceTypeAttributes(provider: CatalogProvider, type: string): InstanceTypeAttributes | undefined {
  switch (provider) {
    case 'AWS': {
      // t3a.medium, m7g.2xlarge, g4dn.xlarge, p4d.24xlarge
      const match = /^([a-z]+?)(\d)([a-z-]*)\.([a-z0-9]+)$/.exec(type);
      if (match === null) return undefined;
      const [, category = '', generation = '', options = '', size = ''] = match;
      return { instance_category: category, instance_generation: Number(generation), instance_family: `${category}${generation}${options}`, instance_size: size };
    }
    case 'GCP': {
      // e2-standard-4, c4a-standard-8, a2-highgpu-1g
      const match = /^([a-z]+?)(\d)([a-z]*)-([a-z0-9-]+)$/.exec(type);
      if (match === null) return undefined;
      const [, category = '', generation = '', options = '', size = ''] = match;
      return { instance_category: category, instance_generation: Number(generation), instance_family: `${category}${generation}${options}`, instance_size: size };
    }
    case 'AZURE': {
      // Standard_D4s_v5, Standard_B2als_v2, Standard_NC24ads_A100_v4: family D, size 4, version 5.
      const match = /^Standard_([A-Z]+)(\d+)([a-z]*)(?:_([A-Z0-9]+))?_v(\d+)$/.exec(type);
      if (match === null) return undefined;
      const [, family = '', size = '', options = '', accelerator, version = ''] = match;
      const series = accelerator === undefined ? `${family}${options}v${version}` : `${family}${options}${accelerator}_v${version}`;
      return { instance_category: family, instance_generation: Number(version), instance_family: series, instance_size: size };
    }
    case 'SCW': {
      // PRO2-XS, DEV1-M, POP2-HC-2C-4G, GPU-3070-S, L40S-1-48G
      const match = /^([A-Z]+)(\d*)([A-Z]*)-([A-Z0-9-]+)$/.exec(type);
      if (match === null) return undefined;
      const [, category = '', generation = '', options = '', size = ''] = match;
      return {
        instance_category: category,
        ...(generation.length === 1 ? { instance_generation: Number(generation) } : {}),
        instance_family: `${category}${generation}${options}`,
        instance_size: size,
      };
    }
  }
}

/** Whether `region` offers `type`: its list (if any) names it, and an ARM type needs a region that runs ARM. */
export function offeredInRegion(type: CatalogInstanceType, region: CatalogRegion): boolean {
  if (type.architecture === 'ARM64' && !region.arm_supported) return false;
  if (type.regions !== undefined && !type.regions.includes(region.name)) return false;
  if (type.zones !== undefined && !type.zones.some((zone) => region.zones.includes(zone))) return false;
  return true;
}

/** Whether `zone` (of `region`) offers `type`. */
export function offeredInZone(type: CatalogInstanceType, region: CatalogRegion, zone: string): boolean {
  if (!offeredInRegion(type, region)) return false;
  return type.zones === undefined || type.zones.includes(zone);
}

function schemaProblems(document: unknown): string[] {
  const problem = schemaProblem(CatalogDocument, document);
  return problem === undefined ? [] : [problem];
}

function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) repeated.add(value);
    seen.add(value);
  }
  return [...repeated];
}

function featureProblems(feature: CatalogFeature, families: ReadonlySet<string>, sizes: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const where = `feature ${feature.key}`;
  const value = feature.value_object;
  const accepted = feature.accepted_values;
  if (accepted !== undefined && duplicates(accepted.map((entry) => JSON.stringify(entry))).length > 0) problems.push(`${where}: accepted_values repeat a value`);
  if (value?.type === 'BOOLEAN' || value?.type === 'STRING') {
    if (accepted !== undefined && !accepted.includes(value.value)) problems.push(`${where}: the default ${JSON.stringify(value.value)} is not an accepted value`);
  }
  if (value?.type === 'NAT_GATEWAY' && value.value?.nat_gateway_type?.provider === 'scaleway') {
    const gatewayType = value.value.nat_gateway_type.type;
    if (accepted !== undefined && !accepted.includes(gatewayType)) problems.push(`${where}: the default ${gatewayType} is not an accepted value`);
    for (const entry of accepted ?? []) {
      if (!(SCALEWAY_GATEWAY_TYPES as readonly unknown[]).includes(entry)) problems.push(`${where}: ${JSON.stringify(entry)} is not a Public Gateway type`);
    }
  }
  if (value?.type === 'KARPENTER') {
    for (const requirement of value.value.platform_node_pools.requirements) {
      const known = requirement.key === 'InstanceFamily' ? families : requirement.key === 'InstanceSize' ? sizes : requirement.key === 'Arch' ? new Set<string>(CPU_ARCHITECTURES) : undefined;
      for (const entry of requirement.values) {
        if (known !== undefined && !known.has(entry)) problems.push(`${where}: ${requirement.key} ${entry} is not in the catalog`);
      }
    }
  }
  return problems;
}

/** The checks a schema cannot express; answers the problems found in one provider's document. */
export function catalogProblems(document: CatalogDocument): string[] {
  const problems: string[] = [];
  const provider = document.provider;
  const regions = new Map(document.regions.map((region) => [region.name, region]));
  for (const name of duplicates(document.regions.map((region) => region.name))) problems.push(`region ${name} appears twice`);
  const zones = new Set<string>();
  for (const region of document.regions) {
    for (const zone of region.zones) {
      // A zone is named after its region (eu-west-3a, fr-par-1), or is a region's own number (Azure's 1, 2, 3).
      if (/^\d+$/.test(zone)) continue;
      if (!zone.startsWith(region.name)) problems.push(`zone ${zone} of region ${region.name} is not named after it`);
      if (zones.has(zone)) problems.push(`zone ${zone} appears twice`);
      zones.add(zone);
    }
  }

  const families = new Set<string>();
  const sizes = new Set<string>();
  for (const name of duplicates(document.instance_types.map((type) => type.type.toLowerCase()))) problems.push(`instance type ${name} appears twice`);
  for (const type of document.instance_types) {
    const where = `instance type ${type.type}`;
    const attributes = instanceTypeAttributes(provider, type.type);
    if (attributes === undefined) problems.push(`${where}: the name does not follow ${provider}'s naming scheme`);
    else {
      families.add(attributes.instance_family);
      sizes.add(attributes.instance_size);
    }
    if (type.regions !== undefined && type.zones !== undefined) problems.push(`${where}: give regions or zones, not both`);
    for (const name of type.regions ?? []) {
      const region = regions.get(name);
      if (region === undefined) problems.push(`${where}: region ${name} is not in the catalog`);
      else if (type.architecture === 'ARM64' && !region.arm_supported) problems.push(`${where}: an ARM type in ${name}, which is not arm_supported`);
    }
    for (const zone of type.zones ?? []) if (!zones.has(zone)) problems.push(`${where}: zone ${zone} is not in the catalog`);
    if (!document.regions.some((region) => offeredInRegion(type, region))) problems.push(`${where}: no region offers it`);
  }
  for (const region of document.regions) {
    if (!document.instance_types.some((type) => offeredInRegion(type, region) && meetsResourceRequirements(type))) {
      problems.push(`region ${region.name} offers no instance type big enough for a node`);
    }
  }

  for (const key of duplicates(document.features.map((feature) => feature.key))) problems.push(`feature ${key} appears twice`);
  for (const feature of document.features) problems.push(...featureProblems(feature, families, sizes));

  const databases = document.managed_databases ?? [];
  for (const type of duplicates(databases.map((database) => database.type))) problems.push(`managed database ${type} appears twice`);
  for (const database of databases) {
    for (const name of database.regions ?? []) if (!regions.has(name)) problems.push(`managed database ${database.type}: region ${name} is not in the catalog`);
  }
  return problems;
}

/** Parses one provider's document; `origin` names it in errors. */
export function parseCatalogDocument(document: unknown, origin: string, provider: CatalogProvider): CatalogDocument {
  const invalid = schemaProblems(document);
  if (invalid.length > 0) throw new CatalogInvalidError(`${origin}: ${invalid.join('; ')}`);
  const checked = document as CatalogDocument;
  if (checked.provider !== provider) throw new CatalogInvalidError(`${origin}: declares provider ${checked.provider}, expected ${provider}`);
  const problems = catalogProblems(checked);
  if (problems.length > 0) throw new CatalogInvalidError(`${origin}: ${problems.slice(0, 5).join('; ')}`);
  return checked;
}

/** Every provider's checked document. */
export type CloudProviderCatalogs = Readonly<Record<CatalogProvider, CatalogDocument>>;

/** Checks the documents together (each provider once, in its own file; feature ids unique across providers). */
export function buildCatalogs(documents: Readonly<Record<CatalogProvider, unknown>>): CloudProviderCatalogs {
  const parsed = {} as Record<CatalogProvider, CatalogDocument>;
  for (const provider of CATALOG_PROVIDERS) {
    parsed[provider] = parseCatalogDocument(documents[provider], CATALOG_FILES[provider], provider);
  }
  const featureIds = CATALOG_PROVIDERS.flatMap((provider) => parsed[provider].features.map((feature) => feature.id));
  const repeated = duplicates(featureIds);
  if (repeated.length > 0) throw new CatalogInvalidError(`feature id ${repeated.join(', ')} is used twice`);
  return parsed;
}

/** Where each provider's document is, beside this file. */
export const CATALOG_FILES: Readonly<Record<CatalogProvider, string>> = {
  AWS: 'catalogs/aws.json',
  SCW: 'catalogs/scaleway.json',
  GCP: 'catalogs/gcp.json',
  AZURE: 'catalogs/azure.json',
};

/**
 * The documents as shipped. Imported on the first catalog read, not at start (most processes never read them); the
 * build bundles each as its own chunk.
 */
export async function readBundledDocuments(): Promise<Record<CatalogProvider, unknown>> {
  const [aws, scaleway, gcp, azure] = await Promise.all([
    import('./catalogs/aws.json', { with: { type: 'json' } }),
    import('./catalogs/scaleway.json', { with: { type: 'json' } }),
    import('./catalogs/gcp.json', { with: { type: 'json' } }),
    import('./catalogs/azure.json', { with: { type: 'json' } }),
  ]);
  return { AWS: aws.default, SCW: scaleway.default, GCP: gcp.default, AZURE: azure.default };
}

/**
 * Reads and checks the documents once per process, on the first call. A failure is not remembered: the next call
 * reads again. A bad document answers AppError('internal') naming the problem (a 500 that says the catalog cannot be
 * loaded), never a catalog without the bad provider.
 */
export function createCatalogLoader(read: () => Promise<Readonly<Record<CatalogProvider, unknown>>>): () => Promise<CloudProviderCatalogs> {
  let loaded: Promise<CloudProviderCatalogs> | undefined;
  return () => {
    loaded ??= read()
      .then(buildCatalogs)
      .catch((error: unknown) => {
        loaded = undefined;
        if (error instanceof CatalogInvalidError) throw new AppError('internal', `the cloud provider catalog cannot be loaded: ${error.message}`);
        throw error;
      });
    return loaded;
  };
}

/** The shipped catalogs. */
export const loadBundledCatalogs = createCatalogLoader(readBundledDocuments);
