import { expect, it } from 'vitest';
import { CONTAINER_REGISTRY_KINDS } from '../src/modules/container-registries/container-registries.schemas.ts';
import { REQUIRED_REGISTRY_CONFIG } from '../src/modules/container-registries/container-registries.service.ts';
import { HELM_REPOSITORY_KINDS } from '../src/modules/helm-repositories/helm-repositories.schemas.ts';
import { REQUIRED_HELM_REPOSITORY_CONFIG } from '../src/modules/helm-repositories/helm-repositories.service.ts';
import { TERRAFORM_VERSIONS } from '../src/modules/services/services.kind-terraform.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * What Slipway supports (issue 24): listAvailableContainerRegistry, listAvailableHelmRepository and
 * listTerraformVersions answer the tables the registries, repositories and the Terraform kind validate against, so
 * what the catalogs say is required is exactly what a create refuses without, and a version they do not list is
 * refused.
 */

interface AvailableKind {
  kind: string;
  required_config: Record<string, string>;
  is_mandatory: boolean;
}

describeEachDatabase('available kinds and versions', (ctx) => {
  let owner: TestUser;
  let organizationId: string;

  it('sets up an owner and an organization', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
  });

  it('lists every container registry kind with the config its creation requires, and a create without it is refused on exactly those fields', async () => {
    const answer = await ctx().call(owner.auth, { method: 'GET', url: '/availableContainerRegistry' });
    expect(answer.statusCode, answer.body).toBe(200);
    const kinds = answer.json<{ results: AvailableKind[] }>().results;
    expect(kinds.map((entry) => entry.kind)).toEqual([...CONTAINER_REGISTRY_KINDS]);
    expect(kinds.find((entry) => entry.kind === 'ECR')).toEqual({
      kind: 'ECR',
      required_config: { aws_credentials_id: expect.any(String), region: expect.any(String) },
      is_mandatory: true,
    });
    expect(kinds.find((entry) => entry.kind === 'DOCKER_HUB')).toEqual({ kind: 'DOCKER_HUB', required_config: {}, is_mandatory: false });
    for (const entry of kinds.filter((candidate) => candidate.is_mandatory)) {
      const refused = expectErrorBody(
        await ctx().call(owner.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/containerRegistry`,
          payload: { name: uniqueName('registry'), kind: entry.kind, url: 'https://registry.example.com', config: {} },
        }),
        400,
      );
      expect(refused.details?.map((detail) => detail.field).sort(), entry.kind).toEqual(Object.keys(entry.required_config).map((key) => `/config/${key}`).sort());
      expect(entry.required_config).toEqual(REQUIRED_REGISTRY_CONFIG[entry.kind as keyof typeof REQUIRED_REGISTRY_CONFIG]);
    }
  });

  it('lists every Helm repository kind with the config its creation requires, and a create without it is refused on exactly those fields', async () => {
    const answer = await ctx().call(owner.auth, { method: 'GET', url: '/availableHelmRepository' });
    expect(answer.statusCode, answer.body).toBe(200);
    const kinds = answer.json<{ results: AvailableKind[] }>().results;
    expect(kinds.map((entry) => entry.kind)).toEqual([...HELM_REPOSITORY_KINDS]);
    expect(kinds.find((entry) => entry.kind === 'HTTPS')).toEqual({ kind: 'HTTPS', required_config: {}, is_mandatory: false });
    const mandatory = kinds.filter((candidate) => candidate.is_mandatory);
    expect(mandatory.map((entry) => entry.kind).sort()).toEqual(['OCI_ECR', 'OCI_SCALEWAY_CR']);
    for (const entry of mandatory) {
      const refused = expectErrorBody(
        await ctx().call(owner.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/helmRepository`,
          payload: { name: uniqueName('charts'), kind: entry.kind, url: 'oci://registry.example.com/charts', config: {} },
        }),
        400,
      );
      expect(refused.details?.map((detail) => detail.field).sort(), entry.kind).toEqual(Object.keys(entry.required_config).map((key) => `/config/${key}`).sort());
      expect(entry.required_config).toEqual(REQUIRED_HELM_REPOSITORY_CONFIG[entry.kind as keyof typeof REQUIRED_HELM_REPOSITORY_CONFIG]);
    }
  });

  it('serves /terraform/availableVersion (not taken for a Terraform id), and a Terraform service takes only a listed version of its engine', async () => {
    const answer = await ctx().call(owner.auth, { method: 'GET', url: '/terraform/availableVersion' });
    expect(answer.statusCode, answer.body).toBe(200);
    const versions = answer.json<{ results: Array<{ engine: string; version: string }> }>().results;
    expect(versions).toEqual([
      ...TERRAFORM_VERSIONS.TERRAFORM.map((version) => ({ engine: 'TERRAFORM', version })),
      ...TERRAFORM_VERSIONS.OPEN_TOFU.map((version) => ({ engine: 'OPEN_TOFU', version })),
    ]);
    expect(versions.length).toBeGreaterThan(4);

    const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
    const cluster = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
    });
    const environment = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/environment`,
      payload: { name: uniqueName('env'), cluster: cluster.json<{ id: string }>().id },
    });
    expect(environment.statusCode, environment.body).toBe(201);
    const create = (engine: string, version: string) =>
      ctx().call(owner.auth, {
        method: 'POST',
        url: `/environment/${environment.json<{ id: string }>().id}/terraform`,
        payload: {
          name: uniqueName('infra'),
          terraform_files_source: { git_repository: { url: 'https://github.com/acme/infra.git', provider: 'GITHUB', branch: 'main', root_path: '/' } },
          engine,
          provider_version: { read_from_terraform_block: false, explicit_version: version },
        },
      });
    const tofu = versions.find((entry) => entry.engine === 'OPEN_TOFU')?.version ?? '';
    const terraform = versions.find((entry) => entry.engine === 'TERRAFORM')?.version ?? '';
    expect((await create('OPEN_TOFU', tofu)).statusCode).toBe(201);
    const terraformService = await create('TERRAFORM', terraform);
    expect(terraformService.statusCode).toBe(201);
    // Switching the engine keeps the version only when the new engine has it.
    const edit = (payload: Record<string, unknown>) =>
      ctx().call(owner.auth, {
        method: 'PUT',
        url: `/terraform/${terraformService.json<{ id: string }>().id}`,
        payload: {
          name: terraformService.json<{ name: string }>().name,
          terraform_files_source: { git_repository: { url: 'https://github.com/acme/infra.git', provider: 'GITHUB', branch: 'main', root_path: '/' } },
          ...payload,
        },
      });
    expectErrorBody(await edit({ engine: 'OPEN_TOFU' }), 400);
    const switched = await edit({ engine: 'OPEN_TOFU', provider_version: { read_from_terraform_block: false, explicit_version: tofu } });
    expect(switched.statusCode, switched.body).toBe(200);
    expect(switched.json()).toMatchObject({ engine: 'OPEN_TOFU', provider_version: { read_from_terraform_block: false, explicit_version: tofu } });
    const unlisted = expectErrorBody(await create('TERRAFORM', '1.3.0'), 400);
    expect(unlisted.details).toEqual([{ field: '/provider_version/explicit_version', message: `one of ${TERRAFORM_VERSIONS.TERRAFORM.join(', ')}` }]);
    // A Terraform version is not an OpenTofu one: the engine's own list decides.
    expectErrorBody(await create('OPEN_TOFU', terraform), 400);
  });

  it('needs a signed-in caller', async () => {
    for (const url of ['/availableContainerRegistry', '/availableHelmRepository', '/terraform/availableVersion']) {
      expectErrorBody(await ctx().call(undefined, { method: 'GET', url }), 401);
    }
  });
});
