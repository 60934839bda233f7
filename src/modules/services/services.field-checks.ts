import type { Static } from 'typebox';
import { badRequest, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { HealthcheckBody, HealthcheckResponse, PortProtocol, ServicePort, ServicePortBody, StorageBody } from './services.kind-fields.ts';
import type { ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * The shared fields past their schemas (services.kind-fields.ts, which re-exports everything here): what a schema
 * cannot check — uniqueness within a list, cross-field rules, references to other modules — and the conversions
 * between a request, what is stored and the answer. A check throws a 400 naming the field by JSON pointer, or a 404
 * for an id the organization does not have. Every function here assumes its input already passed the route's
 * schema (defaults applied).
 */

// ---------------------------------------------------------------------------------------------------------------
// Resources

/** min ≤ max, or 400 on max_running_instances. */
export function checkInstances(min: number, max: number): void {
  if (max < min) {
    throw badRequest(`max_running_instances (${max}) is below min_running_instances (${min})`, [
      { field: '/max_running_instances', message: 'must be at least min_running_instances' },
    ]);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Ports

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

type ProbeBody = NonNullable<HealthcheckBody['readiness_probe']>;

/** The ports a probe may check: the service's internal ports, one of them the default. */
export type ProbedPort = Pick<StoredPort, 'internal_port' | 'is_default'>;

/**
 * A probe names exactly one way to check (tcp, http, exec or grpc); a network probe checks one of the service's
 * internal ports (the default port when it names none); its timeout is below its period (a check that may last
 * longer than the interval between checks would overlap itself).
 */
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

function probeResponse(probe: StoredProbe | null): Static<typeof HealthcheckResponse>['readiness_probe'] {
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

export interface StoredVolume {
  id: string;
  type: 'FAST_SSD';
  size: number;
  mount_point: string;
}

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

export async function checkRegistry(registryId: string, context: ServiceKindContext, field: string): Promise<void> {
  if (!(await context.containerRegistryExists(registryId))) throw notFound(`container registry ${registryId} (${field}) does not exist in this organization`);
}

// ---------------------------------------------------------------------------------------------------------------
// Labels and annotations groups (the reference's ServiceLabelsRequestList / ServiceAnnotationsRequestList)

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

// ---------------------------------------------------------------------------------------------------------------
// Response framing

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
