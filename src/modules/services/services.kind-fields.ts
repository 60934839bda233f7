import { Type, type Static, type TSchema } from 'typebox';
import { GIT_PROVIDERS } from '../../git/git-access.ts';
import { Description, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import type { LinkedAnnotationsGroup, LinkedLabelsGroup, LinkedRecords } from './services.kinds.ts';

export {
  anyPublicPort,
  checkInstances,
  checkRegistry,
  groupIdsFrom,
  healthchecksFrom,
  healthchecksResponse,
  internalTcpPorts,
  kindWrites,
  portResponse,
  portsFrom,
  serviceResponseBase,
  settingsOf,
  storageFrom,
  type ProbedPort,
  type StoredHealthchecks,
  type StoredPort,
  type StoredProbe,
  type StoredProbeType,
  type StoredVolume,
} from './services.field-checks.ts';
export { DEFAULT_BRANCH, gitSourceFrom, gitSourceResponse, normaliseRootPath, storedGitSourceOf, type StoredGitSource } from './services.git-sources.ts';

/**
 * Wire pieces shared by several service kinds: names, git sources, ports, healthchecks, storage, resources, images,
 * labels/annotations group references. The schemas here bound shapes, lengths and characters. What a schema cannot
 * check (uniqueness within a list, cross-field rules, references to other modules) and the conversions between a
 * request, what is stored and the answer are in services.field-checks.ts, a git source's in services.git-sources.ts;
 * both are re-exported here, so a kind imports its fields from this file alone.
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

/**
 * The most a service may ask for (the reference's required `maximum_cpu`, `maximum_memory`, `maximum_gpu` of
 * containers and jobs): Slipway does not know a cluster's node sizes, so these are the limits its requests accept.
 */
export const ResourceMaximumResponseFields = { maximum_cpu: Type.Integer(), maximum_memory: Type.Integer(), maximum_gpu: Type.Integer() };
export const RESOURCE_MAXIMUMS = { maximum_cpu: LIMITS.cpuMillicores.max, maximum_memory: LIMITS.memoryMib.max, maximum_gpu: LIMITS.gpu.max };

export const InstanceRequestFields = {
  min_running_instances: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.instances.max, default: 1 })),
  max_running_instances: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.instances.max, default: 1 })),
};

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

export const StorageResponse = Type.Array(Type.Object({ id: Uuid, type: Type.Enum(['FAST_SSD']), size: Type.Integer(), mount_point: Type.String() }));

// ---------------------------------------------------------------------------------------------------------------
// Container images (containers, jobs and agentic workflows from a registry)

/**
 * An OCI repository name inside a registry: lower-case path components separated by `/` (distribution spec), e.g.
 * `library/nginx`; a tag: up to 128 word characters, dots and dashes, not starting with either.
 */
export const ImageName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$' });
export const ImageTag = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$' });

/**
 * The registry an image comes from, as the reference's ContainerRegistryProviderDetailsResponse. Its name, URL and
 * kind are absent only when the registry was deleted meanwhile (deleting one still in use is refused).
 */
export const RegistryResponse = Type.Object({ id: Uuid, name: Type.Optional(Type.String()), url: Type.Optional(Type.String()), kind: Type.Optional(Type.String()) });

export function registryResponse(registryId: string, linked: LinkedRecords): Static<typeof RegistryResponse> {
  return linked.containerRegistries.get(registryId) ?? { id: registryId };
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments, entrypoint

export const Arguments = Type.Array(Type.String({ maxLength: LIMITS.argumentLength, pattern: '^[^\\x00]*$' }), { maxItems: LIMITS.arguments });
export const Entrypoint = Type.String({ minLength: 1, maxLength: LIMITS.argumentLength, pattern: '^[^\\x00]*$' });

// ---------------------------------------------------------------------------------------------------------------
// Labels and annotations groups (the reference's ServiceLabelsRequestList / ServiceAnnotationsRequestList)

export const GroupReferenceList = Type.Array(Type.Object({ id: Uuid }, { additionalProperties: false }), { maxItems: LIMITS.groups });

const groupResponseFields = { id: Uuid, created_at: Timestamp, updated_at: Type.Optional(Timestamp), name: Type.String() };
/** The groups as a service answers them: whole, as the reference's OrganizationLabelsGroupResponse. */
export const LabelsGroupResponseList = Type.Array(
  Type.Object({
    ...groupResponseFields,
    labels: Type.Array(Type.Object({ key: Type.String(), value: Type.String(), propagate_to_cloud_provider: Type.Boolean() })),
  }),
);
/** As the reference's OrganizationAnnotationsGroupResponse. */
export const AnnotationsGroupResponseList = Type.Array(
  Type.Object({
    ...groupResponseFields,
    annotations: Type.Array(Type.Object({ key: Type.String(), value: Type.String() })),
    scopes: Type.Array(Type.String()),
  }),
);

/** The groups of these ids, in order; one deleted meanwhile is left out. */
export function labelsGroupsResponse(ids: readonly string[], linked: LinkedRecords): LinkedLabelsGroup[] {
  return ids.flatMap((id) => linked.labelsGroups.get(id) ?? []);
}

export function annotationsGroupsResponse(ids: readonly string[], linked: LinkedRecords): LinkedAnnotationsGroup[] {
  return ids.flatMap((id) => linked.annotationsGroups.get(id) ?? []);
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
