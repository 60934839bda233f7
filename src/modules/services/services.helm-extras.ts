import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { badRequest, notFound } from '../../lib/errors.ts';
import { ListOf, Uuid } from '../../protocol/wire.ts';
import { chartAt, type GitFiles } from './services.git-files.ts';
import { GitRepositoryRequest, settingsOf } from './services.kind-fields.ts';
import type { HelmSettings } from './services.kind-helm.ts';
import type { StoredService } from './services.kinds.ts';
import { urlOf, type ServiceLinksDeps } from './services.links.ts';
import type { Link } from './services.schemas.ts';

/**
 * A Helm chart's operations beside its settings (docs/service-extras.md "Helm charts"):
 *
 * - listHelmLinks: where the chart is reached from outside, as listApplicationLinks answers for an application: its
 *   public hostname, then its verified custom domains, on the port the Ingress routes (its default HTTP or gRPC port,
 *   as the Kubernetes driver's Ingress chooses it); none without such a port.
 * - getHelmKubernetesServices: the chart's Kubernetes Services as its settings declare them (each port names the
 *   Service and port it exposes). Slipway keeps no copy of what a chart rendered, so what is not declared is not known
 *   here; a chart's declared ports are exactly what Slipway routes to.
 * - createHelmDefaultValues: the default values.yaml of a chart, before a service is created from it. A chart in git
 *   is read from its branch head (services.git-files.ts); a chart of a Helm repository is asked of the control plane's
 *   helm (`helm show values`, SLIPWAY_HELM_BINARY, else `helm` on the PATH), in a private home of its own removed
 *   after, with the repository's login on helm's standard input — a 400 says so when there is no helm.
 */

/** The reference's KubernetesService, as far as declared ports tell it. */
const KubernetesService = Type.Object(
  {
    metadata: Type.Object({ name: Type.String() }, { additionalProperties: false }),
    service_spec: Type.Object(
      {
        ports: Type.Array(Type.Object({ name: Type.Optional(Type.String()), port: Type.Integer() }, { additionalProperties: false })),
        selectors: Type.Array(Type.Object({ key: Type.String(), value: Type.String() }, { additionalProperties: false })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'KubernetesService', additionalProperties: false },
);
export const KubernetesServiceResponseList = ListOf(KubernetesService, 'KubernetesServiceResponseList');

/** Chart names and versions go to helm as arguments: never one that could read as a flag. */
const ChartName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });
const ChartVersion = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9.+_~^<>=*-]*$' });

export const HelmDefaultValuesRequest = Type.Object(
  {
    source: Type.Object(
      {
        git_repository: Type.Optional(GitRepositoryRequest),
        helm_repository: Type.Optional(Type.Object({ repository: Uuid, chart_name: ChartName, chart_version: ChartVersion }, { additionalProperties: false })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'HelmDefaultValuesRequest', additionalProperties: false },
);
type HelmDefaultValuesBody = Static<typeof HelmDefaultValuesRequest>;

export const HELM_NOT_INSTALLED_MESSAGE =
  "reading a Helm repository's chart needs helm on the control plane, and there is none: install helm (version 3 or 4) on its PATH or set SLIPWAY_HELM_BINARY";

/** A chart of a Helm repository, as the helm repositories module opens it. */
export interface RepositoryChart {
  repository_url: string;
  kind: 'HTTPS' | 'OCI';
  credentials: { username: string; password: string } | null;
  skip_tls_verification: boolean;
}

export interface HelmExtrasDeps extends Omit<ServiceLinksDeps, 'services'> {
  services: {
    requireService(kind: 'HELM', serviceId: string): Promise<StoredService>;
    publicHostnameOf(serviceId: string): Promise<string | undefined>;
  };
  organizationOf(environmentId: string): Promise<string | undefined>;
  /** The helm repositories module's opened repository; undefined when the organization has no such repository. */
  chartSourceOf(organizationId: string, repositoryId: string): Promise<RepositoryChart | undefined>;
  gitFiles: GitFiles;
  /** SLIPWAY_HELM_BINARY; `helm` on the PATH when unset. */
  helmBinary: string | undefined;
}

const HELM_TIMEOUT_MS = 60_000;

interface HelmResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

class HelmNotInstalled extends Error {}

function runHelm(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: string | undefined): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env, stdio: ['pipe', 'pipe', 'pipe'], signal: AbortSignal.timeout(HELM_TIMEOUT_MS) });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' || error.code === 'EACCES' ? new HelmNotInstalled(error.message) : error));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }));
    child.stdin.end(stdin ?? '');
  });
}

/** `helm show values` of a repository's chart, in a home of its own: no cache, config or login outlives the call. */
async function showRepositoryValues(binary: string, chart: RepositoryChart, chartName: string, chartVersion: string): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'slipway-helm-values-'));
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
      KUBECONFIG: path.join(home, 'no-kubeconfig'),
    };
    const login = chart.credentials;
    const helm = async (what: string, args: string[], stdin?: string): Promise<string> => {
      let result: HelmResult;
      try {
        result = await runHelm(binary, args, env, stdin);
      } catch (error) {
        if (error instanceof HelmNotInstalled) throw badRequest(HELM_NOT_INSTALLED_MESSAGE);
        throw error;
      }
      if (result.code === 0) return result.stdout;
      let said = result.stderr.trim().split('\n').filter((line) => line.trim() !== '').slice(-3).join(' ');
      if (login !== null && login.password !== '') said = said.replaceAll(login.password, '***');
      throw badRequest(`${what} failed: ${said === '' ? 'helm said nothing' : said}`, [{ field: '/source/helm_repository', message: 'the chart could not be read' }]);
    };
    const tls = chart.skip_tls_verification ? ['--insecure-skip-tls-verify'] : [];
    let reference: string;
    if (chart.kind === 'HTTPS') {
      const loginFlags = login === null ? [] : ['--username', login.username, '--password-stdin'];
      await helm(`reading the chart repository ${chart.repository_url}`, ['repo', 'add', 'slipway-chart', chart.repository_url, ...loginFlags, ...tls], login?.password);
      reference = `slipway-chart/${chartName}`;
    } else {
      const location = chart.repository_url.replace(/^oci:\/\//, '').replace(/\/+$/, '');
      if (login !== null) {
        const host = location.split('/')[0] ?? location;
        await helm(`signing in to the registry ${host}`, ['registry', 'login', host, '--username', login.username, '--password-stdin', ...(chart.skip_tls_verification ? ['--insecure'] : [])], login.password);
      }
      reference = `oci://${location}/${chartName}`;
    }
    return await helm(`reading chart ${chartName} ${chartVersion}`, ['show', 'values', reference, '--version', chartVersion, ...tls]);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** The port the chart's Ingress routes: its default HTTP or gRPC port, else its first one (kubernetes-helm.ts). */
function routedPort(settings: HelmSettings): HelmSettings['ports'][number] | undefined {
  const web = settings.ports.filter((port) => port.protocol === 'HTTP' || port.protocol === 'GRPC');
  return web.find((port) => port.is_default) ?? web[0];
}

export function createHelmExtras(deps: HelmExtrasDeps) {
  return {
    async listHelmLinks(helmId: string): Promise<Array<Static<typeof Link>>> {
      const service = await deps.services.requireService('HELM', helmId);
      const port = routedPort(settingsOf<HelmSettings>(service.settings));
      if (port === undefined) return [];
      const hostname = await deps.services.publicHostnameOf(service.id);
      if (hostname === undefined) throw notFound(`helm ${helmId} not found`);
      // A wildcard domain names many hosts, none of which is a URL to open.
      const domains = (await deps.verifiedDomainsOf(service.id)).filter((domain) => !domain.startsWith('*.'));
      const httpsPort = deps.https?.port();
      const secure = httpsPort === undefined || deps.https === undefined ? new Set<string>() : await deps.https.servedHostnames([hostname, ...domains]);
      const link = (host: string, platform: boolean): Static<typeof Link> => {
        const served = httpsPort !== undefined && secure.has(host);
        const externalPort = served ? httpsPort : deps.appsPort();
        return {
          service_id: service.id,
          service_type: 'HELM',
          url: urlOf(served ? 'https' : 'http', host, externalPort),
          internal_port: port.internal_port,
          external_port: externalPort,
          is_platform_domain: platform,
          is_default: platform,
        };
      };
      return [link(hostname, true), ...domains.map((domain) => link(domain, false))];
    },

    /** One Service per name the chart's ports declare, with the ports declared on it, in their order. */
    async getHelmKubernetesServices(helmId: string): Promise<Array<Static<typeof KubernetesService>>> {
      const service = await deps.services.requireService('HELM', helmId);
      const byName = new Map<string, Static<typeof KubernetesService>>();
      for (const port of settingsOf<HelmSettings>(service.settings).ports) {
        const name = port.namespace === null ? port.service_name : `${port.namespace}/${port.service_name}`;
        const entry = byName.get(name) ?? { metadata: { name: port.service_name }, service_spec: { ports: [], selectors: [] } };
        if (!entry.service_spec.ports.some((known) => known.port === port.internal_port)) entry.service_spec.ports.push({ name: port.name, port: port.internal_port });
        byName.set(name, entry);
      }
      return [...byName.values()];
    },

    async createHelmDefaultValues(environmentId: string, body: HelmDefaultValuesBody): Promise<string> {
      const organizationId = await deps.organizationOf(environmentId);
      if (organizationId === undefined) throw notFound(`environment ${environmentId} not found`);
      const { git_repository: git, helm_repository: repository } = body.source;
      if ((git === undefined) === (repository === undefined)) {
        throw badRequest('name exactly one source: git_repository or helm_repository', [{ field: '/source', message: 'exactly one of git_repository, helm_repository' }]);
      }
      if (git !== undefined) {
        const source = await deps.gitFiles.sourceOf(organizationId, git, '/source/git_repository');
        return deps.gitFiles.withSourceFiles(organizationId, source, '/source/git_repository', async (file) => {
          // The chart must be there; a chart without a values.yaml has no defaults.
          await chartAt(file, source.root_path, '/source/git_repository');
          return (await file('values.yaml')) ?? '';
        });
      }
      const helmRepository = repository as NonNullable<typeof repository>;
      const chart = await deps.chartSourceOf(organizationId, helmRepository.repository);
      if (chart === undefined) throw notFound(`helm repository ${helmRepository.repository} (/source/helm_repository/repository) does not exist in this organization`);
      return showRepositoryValues(deps.helmBinary ?? 'helm', chart, helmRepository.chart_name, helmRepository.chart_version);
    },
  };
}

export type HelmExtras = ReturnType<typeof createHelmExtras>;
