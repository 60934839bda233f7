import { describe, expect, it } from 'vitest';
import { AWS_REGIONS } from '../src/aws/aws-regions.ts';
import {
  buildCatalogs,
  CatalogInvalidError,
  createCatalogLoader,
  readBundledDocuments,
  type CatalogDocument,
} from '../src/modules/cloud-provider-catalogs/cloud-provider-catalogs.catalog.ts';
import { createCloudProviderCatalogsService } from '../src/modules/cloud-provider-catalogs/cloud-provider-catalogs.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Provider catalogs (issue 23 part 7): the reference's 18 "Cloud Provider" operations, answered from the JSON
 * documents under src/modules/cloud-provider-catalogs/catalogs/. The documents are checked here as they are at the
 * first read, so a bad edit fails CI; the HTTP part asserts the filters (region, zone, resource requirements, GPU),
 * the 404s with the error body, and that any signed-in caller, and only one, may read.
 */

interface InstanceType {
  type: string;
  name: string;
  cpu: number;
  ram_in_gb: number;
  architecture: string;
  gpu_info?: { count: number; name: string; manufacturer: string; memory_in_mib: string };
  attributes: { instance_family: string; instance_size: string; meets_resource_reqs: boolean };
}
interface Region {
  name: string;
  zones: string[];
  arm_supported: boolean;
}

type Documents = Record<keyof Awaited<ReturnType<typeof buildCatalogs>>, unknown>;

async function bundledCopy(): Promise<Record<'AWS' | 'SCW' | 'GCP' | 'AZURE', CatalogDocument>> {
  return structuredClone(await readBundledDocuments()) as Record<'AWS' | 'SCW' | 'GCP' | 'AZURE', CatalogDocument>;
}

function refusal(documents: Documents): string {
  try {
    buildCatalogs(documents);
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogInvalidError);
    return (error as Error).message;
  }
  throw new Error('the catalogs were accepted');
}

describe('the catalog documents', () => {
  it('pass the schema and the catalog checks, and AWS has exactly the regions self-managed clusters accept', async () => {
    const catalogs = buildCatalogs(await readBundledDocuments());
    expect(catalogs.AWS.regions.map((region) => region.name).sort()).toEqual([...AWS_REGIONS].sort());
    for (const document of Object.values(catalogs)) {
      expect(document.regions.length).toBeGreaterThan(2);
      expect(document.instance_types.length).toBeGreaterThan(10);
    }
  });

  it('refuse a bad edit, naming the file and what is wrong', async () => {
    const cases: Array<[string, (documents: Awaited<ReturnType<typeof bundledCopy>>) => void, RegExp]> = [
      ['an unknown field', (d) => Object.assign(d.GCP.regions[0] ?? {}, { continent: 'Europe' }), /catalogs\/gcp\.json: \/regions\/0/],
      ['a cpu count as text', (d) => Object.assign(d.AWS.instance_types[0] ?? {}, { cpu: '2' }), /catalogs\/aws\.json: \/instance_types\/0\/cpu/],
      ['a region twice', (d) => d.SCW.regions.push(structuredClone(d.SCW.regions[0]!)), /region fr-par appears twice/],
      ['an instance type twice', (d) => d.AZURE.instance_types.push({ ...d.AZURE.instance_types[0]!, type: 'standard_b2als_v2' }), /instance type standard_b2als_v2 appears twice/],
      ['a type in a region that does not exist', (d) => Object.assign(d.AWS.instance_types[0]!, { regions: ['eu-west-9'] }), /region eu-west-9 is not in the catalog/],
      ['an ARM type in a region without ARM', (d) => Object.assign(d.AZURE.instance_types.find((t) => t.architecture === 'ARM64')!, { regions: ['southcentralus'] }), /not arm_supported/],
      ['a name outside the provider scheme', (d) => Object.assign(d.AWS.instance_types[0]!, { type: 'medium' }), /medium: the name does not follow AWS's naming scheme/],
      ['a zone not named after its region', (d) => d.GCP.regions[0]!.zones.push('europe-west1-z'), /zone europe-west1-z of region us-central1/],
      ['a Karpenter family the catalog lacks', (d) => {
        const karpenter = d.AWS.features.find((feature) => feature.key === 'KARPENTER')!.value_object;
        if (karpenter?.type === 'KARPENTER') karpenter.value.platform_node_pools.requirements[0]!.values.push('x9z');
      }, /InstanceFamily x9z is not in the catalog/],
      ['a default that is not accepted', (d) => Object.assign(d.SCW.features.find((f) => f.key === 'NAT_GATEWAY')!, { accepted_values: ['VPC-GW-M'] }), /default VPC-GW-S is not an accepted value/],
      ['a feature id of another provider', (d) => Object.assign(d.GCP.features[0]!, { id: d.AWS.features[0]!.id }), /feature id .* is used twice/],
      ['a region where no node fits', (d) => {
        d.SCW.instance_types = d.SCW.instance_types.map((type) => ({ ...type, zones: ['nl-ams-1'] }));
      }, /region fr-par offers no instance type big enough for a node/],
      ['a provider in the wrong file', (d) => Object.assign(d.GCP, { provider: 'AZURE' }), /catalogs\/gcp\.json: declares provider AZURE/],
    ];
    for (const [label, edit, expected] of cases) {
      const documents = await bundledCopy();
      edit(documents);
      expect(refusal(documents), label).toMatch(expected);
    }
  });

  it('make the catalog unloadable (500 naming the problem), not half a catalog, when one document is bad', async () => {
    const documents = await bundledCopy();
    Object.assign(documents.AWS, { regions: [] });
    const service = createCloudProviderCatalogsService(createCatalogLoader(async () => documents));
    await expect(service.listRegions('GCP')).rejects.toMatchObject({ kind: 'internal', message: expect.stringMatching(/cannot be loaded: catalogs\/aws\.json: \/regions/) });
  });
});

describeEachDatabase('cloud provider catalogs', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  const get = (url: string, auth: string | undefined = owner.auth) => ctx().call(auth, { method: 'GET', url });
  const results = async <T>(url: string): Promise<T[]> => {
    const answer = await get(url);
    expect(answer.statusCode, `${url}: ${answer.body}`).toBe(200);
    return answer.json<{ results: T[] }>().results;
  };
  const types = async (url: string) => (await results<InstanceType>(url)).map((type) => type.type);

  it('sets up an owner and an organization', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
  });

  it('documents the reference\'s 18 operations under its tag, at its paths', async () => {
    const document = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> }>();
    const tagged = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.values(operations).filter((operation) => operation.tags?.includes('Cloud Provider')).map((operation) => `${operation.operationId ?? ''} ${path}`),
    );
    expect(tagged.sort()).toEqual(
      [
        'listCloudProvider /cloudProvider',
        'listAWSRegions /aws/region',
        'listAWSFeatures /aws/clusterFeature',
        'listAWSInstanceType /aws/instanceType',
        'listAWSEKSInstanceType /aws/eks/instanceType/{region}',
        'listAWSManagedDatabaseType /aws/managedDatabase/type',
        'listAWSManagedDatabaseInstanceType /aws/managedDatabase/instanceType/{region}/{databaseType}',
        'listScalewayRegions /scaleway/region',
        'listScalewayFeatures /scaleway/clusterFeature',
        'listScalewayInstanceType /scaleway/instanceType',
        'listScalewayKapsuleInstanceType /scaleway/instanceType/{zone}',
        'listSCWManagedDatabaseType /scaleway/managedDatabase/type',
        'listGcpRegions /gcp/region',
        'listGcpFeatures /gcp/clusterFeature',
        'listGcpGkeInstanceType /gcp/instanceType/{region}',
        'listAzureRegions /azure/region',
        'listAzureFeatures /azure/clusterFeature',
        'listAzureAKSInstanceType /azure/aks/instanceType/{region}',
      ].sort(),
    );
  });

  it('lists the four providers with the regions their own listing answers', async () => {
    const providers = await results<{ short_name: string; name: string; logo_url: string; regions: Region[] }>('/cloudProvider');
    expect(providers.map((provider) => provider.short_name)).toEqual(['AWS', 'SCW', 'GCP', 'AZURE']);
    const prefixes: Record<string, string> = { AWS: 'aws', SCW: 'scaleway', GCP: 'gcp', AZURE: 'azure' };
    for (const provider of providers) {
      expect(provider.logo_url).toMatch(/^https:\/\//);
      expect(provider.regions).toEqual(await results<Region>(`/${prefixes[provider.short_name]}/region`));
    }
    const paris = (await results<Region & { country_code: string; city: string }>('/aws/region')).find((region) => region.name === 'eu-west-3');
    expect(paris).toEqual({ name: 'eu-west-3', country_code: 'FR', country: 'France', city: 'Paris', arm_supported: true, zones: ['eu-west-3a', 'eu-west-3b', 'eu-west-3c'] });
    const frPar = (await results<Region>('/scaleway/region')).find((region) => region.name === 'fr-par');
    expect(frPar?.zones).toEqual(['fr-par-1', 'fr-par-2', 'fr-par-3']);
  });

  it('lists each provider\'s features with distinct ids and a default each accepts', async () => {
    // Each answer is its file's features as written (Karpenter's node pool included), less the key kept for code.
    const documents = (await readBundledDocuments()) as Record<string, CatalogDocument>;
    for (const [provider, prefix] of [['AWS', 'aws'], ['SCW', 'scaleway'], ['GCP', 'gcp'], ['AZURE', 'azure']] as const) {
      expect(await results(`/${prefix}/clusterFeature`)).toEqual(documents[provider]?.features.map(({ key: _key, ...feature }) => feature));
    }
    const ids = new Set<string>();
    for (const prefix of ['aws', 'scaleway', 'gcp', 'azure']) {
      const features = await results<{ id: string; title: string; value_object?: { type: string; value: unknown }; accepted_values?: unknown[] }>(`/${prefix}/clusterFeature`);
      expect(features.length, prefix).toBeGreaterThan(0);
      for (const feature of features) {
        expect(ids.has(feature.id), feature.title).toBe(false);
        ids.add(feature.id);
        expect(feature).not.toHaveProperty('key');
      }
    }
    const aws = await results<{ title: string; value_object?: { type: string; value: unknown } }>('/aws/clusterFeature');
    expect(aws.find((feature) => feature.title === 'Static IP')?.value_object).toEqual({ type: 'BOOLEAN', value: false });
    expect(aws.find((feature) => feature.title === 'Karpenter')?.value_object?.type).toBe('KARPENTER');
    // A feature with no default answers without one (not null: see docs/cloud-provider-catalogs.md).
    expect(aws.find((feature) => feature.title === 'Deploy on an existing VPC')).not.toHaveProperty('value_object');
    const scaleway = await results<{ title: string; value_object: unknown; accepted_values?: unknown[] }>('/scaleway/clusterFeature');
    expect(scaleway.find((feature) => feature.title === 'Public Gateway size')).toMatchObject({
      value_object: { type: 'NAT_GATEWAY', value: { nat_gateway_type: { provider: 'scaleway', type: 'VPC-GW-S' } } },
      accepted_values: ['VPC-GW-S', 'VPC-GW-M', 'VPC-GW-L', 'VPC-GW-XL'],
    });
  });

  it('lists the EKS types of a region, with the resource and GPU filters', async () => {
    const all = await results<InstanceType>('/aws/eks/instanceType/us-east-1');
    const medium = all.find((type) => type.type === 't3a.medium');
    expect(medium).toEqual({
      type: 't3a.medium',
      name: 't3a.medium',
      cpu: 2,
      ram_in_gb: 4,
      bandwidth_in_gbps: '5',
      bandwidth_guarantee: 'UP_TO',
      architecture: 'AMD64',
      attributes: { instance_category: 't', instance_generation: 3, instance_family: 't3a', instance_size: 'medium', meets_resource_reqs: true },
    });
    expect(all.find((type) => type.type === 't3a.small')?.attributes.meets_resource_reqs).toBe(false);
    expect(all.find((type) => type.type === 'p4d.24xlarge')?.gpu_info).toEqual({ count: 8, name: 'A100', manufacturer: 'NVIDIA', memory_in_mib: '40960' });
    expect(all.some((type) => type.architecture === 'ARM64')).toBe(true);

    const fitting = await results<InstanceType>('/aws/eks/instanceType/us-east-1?only_meets_resource_reqs=true');
    expect(fitting.length).toBeLessThan(all.length);
    expect(fitting.every((type) => type.cpu >= 2 && type.ram_in_gb >= 4 && type.attributes.meets_resource_reqs)).toBe(true);

    const gpus = await results<InstanceType>('/aws/eks/instanceType/us-east-1?gpu=ONLY');
    expect(gpus.length).toBeGreaterThan(0);
    expect(gpus.every((type) => type.gpu_info !== undefined)).toBe(true);
    const noGpus = await types('/aws/eks/instanceType/us-east-1?gpu=EXCLUDE');
    expect(noGpus.length + gpus.length).toBe(all.length);
    expect(await types('/aws/eks/instanceType/us-east-1?gpu=INCLUDE')).toEqual(all.map((type) => type.type));
    // with_gpu, deprecated, decides only when gpu is not given.
    expect(await types('/aws/eks/instanceType/us-east-1?with_gpu=false')).toEqual(noGpus);
    expect(await types('/aws/eks/instanceType/us-east-1?with_gpu=true')).toEqual(all.map((type) => type.type));
    expect(await types('/aws/eks/instanceType/us-east-1?with_gpu=false&gpu=ONLY')).toEqual(gpus.map((type) => type.type));

    // A type listed for some regions only is not offered elsewhere.
    expect(all.map((type) => type.type)).toContain('p4d.24xlarge');
    const paris = await types('/aws/eks/instanceType/eu-west-3');
    expect(paris).toContain('g4dn.xlarge');
    expect(paris).not.toContain('p4d.24xlarge');

    // The region-less listing has every type.
    const every = await types('/aws/instanceType');
    expect(every).toEqual(expect.arrayContaining([...all.map((type) => type.type), ...paris]));
  });

  it('lists AKS sizes per region: ARM sizes only where the region runs ARM', async () => {
    const regions = await results<Region>('/azure/region');
    expect(regions.find((region) => region.name === 'southcentralus')?.arm_supported).toBe(false);
    const texas = await results<InstanceType>('/azure/aks/instanceType/southcentralus');
    expect(texas.some((type) => type.architecture === 'ARM64')).toBe(false);
    const amsterdam = await results<InstanceType>('/azure/aks/instanceType/westeurope?gpu=EXCLUDE&only_meets_resource_reqs=true');
    expect(amsterdam.find((type) => type.type === 'Standard_D4ps_v5')).toMatchObject({ architecture: 'ARM64', cpu: 4, ram_in_gb: 16 });
    expect(amsterdam.every((type) => type.gpu_info === undefined)).toBe(true);
    expect(await types('/azure/aks/instanceType/westeurope?gpu=ONLY')).toEqual(['Standard_NC4as_T4_v3', 'Standard_NC8as_T4_v3', 'Standard_NC24ads_A100_v4']);
  });

  it('lists GKE machine types per region, and Kapsule types per zone', async () => {
    const iowa = await types('/gcp/instanceType/us-central1');
    expect(iowa).toEqual(expect.arrayContaining(['e2-standard-4', 't2a-standard-4', 'a2-highgpu-1g']));
    const paris = await types('/gcp/instanceType/europe-west9');
    expect(paris).toContain('e2-standard-4');
    expect(paris.some((type) => type.startsWith('t2a-') || type.startsWith('c4a-'))).toBe(false);

    const parTwo = await types('/scaleway/instanceType/fr-par-2');
    expect(parTwo).toEqual(expect.arrayContaining(['DEV1-L', 'PRO2-S', 'H100-1-80G']));
    const parThree = await types('/scaleway/instanceType/fr-par-3');
    expect(parThree).toContain('PRO2-S');
    expect(parThree).not.toContain('DEV1-L');
    expect(parThree).not.toContain('H100-1-80G');
    expect(await types('/scaleway/instanceType')).toEqual(expect.arrayContaining([...parTwo, ...parThree]));
  });

  it('answers 404 with the error body for an unknown region or zone, and names the zones when given a region', async () => {
    for (const url of ['/aws/eks/instanceType/eu-west-9', '/azure/aks/instanceType/eu-west-3', '/gcp/instanceType/fr-par', '/scaleway/instanceType/fr-par-9']) {
      expect(expectErrorBody(await get(url), 404).message, url).toMatch(/has no (region|zone)/);
    }
    const region = expectErrorBody(await get('/scaleway/instanceType/fr-par'), 404);
    expect(region.message).toContain('fr-par-1, fr-par-2, fr-par-3');
  });

  it('refuses a bad filter with 400', async () => {
    expectErrorBody(await get('/aws/eks/instanceType/us-east-1?gpu=SOME'), 400);
    expectErrorBody(await get('/azure/aks/instanceType/westeurope?only_meets_resource_reqs=maybe'), 400);
    expectErrorBody(await get('/aws/eks/instanceType/us-east-1?arch=ARM64'), 400);
  });

  it('lists managed database types and their instance types per region', async () => {
    expect(await results('/aws/managedDatabase/type')).toEqual([{ name: 'POSTGRESQL' }, { name: 'MYSQL' }, { name: 'MONGODB' }, { name: 'REDIS' }]);
    expect(await results('/scaleway/managedDatabase/type')).toEqual([{ name: 'POSTGRESQL' }, { name: 'MYSQL' }, { name: 'REDIS' }, { name: 'MONGODB' }]);
    const postgres = await results<{ name: string }>('/aws/managedDatabase/instanceType/eu-west-3/POSTGRESQL');
    expect(postgres).toContainEqual({ name: 'db.t3.micro' });
    expect(postgres).toContainEqual({ name: 'db.r7g.large' });
    expect(await results('/aws/managedDatabase/instanceType/eu-west-3/postgresql')).toEqual(postgres);
    expect(await results('/aws/managedDatabase/instanceType/eu-west-3/REDIS')).toContainEqual({ name: 'cache.t4g.micro' });
    expect(await results('/aws/managedDatabase/instanceType/eu-west-3/MONGODB')).toContainEqual({ name: 'db.r6g.large' });
    // DocumentDB does not run in Cape Town: a known type the region lacks lists nothing.
    expect(await results('/aws/managedDatabase/instanceType/af-south-1/MONGODB')).toEqual([]);
    expect(expectErrorBody(await get('/aws/managedDatabase/instanceType/eu-west-3/ORACLE'), 404).message).toContain('ORACLE');
    expect(expectErrorBody(await get('/aws/managedDatabase/instanceType/fr-par/POSTGRESQL'), 404).message).toContain('fr-par');
  });

  it('serves any signed-in caller (a viewer, a READ token, a member of no organization) and nobody else', async () => {
    const viewer = await ctx().signUp('viewer');
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    const readToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('read'), scope: 'READ' })}`;
    const stranger = await ctx().signUp('stranger');
    const urls = [
      '/cloudProvider',
      ...['aws', 'scaleway', 'gcp', 'azure'].flatMap((prefix) => [`/${prefix}/region`, `/${prefix}/clusterFeature`]),
      '/aws/instanceType',
      '/aws/eks/instanceType/eu-west-3',
      '/aws/managedDatabase/type',
      '/aws/managedDatabase/instanceType/eu-west-3/MYSQL',
      '/azure/aks/instanceType/francecentral',
      '/gcp/instanceType/europe-west1',
      '/scaleway/instanceType',
      '/scaleway/instanceType/nl-ams-1',
      '/scaleway/managedDatabase/type',
    ];
    expect(urls).toHaveLength(18);
    for (const url of urls) {
      const expected = (await get(url)).body;
      for (const auth of [viewer.auth, readToken, stranger.auth]) {
        const answer = await get(url, auth);
        expect(answer.statusCode, url).toBe(200);
        expect(answer.body, url).toBe(expected);
      }
      expectErrorBody(await ctx().call(undefined, { method: 'GET', url }), 401);
      expectErrorBody(await get(url, 'Bearer not-a-token'), 401);
    }
  });
});
