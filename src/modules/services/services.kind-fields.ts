import { Type, type Static, type TSchema } from 'typebox';
import { GIT_PROVIDERS, type GitProvider } from '../../git/git-access.ts';
import { Description, Nullable, Uuid } from '../../protocol/wire.ts';
import { badRequest, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * Wire pieces and checks shared by several service kinds: names, git sources, ports, healthchecks, storage,
 * resources, images, labels/annotations group references. The schemas bound shapes, lengths and characters; the
 * check functions do what a schema cannot (uniqueness within a list, cross-field rules, references to other
 * modules) and throw a 400 naming the field by JSON pointer, or a 404 for an id the organization does not have.
 * Every function here assumes its input already passed the route's schema (defaults applied).
 */

/**
 * A service name is a DNS label (letters, digits, inner dashes, ≤ 63): it names the service's hostname
 * (`<service>-<environment>.<domain>`) and, upper-cased with dashes as underscores, its built-in variables
 * (PLATFORM_APPLICATION_<NAME>_HOSTNAME); both need exactly those characters. Case-insensitively unique per
 * environment (the services module's unique index on the name key).
 */
export const SERVICE_NAME_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$';
export const ServiceName = Type.String({ minLength: 1, maxLength: 63, pattern: SERVICE_NAME_PATTERN });
export const ServiceDescription = Nullable(Description);

/** Text stored and shown as typed: one line, no control characters. */
export function Line(maxLength: number, minLength = 0) {
  return Type.String({ minLength, maxLength, pattern: '^[^\\x00-\\x1f\\x7f]*$' });
}

/**
 * An edit body's fields: the create body's without their defaults. A default in an edit would overwrite what is
 * stored whenever a client leaves the field out, where leaving it out means "keep it".
 */
export function withoutDefaults<T extends Record<string, TSchema>>(fields: T): T {
  return Object.fromEntries(
    Object.entries(fields).map(([key, schema]) => {
      // Copied with descriptors: TypeBox keeps its optional marker in a non-enumerable property.
      const copy = Object.create(Object.getPrototypeOf(schema) as object | null, Object.getOwnPropertyDescriptors(schema)) as TSchema & { default?: unknown };
      delete copy.default;
      return [key, copy];
    }),
  ) as T;
}

/** The reference's ReferenceObject. */
export const ReferenceObject = Type.Object({ id: Uuid });

// ---------------------------------------------------------------------------------------------------------------
// Limits (docs/service-kinds.md lists them). Generous for one service, small enough that a body stays a few kB.

export const LIMITS = {
  ports: 20,
  storage: 10,
  storageGib: { min: 1, max: 16_384 },
  cpuMillicores: { min: 10, max: 64_000 },
  memoryMib: { min: 16, max: 262_144 },
  gpu: { max: 16 },
  ephemeralStorageGib: { max: 1_024 },
  instances: { max: 100 },
  arguments: 100,
  argumentLength: 4_096,
  groups: 50,
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Resources

export const ResourceRequestFields = {
  cpu: Type.Optional(Type.Integer({ minimum: LIMITS.cpuMillicores.min, maximum: LIMITS.cpuMillicores.max, default: 500, description: 'millicores' })),
  memory: Type.Optional(Type.Integer({ minimum: LIMITS.memoryMib.min, maximum: LIMITS.memoryMib.max, default: 512, description: 'MiB' })),
};

export const InstanceRequestFields = {
  min_running_instances: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.instances.max, default: 1 })),
  max_running_instances: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.instances.max, default: 1 })),
};

/** min ≤ max, or 400 on max_running_instances. */
export function checkInstances(min: number, max: number): void {
  if (max < min) {
    throw badRequest(`max_running_instances (${max}) is below min_running_instances (${min})`, [
      { field: '/max_running_instances', message: 'must be at least min_running_instances' },
    ]);
  }
}

export const CpuArchitectureEnum = Type.Enum(['AMD64', 'ARM64']);

// ---------------------------------------------------------------------------------------------------------------
// Git sources (applications, jobs, helm charts and terraform services built from a repository)

/**
 * The reference's ApplicationGitRepositoryRequest, as the git-tokens module accepts it for directory listings:
 * `owner` and `name` may be left out (they are read from the URL). The URL is checked for syntax here; whether
 * the host answers and the branch exists is for the build (and listDirectoriesFromGitRepository) to find out.
 */
export const GitRepositoryRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\x00-\\x20\\x7f]+$' }),
    owner: Type.Optional(Line(255)),
    name: Type.Optional(Line(255)),
    branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    root_path: Type.Optional(Type.String({ maxLength: 4096, default: '/' })),
    git_token_id: Type.Optional(Nullable(Uuid)),
    provider: Type.Enum(GIT_PROVIDERS),
  },
  { additionalProperties: false },
);
export type GitRepositoryBody = Static<typeof GitRepositoryRequest>;

export interface StoredGitSource {
  provider: GitProvider;
  url: string;
  owner: string;
  name: string;
  branch: string;
  root_path: string;
  git_token_id: string | null;
}

/**
 * The git source a service builds from, wherever its kind keeps it: `git_repository` (applications, Terraform,
 * agentic workflows) or its source's (jobs built from a Dockerfile, Helm charts from git); null for the others.
 */
export function storedGitSourceOf(settings: Record<string, unknown>): StoredGitSource | null {
  const source = settings.source as { git_repository?: StoredGitSource } | null | undefined;
  return (settings.git_repository as StoredGitSource | null | undefined) ?? source?.git_repository ?? null;
}

/** The reference's ApplicationGitRepository, as far as Slipway knows it (deployed commit fields come with builds). */
export const GitRepositoryResponse = Type.Object({
  provider: Type.Enum(GIT_PROVIDERS),
  owner: Type.String(),
  url: Type.String(),
  name: Type.String(),
  branch: Type.String(),
  root_path: Type.String(),
  git_token_id: Nullable(Type.String()),
});

/** The branch built when a request names none. */
export const DEFAULT_BRANCH = 'main';

function hasControlOrSpace(text: string, spaceToo: boolean): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || (spaceToo && code === 0x20)) return true;
  }
  return false;
}

/** git check-ref-format's rules, as far as they matter for a name typed into a form. */
function branchProblem(branch: string): string | undefined {
  if (branch.startsWith('-') || branch.startsWith('/') || branch.endsWith('/') || branch.endsWith('.')) return 'must not start with - or /, nor end with / or .';
  if (branch.endsWith('.lock')) return 'must not end with .lock';
  if (branch.includes('..') || branch.includes('//') || branch.includes('@{')) return 'must not contain .., // or @{';
  if (hasControlOrSpace(branch, true) || /[~^:?*[\\]/.test(branch)) return 'must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  if (branch.split('/').some((part) => part.startsWith('.'))) return 'no path component may start with .';
  return undefined;
}

/** `/infra/envs/` → `/infra/envs`: absolute, without `.`/`..` segments or control characters. */
export function normaliseRootPath(rootPath: string, field: string): string {
  const segments = rootPath.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || hasControlOrSpace(segment, false)) {
      throw badRequest(`${field.slice(1)} "${rootPath}" is not a path inside the repository`, [
        { field, message: 'must not contain . or .. segments or control characters' },
      ]);
    }
  }
  return `/${segments.join('/')}`;
}

/**
 * Checks a git source and returns it as stored: an http(s) URL without credentials, query or fragment (credentials
 * belong in a git token, never in a URL that is stored and shown), a valid branch name, a path inside the
 * repository, and a git token of the organization.
 */
export async function gitSourceFrom(body: GitRepositoryBody, context: ServiceKindContext, pointer: string): Promise<StoredGitSource> {
  const url = repositoryUrl(body.url, `${pointer}/url`);
  const branch = body.branch ?? DEFAULT_BRANCH;
  const problem = branchProblem(branch);
  if (problem !== undefined) throw badRequest(`branch "${branch}" is not a valid git branch name`, [{ field: `${pointer}/branch`, message: problem }]);
  const rootPath = normaliseRootPath(body.root_path ?? '/', `${pointer}/root_path`);
  const gitTokenId = body.git_token_id ?? null;
  if (gitTokenId !== null && !(await context.gitTokenExists(gitTokenId))) {
    throw notFound(`git token ${gitTokenId} (${pointer}/git_token_id) does not exist in this organization`);
  }
  const [owner, name] = ownerAndName(url);
  return {
    provider: body.provider,
    url: url.href.replace(/\/$/, ''),
    owner: body.owner !== undefined && body.owner !== '' ? body.owner : owner,
    name: body.name !== undefined && body.name !== '' ? body.name : name,
    branch,
    root_path: rootPath,
    git_token_id: gitTokenId,
  };
}

function repositoryUrl(raw: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('the repository url is not an absolute http(s) URL', [{ field, message: 'must be an https:// URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badRequest(`the repository url must use https:// (got "${url.protocol}//")`, [{ field, message: 'must be an https:// URL' }]);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw badRequest('the repository url must not carry credentials, a query or a fragment; register a git token instead', [
      { field, message: 'must be a plain repository URL' },
    ]);
  }
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  if (segments.length === 0) throw badRequest('the repository url names no repository', [{ field, message: 'must name a repository' }]);
  return url;
}

/** `https://host/acme/tools/api.git` → ["acme/tools", "api"]. */
function ownerAndName(url: URL): [string, string] {
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = (segments.at(-1) ?? '').replace(/\.git$/, '');
  return [segments.slice(0, -1).join('/'), last];
}

export function gitSourceResponse(source: StoredGitSource): Static<typeof GitRepositoryResponse> {
  return { ...source };
}

// ---------------------------------------------------------------------------------------------------------------
// Ports

export const PORT_PROTOCOLS = ['HTTP', 'GRPC', 'TCP', 'UDP'] as const;
export type PortProtocol = (typeof PORT_PROTOCOLS)[number];
const PortNumber = Type.Integer({ minimum: 1, maximum: 65_535 });
const PublicPath = Type.String({ minLength: 1, maxLength: 1024, pattern: '^/[^\\x00-\\x20\\x7f]*$' });

/** One entry of the reference's ServicePortRequest (an edit may send the ids of ServicePortResponseList back). */
export const ServicePortRequest = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$' })),
    internal_port: PortNumber,
    external_port: Type.Optional(PortNumber),
    publicly_accessible: Type.Boolean(),
    is_default: Type.Optional(Type.Boolean()),
    protocol: Type.Optional(Type.Enum(PORT_PROTOCOLS, { default: 'HTTP' })),
    public_path: Type.Optional(PublicPath),
    public_path_rewrite: Type.Optional(Type.String({ maxLength: 1024, pattern: '^[^\\x00-\\x1f\\x7f]*$' })),
  },
  { additionalProperties: false },
);
export type ServicePortBody = Static<typeof ServicePortRequest>;
export const ServicePortRequestList = Type.Array(ServicePortRequest, { maxItems: LIMITS.ports });

export interface StoredPort {
  id: string;
  name: string;
  internal_port: number;
  external_port: number | null;
  publicly_accessible: boolean;
  is_default: boolean;
  protocol: PortProtocol;
  public_path: string | null;
  public_path_rewrite: string | null;
}

export const ServicePort = Type.Object({
  id: Uuid,
  name: Type.String(),
  internal_port: Type.Integer(),
  external_port: Type.Optional(Type.Integer()),
  publicly_accessible: Type.Boolean(),
  is_default: Type.Boolean(),
  protocol: Type.Enum(PORT_PROTOCOLS),
  public_path: Type.Optional(Type.String()),
  public_path_rewrite: Type.Optional(Type.String()),
});

/** Where a public HTTP or gRPC port is served: the platform's TLS entry point. */
const HTTPS_PORT = 443;

/**
 * The port rules (docs/service-kinds.md): internal ports and names unique within the service; at most one default
 * port, the first one when none is marked; a public HTTP/gRPC port is served on 443 (an external_port other than 443
 * is refused), a public TCP/UDP port needs its own external_port, unique among the service's public ports; paths
 * only for HTTP. Ids of ports already stored are kept (an edit sends them back); other ids get a fresh one.
 */
export function portsFrom(ports: ServicePortBody[], current: StoredPort[], pointer = '/ports'): StoredPort[] {
  const problems: FieldProblem[] = [];
  const seenInternal = new Map<number, number>();
  const seenNames = new Set<string>();
  const seenExternal = new Set<string>();
  const keptIds = new Set(current.map((port) => port.id));
  const usedIds = new Set<string>();
  const stored = ports.map((port, index): StoredPort => {
    const at = `${pointer}/${index}`;
    const protocol = port.protocol ?? 'HTTP';
    const previous = seenInternal.get(port.internal_port);
    if (previous !== undefined) problems.push({ field: `${at}/internal_port`, message: `duplicates ${pointer}/${previous}` });
    seenInternal.set(port.internal_port, index);
    const name = port.name ?? `p${port.internal_port}`;
    if (previous === undefined && seenNames.has(name)) problems.push({ field: `${at}/name`, message: 'is used by another port of the service' });
    seenNames.add(name);
    let external: number | null = port.external_port ?? null;
    if (port.publicly_accessible) {
      if (protocol === 'HTTP' || protocol === 'GRPC') {
        if (external !== null && external !== HTTPS_PORT) problems.push({ field: `${at}/external_port`, message: 'a public HTTP or GRPC port is served on 443' });
        external = HTTPS_PORT;
      } else if (external === null) {
        problems.push({ field: `${at}/external_port`, message: 'a public TCP or UDP port needs an external_port' });
      } else {
        const key = `${protocol}:${external}`;
        if (seenExternal.has(key)) problems.push({ field: `${at}/external_port`, message: 'is used by another public port of the service' });
        seenExternal.add(key);
      }
    }
    if (protocol !== 'HTTP' && (port.public_path !== undefined || port.public_path_rewrite !== undefined)) {
      problems.push({ field: `${at}/public_path`, message: 'only HTTP ports have public paths' });
    }
    const id = port.id !== undefined && keptIds.has(port.id) && !usedIds.has(port.id) ? port.id : newId();
    usedIds.add(id);
    return {
      id,
      name,
      internal_port: port.internal_port,
      external_port: external,
      publicly_accessible: port.publicly_accessible,
      is_default: port.is_default ?? false,
      protocol,
      public_path: port.public_path ?? null,
      public_path_rewrite: port.public_path_rewrite ?? null,
    };
  });
  const defaults = stored.filter((port) => port.is_default);
  if (defaults.length > 1) problems.push({ field: pointer, message: 'at most one port may be the default' });
  if (problems.length > 0) throw badRequest('the ports are not valid', problems);
  const first = stored[0];
  if (defaults.length === 0 && first !== undefined) first.is_default = true;
  return stored;
}

export function portResponse(port: StoredPort): Static<typeof ServicePort> {
  return {
    id: port.id,
    name: port.name,
    internal_port: port.internal_port,
    ...(port.external_port !== null ? { external_port: port.external_port } : {}),
    publicly_accessible: port.publicly_accessible,
    is_default: port.is_default,
    protocol: port.protocol,
    ...(port.public_path !== null ? { public_path: port.public_path } : {}),
    ...(port.public_path_rewrite !== null ? { public_path_rewrite: port.public_path_rewrite } : {}),
  };
}

/** SPEC.md: reachable from the public internet only when a port is configured public. */
export function anyPublicPort(ports: StoredPort[]): boolean {
  return ports.some((port) => port.publicly_accessible);
}

/** The TCP ports a service listens on inside its environment, each once. */
export function internalTcpPorts(ports: StoredPort[]): number[] {
  return [...new Set(ports.filter((port) => port.protocol !== 'UDP').map((port) => port.internal_port))];
}

// ---------------------------------------------------------------------------------------------------------------
// Healthchecks (the reference's Healthcheck and Probe)

const ProbeType = Type.Object(
  {
    tcp: Type.Optional(Nullable(Type.Object({ port: Type.Optional(PortNumber), host: Type.Optional(Nullable(Line(253))) }, { additionalProperties: false }))),
    http: Type.Optional(
      Nullable(
        Type.Object(
          {
            path: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^/[^\\x00-\\x20\\x7f]*$', default: '/' })),
            scheme: Type.Optional(Type.Enum(['HTTP', 'HTTPS'], { default: 'HTTP' })),
            port: Type.Optional(PortNumber),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    exec: Type.Optional(
      Nullable(Type.Object({ command: Type.Array(Type.String({ maxLength: LIMITS.argumentLength, pattern: '^[^\\x00]*$' }), { minItems: 1, maxItems: LIMITS.arguments }) }, { additionalProperties: false })),
    ),
    grpc: Type.Optional(Nullable(Type.Object({ service: Type.Optional(Nullable(Line(255))), port: Type.Optional(PortNumber) }, { additionalProperties: false }))),
  },
  { additionalProperties: false },
);

const Seconds = (minimum: number, maximum: number, fallback: number) => Type.Optional(Type.Integer({ minimum, maximum, default: fallback }));

export const ProbeRequest = Nullable(
  Type.Object(
    {
      type: ProbeType,
      initial_delay_seconds: Seconds(0, 3600, 30),
      period_seconds: Seconds(1, 3600, 10),
      timeout_seconds: Seconds(1, 3600, 5),
      success_threshold: Seconds(1, 100, 1),
      failure_threshold: Seconds(1, 100, 9),
    },
    { additionalProperties: false },
  ),
);

export const HealthcheckRequest = Type.Object(
  { readiness_probe: Type.Optional(ProbeRequest), liveness_probe: Type.Optional(ProbeRequest) },
  { additionalProperties: false },
);
export type HealthcheckBody = Static<typeof HealthcheckRequest>;

export type StoredProbeType =
  | { kind: 'tcp'; port: number; host: string | null }
  | { kind: 'http'; port: number; path: string; scheme: 'HTTP' | 'HTTPS' }
  | { kind: 'exec'; command: string[] }
  | { kind: 'grpc'; port: number; service: string | null };

export interface StoredProbe {
  type: StoredProbeType;
  initial_delay_seconds: number;
  period_seconds: number;
  timeout_seconds: number;
  success_threshold: number;
  failure_threshold: number;
}

export interface StoredHealthchecks {
  readiness_probe: StoredProbe | null;
  liveness_probe: StoredProbe | null;
}

const ProbeResponse = Nullable(
  Type.Object({
    type: Type.Object({
      tcp: Nullable(Type.Object({ port: Type.Integer(), host: Nullable(Type.String()) })),
      http: Nullable(Type.Object({ path: Type.String(), scheme: Type.String(), port: Type.Integer() })),
      exec: Nullable(Type.Object({ command: Type.Array(Type.String()) })),
      grpc: Nullable(Type.Object({ service: Nullable(Type.String()), port: Type.Integer() })),
    }),
    initial_delay_seconds: Type.Integer(),
    period_seconds: Type.Integer(),
    timeout_seconds: Type.Integer(),
    success_threshold: Type.Integer(),
    failure_threshold: Type.Integer(),
  }),
);
export const HealthcheckResponse = Type.Object({ readiness_probe: ProbeResponse, liveness_probe: ProbeResponse });

type ProbeBody = NonNullable<HealthcheckBody['readiness_probe']>;

/**
 * A probe names exactly one way to check (tcp, http, exec or grpc); a network probe checks one of the service's
 * internal ports (the default port when it names none); its timeout is below its period (a check that may last
 * longer than the interval between checks would overlap itself).
 */
/** The ports a probe may check: the service's internal ports, one of them the default. */
export type ProbedPort = Pick<StoredPort, 'internal_port' | 'is_default'>;

function probeFrom(probe: ProbeBody, ports: readonly ProbedPort[], pointer: string): StoredProbe {
  const named = (['tcp', 'http', 'exec', 'grpc'] as const).filter((kind) => probe.type[kind] !== undefined && probe.type[kind] !== null);
  if (named.length !== 1) throw badRequest('a probe names exactly one type', [{ field: `${pointer}/type`, message: 'set exactly one of tcp, http, exec, grpc' }]);
  const kind = named[0] as 'tcp' | 'http' | 'exec' | 'grpc';
  const portOf = (given: number | undefined): number => {
    const fallback = ports.find((port) => port.is_default)?.internal_port;
    const port = given ?? fallback;
    if (port === undefined) throw badRequest('the probe names no port and the service has none', [{ field: `${pointer}/type/${kind}/port`, message: 'required when the service has no port' }]);
    if (!ports.some((candidate) => candidate.internal_port === port)) {
      throw badRequest(`the probe checks port ${port}, which is not one of the service's internal ports`, [{ field: `${pointer}/type/${kind}/port`, message: 'must be an internal port of the service' }]);
    }
    return port;
  };
  let type: StoredProbeType;
  if (kind === 'exec') type = { kind, command: probe.type.exec?.command ?? [] };
  else if (kind === 'tcp') type = { kind, port: portOf(probe.type.tcp?.port), host: probe.type.tcp?.host ?? null };
  else if (kind === 'http') type = { kind, port: portOf(probe.type.http?.port), path: probe.type.http?.path ?? '/', scheme: probe.type.http?.scheme ?? 'HTTP' };
  else type = { kind, port: portOf(probe.type.grpc?.port), service: probe.type.grpc?.service ?? null };
  const stored: StoredProbe = {
    type,
    initial_delay_seconds: probe.initial_delay_seconds ?? 30,
    period_seconds: probe.period_seconds ?? 10,
    timeout_seconds: probe.timeout_seconds ?? 5,
    success_threshold: probe.success_threshold ?? 1,
    failure_threshold: probe.failure_threshold ?? 9,
  };
  if (stored.timeout_seconds >= stored.period_seconds) {
    throw badRequest('a probe times out before its next check', [{ field: `${pointer}/timeout_seconds`, message: 'must be below period_seconds' }]);
  }
  return stored;
}

export function healthchecksFrom(body: HealthcheckBody, ports: readonly ProbedPort[], pointer = '/healthchecks'): StoredHealthchecks {
  return {
    readiness_probe: body.readiness_probe ? probeFrom(body.readiness_probe, ports, `${pointer}/readiness_probe`) : null,
    liveness_probe: body.liveness_probe ? probeFrom(body.liveness_probe, ports, `${pointer}/liveness_probe`) : null,
  };
}

function probeResponse(probe: StoredProbe | null): Static<typeof ProbeResponse> {
  if (probe === null) return null;
  const { type, ...timings } = probe;
  return {
    type: {
      tcp: type.kind === 'tcp' ? { port: type.port, host: type.host } : null,
      http: type.kind === 'http' ? { path: type.path, scheme: type.scheme, port: type.port } : null,
      exec: type.kind === 'exec' ? { command: type.command } : null,
      grpc: type.kind === 'grpc' ? { service: type.service, port: type.port } : null,
    },
    ...timings,
  };
}

export function healthchecksResponse(healthchecks: StoredHealthchecks): Static<typeof HealthcheckResponse> {
  return { readiness_probe: probeResponse(healthchecks.readiness_probe), liveness_probe: probeResponse(healthchecks.liveness_probe) };
}

// ---------------------------------------------------------------------------------------------------------------
// Storage (the reference's ServiceStorageRequest / ServiceStorage)

const MountPoint = Type.String({ minLength: 2, maxLength: 1024, pattern: '^/[^\\x00-\\x20\\x7f]*$' });

export const StorageRequest = Type.Object(
  {
    id: Type.Optional(Uuid),
    type: Type.Enum(['FAST_SSD']),
    size: Type.Integer({ minimum: LIMITS.storageGib.min, maximum: LIMITS.storageGib.max, description: 'GiB' }),
    mount_point: MountPoint,
  },
  { additionalProperties: false },
);
export type StorageBody = Static<typeof StorageRequest>;
export const StorageRequestList = Type.Array(StorageRequest, { maxItems: LIMITS.storage });

export interface StoredVolume {
  id: string;
  type: 'FAST_SSD';
  size: number;
  mount_point: string;
}

export const StorageResponse = Type.Array(Type.Object({ id: Uuid, type: Type.Enum(['FAST_SSD']), size: Type.Integer(), mount_point: Type.String() }));

/**
 * Mount points are absolute, without `.`/`..` segments, unique and not nested in one another (two volumes mounted
 * one inside the other would hide part of the outer one). A volume keeps its id on edit; a stored volume is never
 * shrunk (block storage grows, it does not give space back).
 */
export function storageFrom(volumes: StorageBody[], current: StoredVolume[], pointer = '/storage'): StoredVolume[] {
  const problems: FieldProblem[] = [];
  const byId = new Map(current.map((volume) => [volume.id, volume]));
  const usedIds = new Set<string>();
  const stored = volumes.map((volume, index): StoredVolume => {
    const at = `${pointer}/${index}`;
    const segments = volume.mount_point.split('/').filter((segment) => segment !== '');
    if (segments.length === 0 || segments.some((segment) => segment === '.' || segment === '..')) {
      problems.push({ field: `${at}/mount_point`, message: 'must be an absolute path other than / without . or .. segments' });
    }
    const previous = volume.id !== undefined && !usedIds.has(volume.id) ? byId.get(volume.id) : undefined;
    if (previous !== undefined && volume.size < previous.size) problems.push({ field: `${at}/size`, message: `a volume cannot shrink (now ${previous.size} GiB)` });
    const id = previous?.id ?? newId();
    usedIds.add(id);
    return { id, type: volume.type, size: volume.size, mount_point: `/${segments.join('/')}` };
  });
  stored.forEach((volume, index) => {
    stored.forEach((other, otherIndex) => {
      if (otherIndex >= index) return;
      if (volume.mount_point === other.mount_point || volume.mount_point.startsWith(`${other.mount_point}/`) || other.mount_point.startsWith(`${volume.mount_point}/`)) {
        problems.push({ field: `${pointer}/${index}/mount_point`, message: `overlaps ${pointer}/${otherIndex}/mount_point` });
      }
    });
  });
  if (problems.length > 0) throw badRequest('the storage is not valid', problems);
  return stored;
}

// ---------------------------------------------------------------------------------------------------------------
// Container images (containers, jobs and agentic workflows from a registry)

/**
 * An OCI repository name inside a registry: lower-case path components separated by `/` (distribution spec), e.g.
 * `library/nginx`; a tag: up to 128 word characters, dots and dashes, not starting with either.
 */
export const ImageName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$' });
export const ImageTag = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$' });

export async function checkRegistry(registryId: string, context: ServiceKindContext, field: string): Promise<void> {
  if (!(await context.containerRegistryExists(registryId))) throw notFound(`container registry ${registryId} (${field}) does not exist in this organization`);
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments, entrypoint

export const Arguments = Type.Array(Type.String({ maxLength: LIMITS.argumentLength, pattern: '^[^\\x00]*$' }), { maxItems: LIMITS.arguments });
export const Entrypoint = Type.String({ minLength: 1, maxLength: LIMITS.argumentLength, pattern: '^[^\\x00]*$' });

// ---------------------------------------------------------------------------------------------------------------
// Labels and annotations groups (the reference's ServiceLabelsRequestList / ServiceAnnotationsRequestList)

export const GroupReferenceList = Type.Array(Type.Object({ id: Uuid }, { additionalProperties: false }), { maxItems: LIMITS.groups });
/** The groups as a service answers them: their ids (the groups themselves are read at /organization/…/labelsGroup). */
export const GroupReferenceResponseList = Type.Array(Type.Object({ id: Uuid }));

/** Deduplicated ids, every one a group of the organization, or 404 naming the missing ones. */
export async function groupIdsFrom(
  groups: { id: string }[] | undefined,
  kind: 'labels' | 'annotations',
  context: ServiceKindContext,
): Promise<string[]> {
  const ids = [...new Set((groups ?? []).map((group) => group.id))];
  if (ids.length === 0) return ids;
  const missing = kind === 'labels' ? await context.missingLabelsGroups(ids) : await context.missingAnnotationsGroups(ids);
  if (missing.length > 0) throw notFound(`${kind} group${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (${kind}_groups) not found in this organization`);
  return ids;
}

export function groupResponse(ids: string[]): { id: string }[] {
  return ids.map((id) => ({ id }));
}

// ---------------------------------------------------------------------------------------------------------------
// Response framing

/** Every kind's answer starts with the reference's Base, environment reference, name and description. */
export const ServiceResponseFields = {
  id: Uuid,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  environment: ReferenceObject,
  name: Type.String(),
  description: Type.String(),
};

export function serviceResponseBase(service: StoredService) {
  return {
    id: service.id,
    created_at: service.createdAt,
    updated_at: service.updatedAt,
    environment: { id: service.environmentId },
    name: service.name,
    // The reference's description is a non-nullable string; a service without one answers "".
    description: service.description ?? '',
  };
}

/** Settings are written by a kind and read back by the same kind: the one place that trusts the stored JSON. */
export function settingsOf<T>(settings: Record<string, unknown>): T {
  return settings as unknown as T;
}

/**
 * A kind's fromCreate and fromEdit when its settings come from one function of the body and what is stored (nothing
 * on create): the name and description are the body's, an edit keeping what it leaves out.
 */
export function kindWrites<Body extends { name: string; description?: string | null | undefined }, EditBody extends { name?: string | undefined; description?: string | null | undefined }, Settings extends object>(
  settingsFrom: (request: Body | EditBody, current: Settings | undefined, context: ServiceKindContext) => Promise<Settings>,
): Pick<ServiceKindDefinition, 'fromCreate' | 'fromEdit'> {
  return {
    async fromCreate(body, context) {
      const request = body as Body;
      return { name: request.name, description: request.description ?? null, settings: storedSettings(await settingsFrom(request, undefined, context)) };
    },
    async fromEdit(current, body, context) {
      const request = body as EditBody;
      const settings = await settingsFrom(request, settingsOf<Settings>(current.settings), context);
      return {
        name: request.name ?? current.name,
        description: request.description !== undefined ? request.description : current.description,
        settings: storedSettings(settings),
      };
    },
  };
}

/** Settings as the services table keeps them (a JSON object): the inverse of settingsOf. */
function storedSettings(settings: object): Record<string, unknown> {
  return { ...settings } as Record<string, unknown>;
}
