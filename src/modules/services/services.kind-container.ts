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
  { $id: 'ContainerRequest', additionalProperties: false },
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
  { $id: 'ContainerResponse' },
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
