import { Type, type Static, type TSchema } from 'typebox';
import { Uuid } from '../../protocol/wire.ts';
import { CLOUD_VENDORS, CLUSTER_MODES, COMPONENT_KINDS, FIELD_TYPES, RELEASE_STATUSES } from './platform-templates.catalog.ts';

/** Wire shapes of the reference's "Platform Configuration" operations (names and fields as there). */

export const PlatformClusterMode = Type.Enum(CLUSTER_MODES, { $id: 'PlatformClusterMode' });
export const PlatformCloudVendor = Type.Enum(CLOUD_VENDORS, { $id: 'PlatformCloudVendor' });
const PlatformTemplateReleaseStatus = Type.Enum(RELEASE_STATUSES, { $id: 'PlatformTemplateReleaseStatus' });
const PlatformTemplateComponentKind = Type.Enum(COMPONENT_KINDS, { $id: 'PlatformTemplateComponentKind' });
const PlatformLayerResolutionStatus = Type.Enum(['ENABLED', 'DISABLED', 'SKIPPED'], { $id: 'PlatformLayerResolutionStatus' });
const InputScope = Type.Enum(['PLATFORM_PROFILE', 'CLUSTER'], { $id: 'PlatformComponentConfigurationInputScope' });
const RequirementStatus = Type.Enum(['MISSING', 'READY'], { $id: 'PlatformComponentConfigurationRequirementStatus' });

/**
 * A JSON object whose values are `value` (the reference's `additionalProperties` maps). Its keys are not constrained
 * here (OpenAPI 3.0 has no propertyNames): a key that names no layer, component, field or input is refused by the
 * service as a problem of the configuration.
 */
function MapOf<T extends TSchema>(value: T, options: { $id?: string; maxProperties?: number } = {}) {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, maxProperties: 200, ...options });
}

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);

const FieldSchemaConstraintsResponse = Type.Object(
  {
    allowedValues: Type.Union([Type.Array(Type.String()), Type.Null()]),
    min: NullableInteger,
    max: NullableInteger,
    minLength: NullableInteger,
    maxLength: NullableInteger,
    pattern: NullableString,
  },
  { description: 'FieldSchemaConstraintsResponse: null where a constraint is not set.' },
);

const fieldSchemaProperties = {
  key: Type.String(),
  type: Type.Enum(FIELD_TYPES),
  required: Type.Boolean(),
  defaultValue: NullableString,
  label: Type.String(),
  description: NullableString,
  sensitive: Type.Boolean(),
  constraints: FieldSchemaConstraintsResponse,
};
const FieldSchemaResponse = Type.Object(fieldSchemaProperties, { $id: 'FieldSchemaResponse' });

const PlatformTemplateComponentResponse = Type.Object(
  { key: Type.String(), kind: PlatformTemplateComponentKind, description: NullableString, fields: Type.Array(FieldSchemaResponse) },
  { $id: 'PlatformTemplateComponentResponse' },
);

const PlatformTemplateLayerResponse = Type.Object(
  {
    key: Type.String(),
    mandatory: Type.Boolean(),
    enabledByDefault: Type.Boolean(),
    modes: Type.Array(PlatformClusterMode),
    providers: Type.Union([Type.Array(PlatformCloudVendor), Type.Null()]),
    componentKeys: Type.Array(Type.String()),
    components: Type.Array(PlatformTemplateComponentResponse),
    description: NullableString,
  },
  { $id: 'PlatformTemplateLayerResponse' },
);

const PlatformTemplateSummaryResponse = Type.Object(
  {
    key: Type.String(),
    version: Type.String(),
    status: PlatformTemplateReleaseStatus,
    description: NullableString,
    layers: Type.Array(PlatformTemplateLayerResponse),
  },
  { $id: 'PlatformTemplateSummaryResponse' },
);

export const PlatformTemplateCatalogResponse = Type.Object(
  { results: Type.Array(PlatformTemplateSummaryResponse) },
  { $id: 'PlatformTemplateCatalogResponse' },
);

export const PlatformTemplateListQuery = Type.Object(
  { clusterMode: Type.Optional(PlatformClusterMode), cloudProvider: Type.Optional(PlatformCloudVendor) },
  { additionalProperties: false },
);

const CatalogKey = Type.String({ minLength: 1, maxLength: 100 });
const StringValue = Type.String({ maxLength: 4096, pattern: '^[^\\x00]*$' });

export const ResolveParams = Type.Object(
  { organizationId: Uuid, templateKey: CatalogKey, templateVersion: CatalogKey, componentKey: CatalogKey },
  { additionalProperties: false },
);

export const ResolveQuery = Type.Object({ clusterMode: PlatformClusterMode, cloudProvider: PlatformCloudVendor }, { additionalProperties: false });

const PlatformConfigurationValues = MapOf(Type.Unknown(), { $id: 'PlatformConfigurationValues', maxProperties: 100 });
const StringValues = MapOf(StringValue, { maxProperties: 100 });
const PlatformComponentStringValuesMap = MapOf(StringValues, { $id: 'PlatformComponentStringValuesMap' });
const PlatformComponentConfigurationMap = MapOf(PlatformConfigurationValues, { $id: 'PlatformComponentConfigurationMap' });
const PlatformLayerSelections = MapOf(Type.Boolean(), { $id: 'PlatformLayerSelections' });

export const PlatformComponentConfigurationPreviewRequest = Type.Object(
  {
    profileConfig: Type.Optional(PlatformConfigurationValues),
    clusterInputs: Type.Optional(StringValues),
    componentOutputs: Type.Optional(PlatformComponentStringValuesMap),
  },
  { $id: 'PlatformComponentConfigurationPreviewRequest', additionalProperties: false },
);

export const PlatformComponentConfigurationResolutionResponse = Type.Object(
  {
    componentKey: Type.String(),
    fields: Type.Array(FieldSchemaResponse),
    requirements: Type.Array(
      Type.Object({ ...fieldSchemaProperties, scope: InputScope, status: RequirementStatus }, { $id: 'PlatformComponentInputRequirementResponse' }),
    ),
    componentBindings: Type.Array(
      Type.Object({ input: Type.String(), fromComponent: Type.String(), output: Type.String() }, { $id: 'PlatformComponentOutputBindingResponse' }),
    ),
    violations: Type.Array(
      Type.Object(
        { code: Type.String(), fieldPath: Type.String(), message: Type.String() },
        { $id: 'PlatformComponentConfigurationViolationResponse' },
      ),
    ),
  },
  { $id: 'PlatformComponentConfigurationResolutionResponse' },
);

/**
 * The reference's ClusterPlatformBindingRequest: a template release, layer selections, profile values per component
 * (managedConfig) and customer-provided runtime inputs per component. Also the `platform_configuration` of
 * SelfManagedClusterRequest. Deliberately without `$id`: it is embedded in other request schemas too.
 */
export const ClusterPlatformConfigurationRequest = Type.Object(
  {
    templateKey: CatalogKey,
    templateVersion: CatalogKey,
    layerSelections: Type.Optional(PlatformLayerSelections),
    managedConfig: Type.Optional(PlatformComponentConfigurationMap),
    customerProvidedInputs: Type.Optional(PlatformComponentStringValuesMap),
  },
  { additionalProperties: false },
);
export type ClusterPlatformConfigurationRequest = Static<typeof ClusterPlatformConfigurationRequest>;

export const ClusterPlatformBindingRequest = Type.Object(ClusterPlatformConfigurationRequest.properties, {
  $id: 'ClusterPlatformBindingRequest',
  additionalProperties: false,
});

export const ClusterPlatformBindingResponse = Type.Object(
  {
    clusterId: Uuid,
    organizationId: Uuid,
    templateKey: Type.String(),
    templateVersion: Type.String(),
    layerSelections: PlatformLayerSelections,
    managedConfig: PlatformComponentConfigurationMap,
    customerProvidedInputs: PlatformComponentStringValuesMap,
    layers: Type.Array(
      Type.Object(
        { key: Type.String(), status: PlatformLayerResolutionStatus, reason: Type.String(), componentKeys: Type.Array(Type.String()) },
        { $id: 'ClusterPlatformBindingLayerResponse' },
      ),
    ),
  },
  { $id: 'ClusterPlatformBindingResponse' },
);

export const ClusterParams = Type.Object({ organizationId: Uuid, clusterId: Uuid }, { additionalProperties: false });

