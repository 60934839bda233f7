import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { CONTAINER_REGISTRY_KINDS } from '../container-registries/container-registries.schemas.ts';
import { REQUIRED_REGISTRY_CONFIG } from '../container-registries/container-registries.service.ts';
import { HELM_REPOSITORY_KINDS } from '../helm-repositories/helm-repositories.schemas.ts';
import { REQUIRED_HELM_REPOSITORY_CONFIG } from '../helm-repositories/helm-repositories.service.ts';
import { TERRAFORM_ENGINES, TERRAFORM_VERSIONS } from '../services/services.kind-terraform.ts';
import { AvailableContainerRegistryResponseList, AvailableHelmRepositoryResponseList, TerraformVersionResponseList } from './organization-listings.schemas.ts';

/**
 * What this Slipway supports, the same for every organization: container registry and Helm repository kinds with the
 * configuration each requires, and the Terraform/OpenTofu versions. Read from the tables the registries, repositories
 * and the Terraform kind validate against, so the catalogs cannot drift from what is accepted.
 */
function availableKinds<K extends string>(kinds: readonly K[], required: Readonly<Record<K, Readonly<Record<string, string | undefined>>>>) {
  return kinds.map((kind) => {
    const config = required[kind];
    return { kind, required_config: { ...config }, is_mandatory: Object.keys(config).length > 0 };
  });
}

export function registerCatalogRoutes(app: FastifyTypeBox): void {
  app.get(
    '/availableContainerRegistry',
    {
      schema: {
        operationId: 'listAvailableContainerRegistry',
        summary: 'List the container registry kinds Slipway supports',
        description:
          'Every kind createContainerRegistry accepts, with the config fields it requires (field → what to give) and ' +
          'is_mandatory when there are any; the other kinds take an optional username and password.',
        tags: ['Container Registries'],
        response: { 200: AvailableContainerRegistryResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'catalogs:read', target: 'none' } },
    },
    async () => ({ results: availableKinds(CONTAINER_REGISTRY_KINDS, REQUIRED_REGISTRY_CONFIG) }),
  );

  app.get(
    '/availableHelmRepository',
    {
      schema: {
        operationId: 'listAvailableHelmRepository',
        summary: 'List the Helm repository kinds Slipway supports',
        description:
          'Every kind createHelmRepository accepts, with the config fields it requires (field → what to give) and ' +
          'is_mandatory when there are any; the other kinds take an optional username and password.',
        tags: ['Helm Repositories'],
        response: { 200: AvailableHelmRepositoryResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'catalogs:read', target: 'none' } },
    },
    async () => ({ results: availableKinds(HELM_REPOSITORY_KINDS, REQUIRED_HELM_REPOSITORY_CONFIG) }),
  );

  app.get(
    '/terraform/availableVersion',
    {
      schema: {
        operationId: 'listTerraformVersions',
        summary: 'List the Terraform and OpenTofu versions Slipway runs',
        description:
          'The versions a Terraform service\'s provider_version.explicit_version may name, per engine, newest first; ' +
          'any other explicit version is refused with 400.',
        tags: ['Terraform Main Calls'],
        response: { 200: TerraformVersionResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'catalogs:read', target: 'none' } },
    },
    async () => ({ results: TERRAFORM_ENGINES.flatMap((engine) => TERRAFORM_VERSIONS[engine].map((version) => ({ engine, version }))) }),
  );
}
