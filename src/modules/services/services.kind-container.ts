import { Type, type Static } from 'typebox';
import { ListOf, Uuid } from '../../protocol/wire.ts';
import {
  anyPublicPort,
  internalTcpPorts,
  checkRegistry,
  ImageName,
  ImageTag,
  RegistryResponse,
  registryResponse,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  kindWrites,
  settingsOf,
  withoutDefaults,
} from './services.kind-fields.ts';
import { workloadResponse, WorkloadRequestFields, WorkloadResponseFields, workloadSettingsFrom, type WorkloadSettings } from './services.kind-workload.ts';
import type { LinkedRecords, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * CONTAINER: an image pulled from one of the organization's container registries and run as long-lived instances.
 * Shapes: the reference's ContainerRequest (create and edit alike) and ContainerResponse, whose `registry` is the
 * registry's id, name, URL and kind (read from the registries module when answering).
 */

const DEFAULT_ICON = 'app://slipway-console/container';

const sourceFields = { registry_id: Uuid, image_name: ImageName, tag: ImageTag };

export const ContainerRequest = Type.Object(
  { name: ServiceName, ...sourceFields, ...WorkloadRequestFields },
  {
    $id: 'ContainerRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'storefront',
        description: 'The shop front',
        registry_id: 'b8c4e2a1-9f3d-4a6b-8e7c-1d5f0a2b3c49',
        image_name: 'acme/storefront',
        tag: '2.4.1',
        cpu: 250,
        memory: 256,
        ports: [{ internal_port: 3000, publicly_accessible: true, name: 'web', protocol: 'HTTP' }],
        healthchecks: {},
      },
    ],
  },
);
export type ContainerBody = Static<typeof ContainerRequest>;

/** editContainer takes a ContainerRequest too; optional fields left out keep their value (no defaults apply). */
const ContainerEditRequest = Type.Object(
  { name: ServiceName, ...sourceFields, ...withoutDefaults(WorkloadRequestFields) },
  { $id: 'ContainerEditRequest', additionalProperties: false },
);
type ContainerEditBody = Static<typeof ContainerEditRequest>;

export const ContainerResponse = Type.Object(
  {
    ...ServiceResponseFields,
    registry_id: Uuid,
    registry: RegistryResponse,
    image_name: Type.String(),
    tag: Type.String(),
    ...WorkloadResponseFields,
    service_type: Type.Literal('CONTAINER'),
  },
  {
    $id: 'ContainerResponse',
    examples: [
      {
        id: '5b8e1d3a-9c2f-4e76-a1d4-7f0b3e6c2a58',
        created_at: '2026-03-02T11:27:09.301Z',
        updated_at: '2026-03-02T11:27:09.301Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'storefront',
        description: 'The shop front',
        registry_id: 'b8c4e2a1-9f3d-4a6b-8e7c-1d5f0a2b3c49',
        registry: { id: 'b8c4e2a1-9f3d-4a6b-8e7c-1d5f0a2b3c49', name: 'ghcr-acme', url: 'https://ghcr.io', kind: 'GITHUB_CR' },
        image_name: 'acme/storefront',
        tag: '2.4.1',
        cpu: 250,
        memory: 256,
        gpu: 0,
        cpu_architecture: 'AMD64',
        min_running_instances: 1,
        max_running_instances: 1,
        healthchecks: { readiness_probe: null, liveness_probe: null },
        auto_preview: true,
        ports: [
          {
            id: '93c6a0e2-4f8b-4d15-9a7c-2e5d1b8f4c06',
            name: 'web',
            internal_port: 3000,
            publicly_accessible: true,
            is_default: true,
            protocol: 'HTTP',
            external_port: 443,
          },
        ],
        storage: [],
        arguments: [],
        auto_deploy: true,
        annotations_groups: [],
        labels_groups: [],
        icon_uri: 'app://slipway-console/container',
        maximum_cpu: 64000,
        maximum_memory: 262144,
        maximum_gpu: 16,
        service_type: 'CONTAINER',
      },
    ],
  },
);
export const ContainerResponseList = ListOf(ContainerResponse, 'ContainerResponseList');

export interface ContainerSettings extends WorkloadSettings {
  registry_id: string;
  image_name: string;
  tag: string;
}

async function containerSettings(body: ContainerEditBody, current: ContainerSettings | undefined, context: ServiceKindContext): Promise<ContainerSettings> {
  await checkRegistry(body.registry_id, context, 'registry_id');
  return {
    registry_id: body.registry_id,
    image_name: body.image_name,
    tag: body.tag,
    ...(await workloadSettingsFrom(body, current, context, DEFAULT_ICON)),
  };
}

export const containerKind: ServiceKindDefinition = {
  kind: 'CONTAINER',
  collection: 'container',
  item: 'container',
  idParam: 'containerId',
  operations: { list: 'listContainer', create: 'createContainer', get: 'getContainer', edit: 'editContainer', delete: 'deleteContainer' },
  operationNoun: 'Container',
  tags: ['Containers'],
  prose: {
    aService: 'a container',
    theService: 'the container',
    services: 'containers',
    what: "A container runs an image (image_name and tag) of one of the organization's container registries (registry_id), with its ports, resources and instance counts.",
    checks: "400 for ports or probes that do not fit together, storage that is not valid, or max_running_instances below min_running_instances; 404 for a container registry or a labels or annotations group that is not the organization's.",
  },
  createBody: ContainerRequest,
  editBody: ContainerEditRequest,
  response: ContainerResponse,
  listResponse: ContainerResponseList,

  ...kindWrites<ContainerBody, ContainerEditBody, ContainerSettings>(containerSettings),

  toResponse(service: StoredService, linked: LinkedRecords): Static<typeof ContainerResponse> {
    const settings = settingsOf<ContainerSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      registry_id: settings.registry_id,
      registry: registryResponse(settings.registry_id, linked),
      image_name: settings.image_name,
      tag: settings.tag,
      ...workloadResponse(settings, linked),
      service_type: 'CONTAINER',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<ContainerSettings>(stored);
    return {
      gitTokenId: null,
      containerRegistryId: settings.registry_id,
      helmRepositoryId: null,
      labelsGroupIds: settings.labels_groups,
      annotationsGroupIds: settings.annotations_groups,
      branch: null,
      publiclyReachable: anyPublicPort(settings.ports),
      internalPorts: internalTcpPorts(settings.ports),
    };
  },
};
