import { useQuery } from '@tanstack/react-query';
import { apiRequest, messageOf, type components } from '../../api/client.ts';
import { CheckboxField, ErrorMessage, TextField } from '../../ui/controls.tsx';

type Template = components['schemas']['PlatformTemplateSummaryResponse'];
type Layer = components['schemas']['PlatformTemplateLayerResponse'];
/** The resolve operation's answer (a path built at run time, so read through apiRequest). */
interface Resolution {
  componentKey: string;
  fields: components['schemas']['FieldSchemaResponse'][];
  requirements: components['schemas']['PlatformComponentInputRequirementResponse'][];
  violations: components['schemas']['PlatformComponentConfigurationViolationResponse'][];
}

/** What the person chose for a template: layers on or off, component settings, and the cluster's own inputs. */
export interface PlatformChoice {
  layers: Record<string, boolean>;
  /** Per component, its settings typed as strings (the template's defaults are not repeated). */
  settings: Record<string, Record<string, string>>;
  /** Per component, the inputs only the cluster's owner knows (a VPC id, subnets). */
  inputs: Record<string, Record<string, string>>;
}

export const EMPTY_CHOICE: PlatformChoice = { layers: {}, settings: {}, inputs: {} };

/** A cluster's context in the catalog: its mode (SELF_MANAGED is CUSTOMER_MANAGED) and its provider (ON_PREMISE is UNKNOWN). */
export interface PlatformContext {
  mode: 'CUSTOMER_MANAGED' | 'PLATFORM_MANAGED';
  provider: string;
}

/** A new self-managed cluster's: customer-managed, on AWS. */
export const SELF_MANAGED_AWS: PlatformContext = { mode: 'CUSTOMER_MANAGED', provider: 'AWS' };

export function platformContextOf(cluster: { kubernetes: string; cloud_provider: string }): PlatformContext {
  return { mode: cluster.kubernetes === 'SELF_MANAGED' ? 'CUSTOMER_MANAGED' : 'PLATFORM_MANAGED', provider: cluster.cloud_provider === 'ON_PREMISE' ? 'UNKNOWN' : cluster.cloud_provider };
}

/** The layers a cluster of the context can have. */
export function layersFor(template: Template | undefined, context: PlatformContext = SELF_MANAGED_AWS): Layer[] {
  return (template?.layers ?? []).filter((layer) => layer.modes.includes(context.mode) && (layer.providers === null || layer.providers.includes(context.provider as never)));
}

export function isLayerOn(layer: Layer, choice: PlatformChoice): boolean {
  return layer.mandatory || (choice.layers[layer.key] ?? layer.enabledByDefault);
}

/** The request's platform_configuration beside templateKey/templateVersion, typed as the template's fields say. */
export function configurationOf(template: Template, choice: PlatformChoice, context: PlatformContext = SELF_MANAGED_AWS) {
  const layerSelections: Record<string, boolean> = {};
  const managedConfig: Record<string, Record<string, unknown>> = {};
  const customerProvidedInputs: Record<string, Record<string, string>> = {};
  for (const layer of layersFor(template, context)) {
    if (!layer.mandatory) layerSelections[layer.key] = isLayerOn(layer, choice);
    if (!isLayerOn(layer, choice)) continue;
    for (const component of layer.components) {
      const settings = Object.entries(choice.settings[component.key] ?? {}).filter(([, value]) => value.trim() !== '');
      if (settings.length > 0) {
        managedConfig[component.key] = Object.fromEntries(
          settings.map(([key, value]) => {
            const type = component.fields.find((field) => field.key === key)?.type;
            return [key, type === 'number' ? Number(value) : type === 'bool' ? value === 'true' : value.trim()];
          }),
        );
      }
      const inputs = Object.entries(choice.inputs[component.key] ?? {}).filter(([, value]) => value.trim() !== '');
      if (inputs.length > 0) customerProvidedInputs[component.key] = Object.fromEntries(inputs.map(([key, value]) => [key, value.trim()]));
    }
  }
  return { layerSelections, managedConfig, customerProvidedInputs };
}

/**
 * A template's layers (optional ones as checkboxes) and, for each component of the layers turned on, the API's
 * `resolve` preview in the cluster's context (a new self-managed cluster's: customer-managed on AWS) with the values
 * typed so far: its settings (the defaults shown as placeholders), the inputs the cluster must provide with MISSING or
 * READY, and the violations of the values.
 */
export function PlatformConfigurationFields({ organizationId, template, choice, onChange, context = SELF_MANAGED_AWS }: { organizationId: string; template: Template; choice: PlatformChoice; onChange: (choice: PlatformChoice) => void; context?: PlatformContext }) {
  return (
    <fieldset className="fieldset platform-configuration">
      <legend>Platform layers</legend>
      {layersFor(template, context).map((layer) => (
        <div key={layer.key} className="platform-layer">
          <CheckboxField
            id={`layer-${layer.key}`}
            label={`${layer.key}${layer.mandatory ? ' (always installed)' : ''}`}
            checked={isLayerOn(layer, choice)}
            onChange={(on) => (layer.mandatory ? undefined : onChange({ ...choice, layers: { ...choice.layers, [layer.key]: on } }))}
            {...(layer.description === null ? {} : { description: layer.description })}
          />
          {isLayerOn(layer, choice)
            ? layer.components.map((component) => <ComponentPreview key={component.key} organizationId={organizationId} template={template} componentKey={component.key} choice={choice} onChange={onChange} context={context} />)
            : null}
        </div>
      ))}
    </fieldset>
  );
}

function ComponentPreview({ organizationId, template, componentKey, choice, onChange, context }: { organizationId: string; template: Template; componentKey: string; choice: PlatformChoice; onChange: (choice: PlatformChoice) => void; context: PlatformContext }) {
  const settings = choice.settings[componentKey] ?? {};
  const inputs = choice.inputs[componentKey] ?? {};
  const url = `/organization/${organizationId}/platformTemplate/${encodeURIComponent(template.key)}/${encodeURIComponent(template.version)}/component/${encodeURIComponent(componentKey)}/resolve?clusterMode=${context.mode}&cloudProvider=${context.provider}`;
  const body = { clusterInputs: Object.fromEntries(Object.entries(inputs).filter(([, value]) => value !== '')) };
  const preview = useQuery({ queryKey: ['platform-resolve', url, body], queryFn: () => apiRequest<Resolution>('POST', url, body), placeholderData: (previous) => previous });
  const setSetting = (key: string, value: string) => onChange({ ...choice, settings: { ...choice.settings, [componentKey]: { ...settings, [key]: value } } });
  const setInput = (key: string, value: string) => onChange({ ...choice, inputs: { ...choice.inputs, [componentKey]: { ...inputs, [key]: value } } });
  const clusterInputs = (preview.data?.requirements ?? []).filter((requirement) => requirement.scope === 'CLUSTER');
  return (
    <div className="platform-component">
      <h3 className="platform-component-title">{componentKey}</h3>
      <ErrorMessage message={preview.isError ? messageOf(preview.error) : undefined} />
      {(preview.data?.fields ?? []).map((field) => (
        <TextField
          key={`setting-${field.key}`}
          label={`${field.label}${field.required && field.defaultValue === null ? '' : ' (optional)'}`}
          value={settings[field.key] ?? ''}
          onChange={(value) => setSetting(field.key, value)}
          {...(field.defaultValue === null ? {} : { placeholder: field.defaultValue, description: `${field.description ?? ''} Default: ${field.defaultValue}.`.trim() })}
          {...(field.defaultValue === null && field.description !== null ? { description: field.description } : {})}
          {...(field.sensitive ? { type: 'password' } : {})}
        />
      ))}
      {clusterInputs.map((requirement) => (
        <TextField
          key={`input-${requirement.key}`}
          label={`${requirement.label} (${requirement.status === 'READY' ? 'ready' : 'missing'})`}
          value={inputs[requirement.key] ?? ''}
          onChange={(value) => setInput(requirement.key, value)}
          {...(requirement.description === null ? {} : { description: requirement.description })}
        />
      ))}
      {(preview.data?.violations ?? []).map((violation) => (
        <p key={`${violation.fieldPath}-${violation.code}`} className="field-error">
          {violation.fieldPath}: {violation.message}
        </p>
      ))}
    </div>
  );
}
