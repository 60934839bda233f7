import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { isForeignKeyViolation } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { CLOUD_VENDORS, type CatalogRelease, type CloudVendor, type ClusterMode } from './platform-templates.catalog.ts';
import type { CatalogSource } from './platform-templates.catalog-source.ts';
import {
  deleteClusterPlatformConfigurationRow,
  findClusterPlatformConfiguration,
  upsertClusterPlatformConfiguration,
  type ClusterPlatformConfigurationRow,
} from './platform-templates.repo.ts';
import {
  configurationProblems,
  describeContext,
  findComponent,
  layerApplies,
  releaseApplies,
  resolveComponent,
  resolveLayers,
  sensitiveKeys,
  templateView,
  type ClusterContext,
  type ComponentPreview,
  type ConfigurationInput,
} from './platform-templates.resolution.ts';
import type { ClusterPlatformConfigurationRequest } from './platform-templates.schemas.ts';

/** What this module needs to know of a cluster (the clusters module's ClusterSummary fits). */
export interface PlatformClusterSummary {
  kubernetes: string;
  cloudProvider: string;
}

/** The clusters module, seen through the one method the cluster-scoped routes need. */
export interface PlatformClusterLookup {
  findClusterSummary(organizationId: string, clusterId: string): Promise<PlatformClusterSummary | undefined>;
}

export interface PlatformTemplatesDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  catalog: CatalogSource;
  clusters: PlatformClusterLookup;
}

/** Values of one kind (profile values or runtime inputs) per component. */
type ValuesByComponent<T> = Record<string, Record<string, T>>;

/**
 * A configuration checked against its template release for one cluster context, ready to be stored. Sensitive
 * values are kept apart so that storing seals them and nothing else.
 */
export interface ValidatedPlatformConfiguration {
  templateKey: string;
  templateVersion: string;
  clusterMode: ClusterMode;
  cloudProvider: CloudVendor;
  layerSelections: Record<string, boolean>;
  managedConfig: ValuesByComponent<unknown>;
  customerProvidedInputs: ValuesByComponent<string>;
  sensitive: { managedConfig: ValuesByComponent<unknown>; customerProvidedInputs: ValuesByComponent<string> };
}

export interface ValidatePlatformConfigurationInput {
  request: ClusterPlatformConfigurationRequest;
  clusterMode: ClusterMode;
  /** A PlatformCloudVendor, or a cluster's cloud_provider (CloudVendorEnum: ON_PREMISE counts as UNKNOWN). */
  cloudProvider: string;
}

/** PlatformCloudVendor has no ON_PREMISE: a cluster on premises (or on a vendor the catalog does not name) is UNKNOWN. */
export function platformVendorOf(cloudProvider: string): CloudVendor {
  return (CLOUD_VENDORS as readonly string[]).includes(cloudProvider) ? (cloudProvider as CloudVendor) : 'UNKNOWN';
}

/** A self-managed cluster runs under the customer's own operator; every other kind is managed by the platform. */
export function clusterContextOf(cluster: PlatformClusterSummary): ClusterContext {
  return { mode: cluster.kubernetes === 'SELF_MANAGED' ? 'CUSTOMER_MANAGED' : 'PLATFORM_MANAGED', provider: platformVendorOf(cluster.cloudProvider) };
}

/** Binds the sealed values to their row: an envelope copied to another cluster or organization does not open. */
function associatedData(organizationId: string, clusterId: string): string {
  return `cluster_platform_configurations:${organizationId}:${clusterId}`;
}

/** Splits values into what may be shown and what is sensitive, by the release's field flags. */
function splitSensitive<T>(values: ValuesByComponent<T>, sensitive: Map<string, Set<string>>) {
  const visible: ValuesByComponent<T> = {};
  const hidden: ValuesByComponent<T> = {};
  for (const [component, fields] of Object.entries(values)) {
    for (const [key, value] of Object.entries(fields)) {
      const target = sensitive.get(component)?.has(key) === true ? hidden : visible;
      (target[component] ??= {})[key] = value;
    }
  }
  return { visible, hidden };
}

function isVisible(release: CatalogRelease): boolean {
  return release.status !== 'DRAFT';
}

/**
 * Platform templates and the platform configuration of clusters (SPEC.md "Platform templates", the platformBinding
 * operations of "Clusters"). The catalog is read through a CatalogSource (bundled files, a directory, or a remote
 * source); the configuration of each cluster is one row of this module's table.
 */
export function createPlatformTemplatesService(deps: PlatformTemplatesDeps) {
  const { db, clock, secrets, catalog, clusters } = deps;

  async function listPlatformTemplates(query: { clusterMode?: ClusterMode | undefined; cloudProvider?: CloudVendor | undefined }) {
    if ((query.clusterMode === undefined) !== (query.cloudProvider === undefined)) {
      const missing = query.clusterMode === undefined ? 'clusterMode' : 'cloudProvider';
      throw badRequest('clusterMode and cloudProvider must be given together, or neither', [{ field: `/${missing}`, message: 'is required with the other' }]);
    }
    const context = query.clusterMode === undefined || query.cloudProvider === undefined ? undefined : { mode: query.clusterMode, provider: query.cloudProvider };
    const loaded = await catalog.load();
    return loaded.releases
      .filter((release) => isVisible(release) && (context === undefined || releaseApplies(release, context)))
      .map((release) => templateView(release, context));
  }

  async function requireRelease(templateKey: string, templateVersion: string): Promise<CatalogRelease> {
    const release = (await catalog.load()).find(templateKey, templateVersion);
    if (release === undefined || !isVisible(release)) throw notFound(`platform template ${templateKey} version ${templateVersion} not found`);
    return release;
  }

  function requireApplicable(release: CatalogRelease, context: ClusterContext): void {
    if (!releaseApplies(release, context)) {
      throw badRequest(`platform template ${release.key} ${release.version} is not made for ${describeContext(context)}`, [
        { field: '/templateKey', message: `supports ${release.modes.join(', ')} clusters on ${release.providers.join(', ')}` },
      ]);
    }
  }

  async function resolvePlatformTemplateComponentConfiguration(
    target: { templateKey: string; templateVersion: string; componentKey: string },
    context: ClusterContext,
    preview: ComponentPreview,
  ) {
    const release = await requireRelease(target.templateKey, target.templateVersion);
    const found = findComponent(release, target.componentKey);
    if (found === undefined) throw notFound(`platform template ${release.key} ${release.version} has no component ${target.componentKey}`);
    requireApplicable(release, context);
    if (!layerApplies(found.layer, context)) {
      throw badRequest(`component ${found.component.key} is in layer ${found.layer.key}, which does not apply to ${describeContext(context)}`);
    }
    return resolveComponent(found.component, context, preview);
  }

  /**
   * Checks a configuration against its release in a cluster context (the contract createSelfManagedCluster relies on):
   * 404 for an unknown release, 400 for a configuration the release refuses, 500/503 from the catalog. A deprecated
   * release is refused for new configurations; `keepRelease` names the release a cluster is already on, which stays
   * usable for it.
   */
  async function validate(input: ValidatePlatformConfigurationInput, keepRelease?: { key: string; version: string }): Promise<ValidatedPlatformConfiguration> {
    const { request } = input;
    const context: ClusterContext = { mode: input.clusterMode, provider: platformVendorOf(input.cloudProvider) };
    const release = await requireRelease(request.templateKey, request.templateVersion);
    const staysOnRelease = keepRelease?.key === release.key && keepRelease.version === release.version;
    if (release.status === 'DEPRECATED' && !staysOnRelease) {
      throw badRequest(`platform template ${release.key} ${release.version} is deprecated; choose a published version`, [
        { field: '/templateVersion', message: 'deprecated release' },
      ]);
    }
    requireApplicable(release, context);
    const configuration: ConfigurationInput = {
      layerSelections: request.layerSelections ?? {},
      managedConfig: request.managedConfig ?? {},
      customerProvidedInputs: request.customerProvidedInputs ?? {},
    };
    const problems = configurationProblems(release, context, configuration);
    if (problems.length > 0) throw badRequest('invalid platform configuration', problems);
    const sensitive = sensitiveKeys(release);
    const profile = splitSensitive(configuration.managedConfig, sensitive.fields);
    const inputs = splitSensitive(configuration.customerProvidedInputs, sensitive.inputs);
    return {
      templateKey: release.key,
      templateVersion: release.version,
      clusterMode: context.mode,
      cloudProvider: context.provider,
      layerSelections: configuration.layerSelections,
      managedConfig: profile.visible,
      customerProvidedInputs: inputs.visible,
      sensitive: { managedConfig: profile.hidden, customerProvidedInputs: inputs.hidden },
    };
  }

  function validatePlatformConfiguration(input: ValidatePlatformConfigurationInput): Promise<ValidatedPlatformConfiguration> {
    return validate(input);
  }

  function rowOf(organizationId: string, clusterId: string, configuration: ValidatedPlatformConfiguration, now: string): ClusterPlatformConfigurationRow {
    const { sensitive } = configuration;
    const hasSecrets = Object.keys(sensitive.managedConfig).length > 0 || Object.keys(sensitive.customerProvidedInputs).length > 0;
    return {
      cluster_id: clusterId,
      organization_id: organizationId,
      template_key: configuration.templateKey,
      template_version: configuration.templateVersion,
      cluster_mode: configuration.clusterMode,
      cloud_provider: configuration.cloudProvider,
      layer_selections: writeJson(configuration.layerSelections),
      managed_config: writeJson(configuration.managedConfig),
      customer_provided_inputs: writeJson(configuration.customerProvidedInputs),
      sensitive_envelope: hasSecrets ? secrets.seal(JSON.stringify(sensitive), associatedData(organizationId, clusterId)) : null,
      created_at: now,
      updated_at: now,
    };
  }

  /** Stores (or replaces) a cluster's configuration inside the caller's transaction. */
  async function storeClusterPlatformConfiguration(
    trx: Transaction<DB>,
    input: { organizationId: string; clusterId: string; configuration: ValidatedPlatformConfiguration },
  ): Promise<void> {
    await upsertClusterPlatformConfiguration(trx, rowOf(input.organizationId, input.clusterId, input.configuration, isoTimestamp(clock)));
  }

  async function deleteClusterPlatformConfiguration(trx: Transaction<DB>, clusterId: string): Promise<void> {
    await deleteClusterPlatformConfigurationRow(trx, clusterId);
  }

  async function requireCluster(organizationId: string, clusterId: string): Promise<ClusterContext> {
    const cluster = await clusters.findClusterSummary(organizationId, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    return clusterContextOf(cluster);
  }

  function openSensitive(row: ClusterPlatformConfigurationRow): ValidatedPlatformConfiguration['sensitive'] {
    if (row.sensitive_envelope === null) return { managedConfig: {}, customerProvidedInputs: {} };
    try {
      return JSON.parse(secrets.open(row.sensitive_envelope, associatedData(row.organization_id, row.cluster_id))) as ValidatedPlatformConfiguration['sensitive'];
    } catch {
      // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the values are lost, not exposed, and
      // an update must send them again (a required one left out is then reported as missing).
      return { managedConfig: {}, customerProvidedInputs: {} };
    }
  }

  /** ClusterPlatformBindingResponse: the stored values (sensitive ones left out) and the layers as they resolve now. */
  async function view(row: ClusterPlatformConfigurationRow, context: ClusterContext) {
    const release = (await catalog.load()).find(row.template_key, row.template_version);
    if (release === undefined) {
      throw new AppError('internal', `the platform template ${row.template_key} ${row.template_version} of cluster ${row.cluster_id} is no longer in the catalog`);
    }
    const layerSelections = readJson<Record<string, boolean>>(row.layer_selections);
    return {
      clusterId: row.cluster_id,
      organizationId: row.organization_id,
      templateKey: row.template_key,
      templateVersion: row.template_version,
      layerSelections,
      managedConfig: readJson<ValuesByComponent<unknown>>(row.managed_config),
      customerProvidedInputs: readJson<ValuesByComponent<string>>(row.customer_provided_inputs),
      layers: resolveLayers(release, context, layerSelections),
    };
  }

  async function getClusterPlatformConfiguration(organizationId: string, clusterId: string) {
    const context = await requireCluster(organizationId, clusterId);
    const row = await findClusterPlatformConfiguration(db, organizationId, clusterId);
    if (row === undefined) throw notFound(`cluster ${clusterId} has no platform configuration`);
    return view(row, context);
  }

  /**
   * Sensitive values are never answered, so a client that sends back what it read must not erase them: a sensitive
   * value the request leaves out is kept from the stored configuration when the request stays on the same template
   * and the field is still sensitive there.
   */
  async function withKeptSecrets(row: ClusterPlatformConfigurationRow | undefined, request: ClusterPlatformConfigurationRequest) {
    if (row === undefined || row.template_key !== request.templateKey) return request;
    const stored = openSensitive(row);
    const release = await requireRelease(request.templateKey, request.templateVersion);
    const sensitive = sensitiveKeys(release);
    const keep = <T>(given: ValuesByComponent<T> | undefined, kept: ValuesByComponent<T>, flags: Map<string, Set<string>>) => {
      const merged: ValuesByComponent<T> = Object.fromEntries(Object.entries(given ?? {}).map(([component, values]) => [component, { ...values }]));
      for (const [component, values] of Object.entries(kept)) {
        for (const [key, value] of Object.entries(values)) {
          if (flags.get(component)?.has(key) !== true || Object.hasOwn(merged[component] ?? {}, key)) continue;
          (merged[component] ??= {})[key] = value;
        }
      }
      return merged;
    };
    return {
      ...request,
      managedConfig: keep(request.managedConfig, stored.managedConfig, sensitive.fields),
      customerProvidedInputs: keep(request.customerProvidedInputs, stored.customerProvidedInputs, sensitive.inputs),
    };
  }

  async function updateClusterPlatformConfiguration(organizationId: string, clusterId: string, request: ClusterPlatformConfigurationRequest) {
    const context = await requireCluster(organizationId, clusterId);
    const existing = await findClusterPlatformConfiguration(db, organizationId, clusterId);
    const merged = await withKeptSecrets(existing, request);
    const configuration = await validate(
      { request: merged, clusterMode: context.mode, cloudProvider: context.provider },
      existing === undefined ? undefined : { key: existing.template_key, version: existing.template_version },
    );
    const now = isoTimestamp(clock);
    const row = { ...rowOf(organizationId, clusterId, configuration, now), created_at: existing?.created_at ?? now };
    try {
      await upsertClusterPlatformConfiguration(db, row);
    } catch (error) {
      // The cluster was deleted between the lookup and the write.
      if (isForeignKeyViolation(error)) throw notFound(`cluster ${clusterId} not found`);
      throw error;
    }
    return view(row, context);
  }

  return {
    listPlatformTemplates,
    resolvePlatformTemplateComponentConfiguration,
    validatePlatformConfiguration,
    storeClusterPlatformConfiguration,
    deleteClusterPlatformConfiguration,
    getClusterPlatformConfiguration,
    updateClusterPlatformConfiguration,
  };
}

export type PlatformTemplatesService = ReturnType<typeof createPlatformTemplatesService>;
