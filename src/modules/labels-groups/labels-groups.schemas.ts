import { Type } from 'typebox';
import { BaseFields, ListOf, Name, Uuid } from '../../protocol/wire.ts';

/**
 * A Kubernetes qualified name as typed: an optional DNS-subdomain prefix (≤ 253) and `/`, then a name (≤ 63). The
 * schema bounds the length and the characters; the service checks the structure and says which part is wrong.
 */
export const QualifiedKey = Type.String({ minLength: 1, maxLength: 317, pattern: '^[A-Za-z0-9._/-]+$' });

/** The reference's Label; `propagate_to_cloud_provider` (tag the cloud resources too) defaults to false. */
export const LabelRequest = Type.Object(
  {
    key: QualifiedKey,
    value: Type.String({ maxLength: 63 }),
    propagate_to_cloud_provider: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const Label = Type.Object(
  { key: Type.String(), value: Type.String(), propagate_to_cloud_provider: Type.Boolean() },
  { $id: 'Label' },
);

export const OrganizationLabelsGroupCreateRequest = Type.Object(
  { name: Name, labels: Type.Array(LabelRequest, { maxItems: 200 }) },
  {
    $id: 'OrganizationLabelsGroupCreateRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'cost-allocation',
        labels: [
          { key: 'acme.example/team', value: 'checkout', propagate_to_cloud_provider: true },
          { key: 'acme.example/cost-center', value: 'cc-4120' },
        ],
      },
    ],
  },
);

export const OrganizationLabelsGroupResponse = Type.Object(
  { ...BaseFields, name: Type.String(), labels: Type.Array(Label) },
  { $id: 'OrganizationLabelsGroupResponse' },
);
export const OrganizationLabelsGroupResponseList = ListOf(OrganizationLabelsGroupResponse, 'OrganizationLabelsGroupResponseList');

export const LabelsGroupParams = Type.Object({ organizationId: Uuid, labelsGroupId: Uuid }, { additionalProperties: false });

/** A cluster or service a group is attached to. */
export const GroupAssociatedItem = Type.Object(
  { item_id: Uuid, item_name: Type.String(), item_type: Type.String({ description: 'CLUSTER, or the service type (APPLICATION, CONTAINER, JOB, HELM, DATABASE, …)' }) },
  { $id: 'GroupAssociatedItem' },
);
export const GroupAssociatedItemList = ListOf(GroupAssociatedItem, 'GroupAssociatedItemList');
