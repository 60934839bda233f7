import { Type, type Static } from 'typebox';
import { parse as parseYaml } from 'yaml';
import { ListOf, Nullable, Uuid } from '../../protocol/wire.ts';
import { badRequest, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import {
  AnnotationsGroupResponseList,
  annotationsGroupsResponse,
  GitRepositoryRequest,
  GitRepositoryResponse,
  gitSourceFrom,
  gitSourceResponse,
  groupIdsFrom,
  GroupReferenceList,
  kindWrites,
  LabelsGroupResponseList,
  labelsGroupsResponse,
  LIMITS,
  PORT_PROTOCOLS,
  ServiceDescription,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  settingsOf,
  type StoredGitSource,
  withoutDefaults,
} from './services.kind-fields.ts';
import { IconUri } from './services.kind-workload.ts';
import type { LinkedRecords, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * HELM: a chart installed into the environment's namespace, from one of the organization's Helm repositories
 * (chart name + version) or from a git repository (the chart's directory). The reference lists HELM among the
 * service types but not its request; the shape follows the original product's HelmRequest in the reference's
 * style. Rules (docs/service-kinds.md):
 * - exactly one source; a repository source names a repository of the organization, a chart name (DNS label) and
 *   a SemVer version;
 * - values overrides: `set` / `set_string` / `set_json` pairs (Helm's --set family: keys are value paths, set_json
 *   values must be JSON) and raw values files (YAML mappings, each parsed here so a broken file fails at once);
 * - `arguments` are extra `--flag[=value]` options of helm upgrade; the flags Slipway itself sets (namespace,
 *   cluster access, values files, post-renderers) are refused;
 * - ports name the chart's Kubernetes services to expose: each one is a public entry point (that is what a Helm
 *   port is for), so a chart with ports is publicly reachable.
 */

const DEFAULT_ICON = 'app://slipway-console/helm';
const MAX_VALUES_FILES = 10;
const MAX_VALUES_FILE_BYTES = 262_144;
const MAX_OVERRIDES = 200;

const DnsLabel = Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$' });
/** SemVer 2 as Helm requires of chart versions (a leading v is tolerated, as Helm does). */
const ChartVersion = Type.String({ minLength: 1, maxLength: 128, pattern: '^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$' });
/** A Helm value path: `image.tag`, `ingress.hosts[0].host`, `podAnnotations.example\.com/x`. */
const ValuePath = Type.String({ minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_.\\[\\]\\\\/-]+$' });
const OverrideValue = Type.String({ maxLength: 16_384, pattern: '^[^\\x00]*$' });
const OverridePairs = Type.Array(Type.Tuple([ValuePath, OverrideValue]), { maxItems: MAX_OVERRIDES });

/** Flags Slipway passes itself: a chart may not point helm at another namespace, cluster or renderer. */
const RESERVED_HELM_FLAGS = new Set([
  '--namespace', '-n', '--kubeconfig', '--kube-context', '--kube-apiserver', '--kube-token', '--kube-as-user', '--kube-as-group',
  '--kube-ca-file', '--kube-insecure-skip-tls-verify', '--kube-tls-server-name', '--values', '-f', '--set', '--set-string', '--set-json',
  '--set-file', '--set-literal', '--post-renderer', '--post-renderer-args', '--repo', '--version', '--registry-config', '--repository-config',
  '--repository-cache', '--plugins',
]);

const sourceSchema = Type.Object(
  {
    git_repository: Type.Optional(Nullable(GitRepositoryRequest)),
    helm_repository: Type.Optional(
      Nullable(Type.Object({ repository: Uuid, chart_name: DnsLabel, chart_version: ChartVersion }, { additionalProperties: false })),
    ),
  },
  { additionalProperties: false },
);

const ValuesFile = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._-]+$' }), content: Type.String({ maxLength: MAX_VALUES_FILE_BYTES, pattern: '^[^\\x00]*$' }) },
  { additionalProperties: false },
);

const valuesOverrideSchema = Type.Object(
  {
    set: Type.Optional(OverridePairs),
    set_string: Type.Optional(OverridePairs),
    set_json: Type.Optional(OverridePairs),
    file: Type.Optional(Nullable(Type.Object({ raw: Type.Object({ values: Type.Array(ValuesFile, { maxItems: MAX_VALUES_FILES }) }, { additionalProperties: false }) }, { additionalProperties: false }))),
  },
  { additionalProperties: false },
);

const HelmPortRequest = Type.Object(
  {
    name: Type.Optional(DnsLabel),
    internal_port: Type.Integer({ minimum: 1, maximum: 65_535 }),
    external_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_535 })),
    service_name: DnsLabel,
    namespace: Type.Optional(DnsLabel),
    protocol: Type.Optional(Type.Enum(PORT_PROTOCOLS, { default: 'HTTP' })),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const helmFields = {
  description: Type.Optional(ServiceDescription),
  timeout_sec: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, default: 600 })),
  auto_preview: Type.Optional(Type.Boolean({ default: true })),
  auto_deploy: Type.Optional(Type.Boolean({ default: true })),
  source: sourceSchema,
  allow_cluster_wide_resources: Type.Optional(Type.Boolean({ default: false })),
  arguments: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 1024, pattern: '^-[^\\x00-\\x1f\\x7f]*$' }), { maxItems: 50 })),
  values_override: Type.Optional(valuesOverrideSchema),
  ports: Type.Optional(Type.Array(HelmPortRequest, { maxItems: LIMITS.ports })),
  annotations_groups: Type.Optional(GroupReferenceList),
  labels_groups: Type.Optional(GroupReferenceList),
  icon_uri: Type.Optional(IconUri),
};

export const HelmRequest = Type.Object(
  { name: ServiceName, ...helmFields },
  {
    $id: 'HelmRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'search',
        description: 'Meilisearch for the catalogue',
        source: {
          git_repository: { url: 'https://github.com/acme/web-shop', provider: 'GITHUB', branch: 'main', root_path: '/charts/search' },
        },
        values_override: { set: [['replicaCount', '2']] },
        arguments: ['--wait'],
      },
    ],
  },
);
type HelmBody = Static<typeof HelmRequest>;
const HelmEditRequest = Type.Object({ name: ServiceName, ...withoutDefaults(helmFields) }, { $id: 'HelmEditRequest', additionalProperties: false });
type HelmEditBody = Static<typeof HelmEditRequest>;

const Pairs = Type.Array(Type.Tuple([Type.String(), Type.String()]));

export const HelmResponse = Type.Object(
  {
    ...ServiceResponseFields,
    timeout_sec: Type.Integer(),
    auto_preview: Type.Boolean(),
    auto_deploy: Type.Boolean(),
    /**
     * The reference's response shape (not the request's): `git` or `repository`. A repository's name and URL are
     * absent only when it was deleted meanwhile (deleting one still in use is refused).
     */
    source: Type.Object({
      git: Type.Optional(Type.Object({ git_repository: GitRepositoryResponse })),
      repository: Type.Optional(
        Type.Object({
          chart_name: Type.String(),
          chart_version: Type.String(),
          repository: Type.Object({ id: Uuid, name: Type.Optional(Type.String()), url: Type.Optional(Type.String()) }),
        }),
      ),
    }),
    allow_cluster_wide_resources: Type.Boolean(),
    arguments: Type.Array(Type.String()),
    values_override: Type.Object({
      set: Pairs,
      set_string: Pairs,
      set_json: Pairs,
      file: Nullable(Type.Object({ raw: Type.Object({ values: Type.Array(Type.Object({ name: Type.String(), content: Type.String() })) }) })),
    }),
    // The reference's HelmPortResponseWithServiceName (`port_type` its discriminator); Slipway's ports always name a
    // service. A port of the environment's own namespace carries no `namespace` (the reference's is not nullable).
    ports: Type.Array(
      Type.Object({
        id: Uuid,
        port_type: Type.Literal('SERVICE_NAME'),
        name: Type.String(),
        internal_port: Type.Integer(),
        external_port: Type.Integer(),
        service_name: Type.String(),
        namespace: Type.Optional(Type.String()),
        protocol: Type.Enum(PORT_PROTOCOLS),
        is_default: Type.Boolean(),
      }),
    ),
    annotations_groups: AnnotationsGroupResponseList,
    labels_groups: LabelsGroupResponseList,
    icon_uri: Type.String(),
    service_type: Type.Literal('HELM'),
  },
  {
    $id: 'HelmResponse',
    examples: [
      {
        id: 'f6d3a8c1-7b4e-4f92-a0c5-3d9e1b6f8a25',
        created_at: '2026-03-02T11:27:10.501Z',
        updated_at: '2026-03-02T11:27:10.501Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'search',
        description: 'Meilisearch for the catalogue',
        timeout_sec: 600,
        auto_preview: true,
        auto_deploy: true,
        source: {
          git: {
            git_repository: {
              provider: 'GITHUB',
              owner: 'acme',
              url: 'https://github.com/acme/web-shop',
              name: 'web-shop',
              branch: 'main',
              root_path: '/charts/search',
              git_token_id: null,
            },
          },
        },
        allow_cluster_wide_resources: false,
        arguments: ['--wait'],
        values_override: { set: [['replicaCount', '2']], set_string: [], set_json: [], file: null },
        ports: [],
        annotations_groups: [],
        labels_groups: [],
        icon_uri: 'app://slipway-console/helm',
        service_type: 'HELM',
      },
    ],
  },
);
export const HelmResponseList = ListOf(HelmResponse, 'HelmResponseList');

type StoredHelmSource =
  | { kind: 'git'; git_repository: StoredGitSource }
  | { kind: 'repository'; repository_id: string; chart_name: string; chart_version: string };

interface StoredHelmPort {
  id: string;
  name: string;
  internal_port: number;
  external_port: number;
  service_name: string;
  namespace: string | null;
  protocol: (typeof PORT_PROTOCOLS)[number];
  is_default: boolean;
}

interface StoredValuesOverride {
  set: [string, string][];
  set_string: [string, string][];
  set_json: [string, string][];
  files: { name: string; content: string }[];
}

export interface HelmSettings {
  timeout_sec: number;
  auto_preview: boolean;
  auto_deploy: boolean;
  source: StoredHelmSource;
  allow_cluster_wide_resources: boolean;
  arguments: string[];
  values_override: StoredValuesOverride;
  ports: StoredHelmPort[];
  annotations_groups: string[];
  labels_groups: string[];
  icon_uri: string;
}

async function helmSourceFrom(source: HelmEditBody['source'] | undefined, current: StoredHelmSource | undefined, context: ServiceKindContext): Promise<StoredHelmSource> {
  if (source === undefined) {
    if (current === undefined) throw badRequest('a Helm service needs a source', [{ field: '/source', message: 'required' }]);
    return current;
  }
  const git = source.git_repository ?? null;
  const repository = source.helm_repository ?? null;
  if ((git === null) === (repository === null)) throw badRequest('a Helm service has exactly one source', [{ field: '/source', message: 'set exactly one of git_repository, helm_repository' }]);
  if (git !== null) return { kind: 'git', git_repository: await gitSourceFrom(git, context, '/source/git_repository') };
  const chart = repository as NonNullable<typeof repository>;
  if (!(await context.helmRepositoryExists(chart.repository))) {
    throw notFound(`helm repository ${chart.repository} (source.helm_repository.repository) does not exist in this organization`);
  }
  return { kind: 'repository', repository_id: chart.repository, chart_name: chart.chart_name, chart_version: chart.chart_version.replace(/^v/, '') };
}

function argumentsFrom(args: string[]): string[] {
  const problems: FieldProblem[] = [];
  args.forEach((argument, index) => {
    const flag = argument.split('=')[0] as string;
    if (RESERVED_HELM_FLAGS.has(flag)) problems.push({ field: `/arguments/${index}`, message: `${flag} is set by Slipway` });
  });
  if (problems.length > 0) throw badRequest('some helm arguments are reserved', problems);
  return args;
}

function valuesOverrideFrom(body: NonNullable<HelmEditBody['values_override']>): StoredValuesOverride {
  const problems: FieldProblem[] = [];
  const setJson = body.set_json ?? [];
  setJson.forEach(([, value], index) => {
    try {
      JSON.parse(value);
    } catch {
      problems.push({ field: `/values_override/set_json/${index}/1`, message: 'must be JSON' });
    }
  });
  const files = body.file?.raw.values ?? [];
  const names = new Set<string>();
  files.forEach((file, index) => {
    if (names.has(file.name)) problems.push({ field: `/values_override/file/raw/values/${index}/name`, message: 'is used by another values file' });
    names.add(file.name);
    try {
      const parsed: unknown = parseYaml(file.content, { maxAliasCount: 100 });
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
        problems.push({ field: `/values_override/file/raw/values/${index}/content`, message: 'must be a YAML mapping' });
      }
    } catch (error) {
      problems.push({ field: `/values_override/file/raw/values/${index}/content`, message: `is not YAML: ${(error as Error).message.split('\n')[0] ?? ''}` });
    }
  });
  if (problems.length > 0) throw badRequest('the values overrides are not valid', problems);
  return { set: body.set ?? [], set_string: body.set_string ?? [], set_json: setJson, files };
}

/** Each port a public entry point: HTTP/gRPC served on 443, TCP/UDP on their own external_port; one default. */
function helmPortsFrom(ports: NonNullable<HelmEditBody['ports']>, current: StoredHelmPort[]): StoredHelmPort[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  const names = new Set<string>();
  const stored = ports.map((port, index): StoredHelmPort => {
    const protocol = port.protocol ?? 'HTTP';
    const web = protocol === 'HTTP' || protocol === 'GRPC';
    const external = web ? 443 : port.external_port;
    if (web && port.external_port !== undefined && port.external_port !== 443) problems.push({ field: `/ports/${index}/external_port`, message: 'a public HTTP or GRPC port is served on 443' });
    if (external === undefined) problems.push({ field: `/ports/${index}/external_port`, message: 'a TCP or UDP port needs an external_port' });
    const target = `${port.namespace ?? ''}/${port.service_name}:${port.internal_port}`;
    if (seen.has(target)) problems.push({ field: `/ports/${index}`, message: 'exposes the same service port twice' });
    seen.add(target);
    const name = port.name ?? `${port.service_name}-${port.internal_port}`.slice(0, 63).replace(/-$/, '');
    if (names.has(name)) problems.push({ field: `/ports/${index}/name`, message: 'is used by another port' });
    names.add(name);
    const kept = current.find((candidate) => candidate.service_name === port.service_name && candidate.internal_port === port.internal_port && candidate.namespace === (port.namespace ?? null));
    return {
      id: kept?.id ?? newId(),
      name,
      internal_port: port.internal_port,
      external_port: external ?? 0,
      service_name: port.service_name,
      namespace: port.namespace ?? null,
      protocol,
      is_default: port.is_default ?? false,
    };
  });
  if (stored.filter((port) => port.is_default).length > 1) problems.push({ field: '/ports', message: 'at most one port may be the default' });
  if (problems.length > 0) throw badRequest('the ports are not valid', problems);
  const first = stored[0];
  if (first !== undefined && !stored.some((port) => port.is_default)) first.is_default = true;
  return stored;
}

async function helmSettings(body: HelmEditBody, current: HelmSettings | undefined, context: ServiceKindContext): Promise<HelmSettings> {
  return {
    timeout_sec: body.timeout_sec ?? current?.timeout_sec ?? 600,
    auto_preview: body.auto_preview ?? current?.auto_preview ?? true,
    auto_deploy: body.auto_deploy ?? current?.auto_deploy ?? true,
    source: await helmSourceFrom(body.source, current?.source, context),
    allow_cluster_wide_resources: body.allow_cluster_wide_resources ?? current?.allow_cluster_wide_resources ?? false,
    arguments: body.arguments !== undefined ? argumentsFrom(body.arguments) : (current?.arguments ?? []),
    values_override: body.values_override !== undefined ? valuesOverrideFrom(body.values_override) : (current?.values_override ?? { set: [], set_string: [], set_json: [], files: [] }),
    ports: body.ports !== undefined ? helmPortsFrom(body.ports, current?.ports ?? []) : (current?.ports ?? []),
    annotations_groups: body.annotations_groups !== undefined ? await groupIdsFrom(body.annotations_groups, 'annotations', context) : (current?.annotations_groups ?? []),
    labels_groups: body.labels_groups !== undefined ? await groupIdsFrom(body.labels_groups, 'labels', context) : (current?.labels_groups ?? []),
    icon_uri: body.icon_uri ?? current?.icon_uri ?? DEFAULT_ICON,
  };
}

export const helmKind: ServiceKindDefinition = {
  kind: 'HELM',
  collection: 'helm',
  item: 'helm',
  idParam: 'helmId',
  gitSourceField: '/source/git_repository',
  operations: { list: 'listHelms', create: 'createHelm', get: 'getHelm', edit: 'editHelm', delete: 'deleteHelm' },
  operationNoun: 'Helm',
  tags: ['Helms'],
  prose: {
    aService: 'a Helm chart',
    theService: 'the Helm chart',
    services: 'Helm charts',
    what: "A Helm chart is installed from one of the organization's Helm repositories (source.helm_repository: chart name and version) or from a git repository (source.git_repository), with its values overrides and arguments.",
    checks: "400 for both sources or neither, reserved helm arguments, values overrides or ports that are not valid; 404 for a Helm repository, a git token or a labels or annotations group that is not the organization's.",
  },
  createBody: HelmRequest,
  editBody: HelmEditRequest,
  response: HelmResponse,
  listResponse: HelmResponseList,

  ...kindWrites<HelmBody, HelmEditBody, HelmSettings>(helmSettings),

  toResponse(service: StoredService, linked: LinkedRecords): Static<typeof HelmResponse> {
    const settings = settingsOf<HelmSettings>(service.settings);
    const source = settings.source;
    return {
      ...serviceResponseBase(service),
      timeout_sec: settings.timeout_sec,
      auto_preview: settings.auto_preview,
      auto_deploy: settings.auto_deploy,
      source:
        source.kind === 'git'
          ? { git: { git_repository: gitSourceResponse(source.git_repository) } }
          : {
              repository: {
                chart_name: source.chart_name,
                chart_version: source.chart_version,
                repository: linked.helmRepositories.get(source.repository_id) ?? { id: source.repository_id },
              },
            },
      allow_cluster_wide_resources: settings.allow_cluster_wide_resources,
      arguments: settings.arguments,
      values_override: {
        set: settings.values_override.set,
        set_string: settings.values_override.set_string,
        set_json: settings.values_override.set_json,
        file: settings.values_override.files.length > 0 ? { raw: { values: settings.values_override.files } } : null,
      },
      ports: settings.ports.map(({ namespace, ...port }) => ({ ...port, port_type: 'SERVICE_NAME' as const, ...(namespace === null ? {} : { namespace }) })),
      annotations_groups: annotationsGroupsResponse(settings.annotations_groups, linked),
      labels_groups: labelsGroupsResponse(settings.labels_groups, linked),
      icon_uri: settings.icon_uri,
      service_type: 'HELM',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<HelmSettings>(stored);
    const source = settings.source;
    return {
      gitTokenId: source.kind === 'git' ? source.git_repository.git_token_id : null,
      containerRegistryId: null,
      helmRepositoryId: source.kind === 'repository' ? source.repository_id : null,
      labelsGroupIds: settings.labels_groups,
      annotationsGroupIds: settings.annotations_groups,
      branch: source.kind === 'git' ? source.git_repository.branch : null,
      publiclyReachable: settings.ports.length > 0,
      internalPorts: [],
    };
  },
};
