import type { GitCredentials } from '../../git/git-access.ts';
import { notFound } from '../../lib/errors.ts';
import type { ServiceDeploymentSpec, SpecHelmChart, SpecImage } from '../../protocol/agent-protocol.ts';
import type { SnapshotVariable } from '../variables/variables.service.ts';
import type { DeploymentsService as ServiceDeploymentsService } from '../deployments/deployments.service.ts';
import { ADVANCED_SETTINGS_KINDS, advancedSettingsOf, type AdvancedSettingsKind } from './services.advanced-settings.ts';
import { storedGitSourceOf } from './services.kind-fields.ts';
import type { ServiceKindDefinition } from './services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { DatabaseConnection } from './services.service.ts';

/**
 * The spec of a service task (docs/agent-protocol.md, "Task spec"): what the cluster's agent needs to carry one
 * deployment out, read by the lease holder only. It is the deployment's snapshot (settings as deployed, variables
 * with secrets opened) plus what the agent cannot know by itself: the git source with its token, the database's
 * credentials, the hostnames the reverse proxy routes to the service, and, as intent, where its environment reaches
 * it (its internal hostname and declared ports) and the other internal hostnames its variables may name. Where those
 * names lead is the driver's placement.
 */
export interface ServiceAgentSpecDeps {
  deployments: Pick<ServiceDeploymentsService, 'deploymentSpecForAgent' | 'teardownSpecForAgent' | 'runningServiceOn' | 'runningService'>;
  kinds: readonly ServiceKindDefinition[];
  databaseConnection(serviceId: string): Promise<DatabaseConnection | undefined>;
  environmentOf(environmentId: string): Promise<{ id: string; name: string; mode: string; projectId: string } | undefined>;
  /** A container image's full reference and the registry's login, from the organization's container registry. */
  imageOf(organizationId: string, registryId: string, imageName: string, tag: string): Promise<SpecImage>;
  gitCredentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
  /** A Helm repository's URL, kind (HTTPS or OCI) and opened login, for a HELM service's chart; undefined once it is gone. */
  helmChartOf?(organizationId: string, repositoryId: string): Promise<Omit<SpecHelmChart, 'chart_name' | 'chart_version'> | undefined>;
  /** The service's custom domains whose DNS check passed. */
  verifiedDomainsOf(serviceId: string): Promise<string[]>;
  /** The service's public hostname, chosen by the services module (services.hostnames.ts); undefined once it is gone. */
  hostnameOf(serviceId: string): Promise<string | undefined>;
  /** Its internal hostname and declared ports; undefined when it declares none. */
  internalEndpointOf(serviceId: string): Promise<{ hostname: string; ports: number[] } | undefined>;
  /** The services of the environment with an internal endpoint. */
  internalPeersOf(environmentId: string): Promise<Array<{ serviceId: string; hostname: string }>>;
  openValue(variable: SnapshotVariable): string;
}

export function createServiceAgentSpecs(deps: ServiceAgentSpecDeps) {
  const definitions = new Map(deps.kinds.map((definition) => [definition.kind, definition]));

  /**
   * Only a service with a public port is reachable from outside (issue 8): the others get no route. The hostname is
   * the service's own whatever the snapshot's names (it is kept across renames); a service gone has none.
   */
  async function hostnamesOf(service: { id: string; kind: string; settings: Record<string, unknown> }): Promise<string[]> {
    const publiclyReachable = definitions.get(service.kind as ServiceKind)?.references(service.settings).publiclyReachable ?? false;
    const hostname = publiclyReachable ? await deps.hostnameOf(service.id) : undefined;
    return hostname === undefined ? [] : [hostname, ...(await deps.verifiedDomainsOf(service.id))];
  }

  /**
   * The image a CONTAINER, or a JOB with an image source, runs as deployed (its settings in the snapshot): the
   * registry names where it is pulled from. A CONTAINER keeps it at the top of its settings, a JOB in `source`
   * (services.kind-job.ts); a job built from git has none.
   */
  async function imageOfService(service: { kind: string; organizationId: string; settings: Record<string, unknown> }): Promise<SpecImage | null> {
    let where: Record<string, unknown>;
    if (service.kind === 'CONTAINER') where = service.settings;
    else if (service.kind === 'JOB' && typeof service.settings.source === 'object' && service.settings.source !== null && (service.settings.source as Record<string, unknown>).kind === 'image') {
      where = service.settings.source as Record<string, unknown>;
    } else return null;
    const { registry_id: registryId, image_name: imageName, tag } = where;
    if (typeof registryId !== 'string' || typeof imageName !== 'string' || typeof tag !== 'string') return null;
    return deps.imageOf(service.organizationId, registryId, imageName, tag);
  }

  /** The chart a HELM service installs from a Helm repository (services.kind-helm.ts stores `source.kind: repository`). */
  async function helmChartOfService(service: { kind: string; name: string; organizationId: string; settings: Record<string, unknown> }): Promise<SpecHelmChart | null> {
    const source = service.settings.source as { kind?: unknown; repository_id?: unknown; chart_name?: unknown; chart_version?: unknown } | undefined;
    if (service.kind !== 'HELM' || source?.kind !== 'repository') return null;
    const { repository_id: repositoryId, chart_name: chartName, chart_version: chartVersion } = source;
    if (typeof repositoryId !== 'string' || typeof chartName !== 'string' || typeof chartVersion !== 'string') return null;
    const repository = await deps.helmChartOf?.(service.organizationId, repositoryId);
    if (repository === undefined) throw notFound(`helm repository ${repositoryId} of service ${service.name} no longer exists`);
    return { ...repository, chart_name: chartName, chart_version: chartVersion };
  }

  const taskSpecs = {
    async serviceTaskSpec(serviceId: string, deploymentId: string): Promise<ServiceDeploymentSpec> {
      const snapshot = await deps.deployments.deploymentSpecForAgent(serviceId, deploymentId, deps.openValue);
      const environment = await deps.environmentOf(snapshot.service.environmentId);
      if (environment === undefined) throw notFound(`environment ${snapshot.service.environmentId} not found`);
      return specOf(serviceId, snapshot, environment);
    },

    /**
     * The spec of a deleted lifecycle JOB's teardown (job `jobId`), for its on_delete: its last deployment as the
     * teardown job kept it, with its environment as it was (both records may be gone). A 404 for other teardowns.
     */
    async teardownTaskSpec(serviceId: string, jobId: string): Promise<ServiceDeploymentSpec> {
      const { environment, ...snapshot } = await deps.deployments.teardownSpecForAgent(serviceId, jobId, deps.openValue);
      return specOf(serviceId, snapshot, environment);
    },
  };

  async function specOf(
    serviceId: string,
    snapshot: Awaited<ReturnType<ServiceAgentSpecDeps['deployments']['deploymentSpecForAgent']>>,
    environment: { id: string; name: string; mode: string; projectId: string },
  ): Promise<ServiceDeploymentSpec> {
    const { service } = snapshot;
    const source = storedGitSourceOf(service.settings);
    let credentials: GitCredentials | null = null;
    if (source?.git_token_id !== null && source?.git_token_id !== undefined) {
      credentials = (await deps.gitCredentialsOf(service.organizationId, source.git_token_id)) ?? null;
      if (credentials === null) throw notFound(`git token ${source.git_token_id} of service ${service.name} no longer exists`);
    }
    const database = await deps.databaseConnection(serviceId);
    const internal = await deps.internalEndpointOf(serviceId);
    return {
      ...snapshot,
      // Every advanced setting of the kind, defaults included: a driver reads keys and keeps no default of its own.
      service: ADVANCED_SETTINGS_KINDS.includes(service.kind as AdvancedSettingsKind)
        ? { ...service, settings: { ...service.settings, advanced_settings: advancedSettingsOf(service.kind as AdvancedSettingsKind, service.settings) } }
        : service,
      environment: { id: environment.id, name: environment.name, mode: environment.mode, project_id: environment.projectId },
      image: await imageOfService(service),
      helm_chart: await helmChartOfService(service),
      git:
        source === null
          ? null
          : { url: source.url, branch: source.branch, commit_id: snapshot.git_commit_id, root_path: source.root_path, credentials },
      database:
        database === undefined
          ? null
          : {
              type: database.type,
              version: database.version,
              username: database.username,
              password: database.password,
              database_name: database.databaseName,
              shared: database.shared,
            },
      routing: {
        hostnames: await hostnamesOf(service),
        internal: internal ?? null,
        peers: (await deps.internalPeersOf(service.environmentId)).map((peer) => ({ service_id: peer.serviceId, hostname: peer.hostname })),
      },
    };
  }

  return {
    ...taskSpecs,

    /**
     * The service's own public host name while its running deployment routes one (it has a public port), and the
     * cluster it runs on: what gets a certificate for that name (docs/https.md). Undefined otherwise.
     */
    async routedHostnameOf(serviceId: string): Promise<{ hostname: string; clusterId: string } | undefined> {
      const service = await deps.deployments.runningService(serviceId);
      if (service === undefined) return undefined;
      const [hostname] = await hostnamesOf(service);
      return hostname === undefined ? undefined : { hostname, clusterId: service.clusterId };
    },

    /**
     * The routes of these services now, for those running on the cluster: as their running deployment routed them
     * (its public port), on the service's hostname and the custom domains verified now (docs/agent-protocol.md,
     * "Routes"). A running service whose hostname changed since its deployment (an upgrade to per-service hostnames)
     * is moved to the new one here.
     */
    async routesOf(clusterId: string, serviceIds: readonly string[]): Promise<Array<{ service_id: string; hostnames: string[] }>> {
      const routes: Array<{ service_id: string; hostnames: string[] }> = [];
      for (const serviceId of new Set(serviceIds)) {
        const service = await deps.deployments.runningServiceOn(serviceId, clusterId);
        if (service === undefined) continue;
        routes.push({ service_id: serviceId, hostnames: await hostnamesOf(service) });
      }
      return routes;
    },
  };
}
export type ServiceAgentSpecs = ReturnType<typeof createServiceAgentSpecs>;
