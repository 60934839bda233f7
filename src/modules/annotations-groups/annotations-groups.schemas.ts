import { Type } from 'typebox';
import { BaseFields, ListOf, Name, Uuid } from '../../protocol/wire.ts';
import { QualifiedKey } from '../labels-groups/labels-groups.schemas.ts';

/** The reference's OrganizationAnnotationsGroupScopeEnum: the kinds of Kubernetes objects a group annotates. */
export const ANNOTATIONS_GROUP_SCOPES = [
  'DEPLOYMENTS',
  'STATEFUL_SETS',
  'SERVICES',
  'INGRESS',
  'GATEWAY_API_ROUTES',
  'HPA',
  'PODS',
  'SECRETS',
  'JOBS',
  'CRON_JOBS',
] as const;
export type AnnotationsGroupScope = (typeof ANNOTATIONS_GROUP_SCOPES)[number];
export const OrganizationAnnotationsGroupScopeEnum = Type.Enum(ANNOTATIONS_GROUP_SCOPES, { $id: 'OrganizationAnnotationsGroupScopeEnum' });

/** Kubernetes bounds all annotations of an object together to 256 KiB; the service checks the total. */
export const ANNOTATIONS_TOTAL_BYTES = 256 * 1024;

export const AnnotationRequest = Type.Object(
  { key: QualifiedKey, value: Type.String({ maxLength: ANNOTATIONS_TOTAL_BYTES, pattern: '^[^\\x00]*$' }) },
  { additionalProperties: false },
);

export const Annotation = Type.Object({ key: Type.String(), value: Type.String() }, { $id: 'Annotation' });

export const OrganizationAnnotationsGroupCreateRequest = Type.Object(
  {
    name: Name,
    annotations: Type.Array(AnnotationRequest, { maxItems: 200 }),
    scopes: Type.Array(OrganizationAnnotationsGroupScopeEnum, { minItems: 1, uniqueItems: true }),
  },
  {
    $id: 'OrganizationAnnotationsGroupCreateRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'prometheus-scraping',
        annotations: [
          { key: 'prometheus.io/scrape', value: 'true' },
          { key: 'prometheus.io/port', value: '9090' },
        ],
        scopes: ['PODS', 'SERVICES'],
      },
    ],
  },
);

export const OrganizationAnnotationsGroupResponse = Type.Object(
  { ...BaseFields, name: Type.String(), annotations: Type.Array(Annotation), scopes: Type.Array(OrganizationAnnotationsGroupScopeEnum) },
  { $id: 'OrganizationAnnotationsGroupResponse' },
);
export const OrganizationAnnotationsGroupResponseList = ListOf(OrganizationAnnotationsGroupResponse, 'OrganizationAnnotationsGroupResponseList');

export const AnnotationsGroupParams = Type.Object({ organizationId: Uuid, annotationsGroupId: Uuid }, { additionalProperties: false });
