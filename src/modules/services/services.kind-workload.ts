import { Type } from 'typebox';
import { Nullable, Url } from '../../protocol/wire.ts';
import {
  AnnotationsGroupResponseList,
  annotationsGroupsResponse,
  Arguments,
  checkInstances,
  CpuArchitectureEnum,
  Entrypoint,
  GroupReferenceList,
  groupIdsFrom,
  HealthcheckRequest,
  HealthcheckResponse,
  healthchecksFrom,
  healthchecksResponse,
  InstanceRequestFields,
  LabelsGroupResponseList,
  labelsGroupsResponse,
  LIMITS,
  portResponse,
  portsFrom,
  RESOURCE_MAXIMUMS,
  ResourceMaximumResponseFields,
  ResourceRequestFields,
  ServiceDescription,
  ServicePort,
  ServicePortRequestList,
  StorageRequestList,
  StorageResponse,
  storageFrom,
  type HealthcheckBody,
  type ServicePortBody,
  type StorageBody,
  type StoredHealthchecks,
  type StoredPort,
  type StoredVolume,
} from './services.kind-fields.ts';
import type { LinkedRecords, ServiceKindContext } from './services.kinds.ts';

/**
 * What the long-running kinds (APPLICATION and CONTAINER) share: resources, instances, ports, healthchecks,
 * storage, command line, groups, icon and the auto-deploy/preview switches. The reference repeats these fields in
 * ApplicationRequest and ContainerRequest; here they are declared once, checked once and answered once.
 */

export const IconUri = Type.String({ ...Url, format: 'uri' });

export const WorkloadRequestFields = {
  description: Type.Optional(ServiceDescription),
  ...ResourceRequestFields,
  gpu: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.gpu.max, default: 0 })),
  ephemeral_storage_in_gib: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.ephemeralStorageGib.max })),
  cpu_architecture: Type.Optional(Nullable(CpuArchitectureEnum)),
  ...InstanceRequestFields,
  healthchecks: HealthcheckRequest,
  auto_preview: Type.Optional(Type.Boolean({ default: true })),
  ports: Type.Optional(ServicePortRequestList),
  storage: Type.Optional(StorageRequestList),
  arguments: Type.Optional(Arguments),
  entrypoint: Type.Optional(Entrypoint),
  auto_deploy: Type.Optional(Nullable(Type.Boolean())),
  annotations_groups: Type.Optional(GroupReferenceList),
  labels_groups: Type.Optional(GroupReferenceList),
  icon_uri: Type.Optional(IconUri),
};

export const WorkloadResponseFields = {
  cpu: Type.Integer(),
  memory: Type.Integer(),
  gpu: Type.Integer(),
  ephemeral_storage_in_gib: Type.Optional(Type.Integer()),
  cpu_architecture: CpuArchitectureEnum,
  min_running_instances: Type.Integer(),
  max_running_instances: Type.Integer(),
  healthchecks: HealthcheckResponse,
  auto_preview: Type.Boolean(),
  ports: Type.Array(ServicePort),
  storage: StorageResponse,
  arguments: Type.Array(Type.String()),
  entrypoint: Type.Optional(Type.String()),
  auto_deploy: Type.Boolean(),
  annotations_groups: AnnotationsGroupResponseList,
  labels_groups: LabelsGroupResponseList,
  icon_uri: Type.String(),
  ...ResourceMaximumResponseFields,
};

/** The workload fields of a request body as the schema leaves them (an edit may leave any of them out). */
export interface WorkloadBody {
  cpu?: number;
  memory?: number;
  gpu?: number;
  ephemeral_storage_in_gib?: number;
  cpu_architecture?: 'AMD64' | 'ARM64' | null;
  min_running_instances?: number;
  max_running_instances?: number;
  healthchecks: HealthcheckBody;
  auto_preview?: boolean;
  ports?: ServicePortBody[];
  storage?: StorageBody[];
  arguments?: string[];
  entrypoint?: string;
  auto_deploy?: boolean | null;
  annotations_groups?: { id: string }[];
  labels_groups?: { id: string }[];
  icon_uri?: string;
}

export interface WorkloadSettings {
  cpu: number;
  memory: number;
  gpu: number;
  ephemeral_storage_in_gib: number | null;
  cpu_architecture: 'AMD64' | 'ARM64';
  min_running_instances: number;
  max_running_instances: number;
  healthchecks: StoredHealthchecks;
  auto_preview: boolean;
  auto_deploy: boolean;
  ports: StoredPort[];
  storage: StoredVolume[];
  arguments: string[];
  entrypoint: string | null;
  annotations_groups: string[];
  labels_groups: string[];
  icon_uri: string;
}

/**
 * The workload settings to store: a field left out keeps its current value (or takes its default on create).
 * Healthchecks are always given (the reference requires them) and checked against the ports the service will have.
 */
export async function workloadSettingsFrom(
  body: WorkloadBody,
  current: WorkloadSettings | undefined,
  context: ServiceKindContext,
  defaultIcon: string,
): Promise<WorkloadSettings> {
  const ports = body.ports !== undefined ? portsFrom(body.ports, current?.ports ?? []) : (current?.ports ?? []);
  const minInstances = body.min_running_instances ?? current?.min_running_instances ?? 1;
  const maxInstances = body.max_running_instances ?? current?.max_running_instances ?? 1;
  checkInstances(minInstances, maxInstances);
  return {
    cpu: body.cpu ?? current?.cpu ?? 500,
    memory: body.memory ?? current?.memory ?? 512,
    gpu: body.gpu ?? current?.gpu ?? 0,
    ephemeral_storage_in_gib: body.ephemeral_storage_in_gib ?? current?.ephemeral_storage_in_gib ?? null,
    cpu_architecture: body.cpu_architecture ?? current?.cpu_architecture ?? 'AMD64',
    min_running_instances: minInstances,
    max_running_instances: maxInstances,
    healthchecks: healthchecksFrom(body.healthchecks, ports),
    auto_preview: body.auto_preview ?? current?.auto_preview ?? true,
    auto_deploy: body.auto_deploy ?? current?.auto_deploy ?? true,
    ports,
    storage: body.storage !== undefined ? storageFrom(body.storage, current?.storage ?? []) : (current?.storage ?? []),
    arguments: body.arguments ?? current?.arguments ?? [],
    entrypoint: body.entrypoint ?? current?.entrypoint ?? null,
    annotations_groups: body.annotations_groups !== undefined ? await groupIdsFrom(body.annotations_groups, 'annotations', context) : (current?.annotations_groups ?? []),
    labels_groups: body.labels_groups !== undefined ? await groupIdsFrom(body.labels_groups, 'labels', context) : (current?.labels_groups ?? []),
    icon_uri: body.icon_uri ?? current?.icon_uri ?? defaultIcon,
  };
}

export function workloadResponse(settings: WorkloadSettings, linked: LinkedRecords) {
  return {
    cpu: settings.cpu,
    memory: settings.memory,
    gpu: settings.gpu,
    ...(settings.ephemeral_storage_in_gib !== null ? { ephemeral_storage_in_gib: settings.ephemeral_storage_in_gib } : {}),
    cpu_architecture: settings.cpu_architecture,
    min_running_instances: settings.min_running_instances,
    max_running_instances: settings.max_running_instances,
    healthchecks: healthchecksResponse(settings.healthchecks),
    auto_preview: settings.auto_preview,
    ports: settings.ports.map(portResponse),
    storage: settings.storage,
    arguments: settings.arguments,
    ...(settings.entrypoint !== null ? { entrypoint: settings.entrypoint } : {}),
    auto_deploy: settings.auto_deploy,
    annotations_groups: annotationsGroupsResponse(settings.annotations_groups, linked),
    labels_groups: labelsGroupsResponse(settings.labels_groups, linked),
    icon_uri: settings.icon_uri,
    ...RESOURCE_MAXIMUMS,
  };
}
