import type { FieldProblem } from '../../lib/errors.ts';
import {
  applyOverride,
  valueProblem,
  type CatalogComponent,
  type CatalogCondition,
  type CatalogField,
  type CatalogInput,
  type CatalogLayer,
  type CatalogRelease,
  type CloudVendor,
  type ClusterMode,
} from './platform-templates.catalog.ts';

/**
 * The rules that turn catalog data into what a cluster context sees: which layers and fields apply, their narrowed
 * constraints, which runtime inputs are ready, which values break a constraint, and how layers resolve for a stored
 * configuration. Pure functions over a release: no I/O, so the same rules serve the catalog listing, the read-only
 * resolve preview and the validation of a configuration before it is stored.
 */

export interface ClusterContext {
  mode: ClusterMode;
  provider: CloudVendor;
}

export function describeContext(context: ClusterContext): string {
  return `${context.mode} clusters on ${context.provider}`;
}

function conditionHolds(condition: CatalogCondition | undefined, context: ClusterContext): boolean {
  if (condition === undefined) return true;
  if (condition.modes !== undefined && !condition.modes.includes(context.mode)) return false;
  if (condition.providers !== undefined && !condition.providers.includes(context.provider)) return false;
  return true;
}

export function releaseApplies(release: CatalogRelease, context: ClusterContext): boolean {
  return release.modes.includes(context.mode) && release.providers.includes(context.provider);
}

export function layerApplies(layer: CatalogLayer, context: ClusterContext): boolean {
  return layer.modes.includes(context.mode) && (layer.providers === undefined || layer.providers.includes(context.provider));
}

/** The field as the context sees it (its overrides applied in order), or undefined when it does not apply there. */
export function narrowField<T extends CatalogField | CatalogInput>(field: T, context: ClusterContext | undefined): T | undefined {
  if (context === undefined) return field;
  if (!conditionHolds(field.appliesTo, context)) return undefined;
  let effective = field;
  for (const override of field.overrides ?? []) {
    if (conditionHolds(override.when, context)) effective = applyOverride(effective, override);
  }
  return effective;
}

function narrowAll<T extends CatalogField | CatalogInput>(fields: T[], context: ClusterContext | undefined): T[] {
  return fields.map((field) => narrowField(field, context)).filter((field): field is T => field !== undefined);
}

/** The binding of an input in the context, if one applies (the first that matches). */
function bindingOf(input: CatalogInput, context: ClusterContext) {
  return input.boundTo?.find((binding) => conditionHolds(binding.when, context));
}

// ---- wire views (FieldSchemaResponse and the catalog's summary shapes) ----

export function fieldView(field: CatalogField | CatalogInput) {
  const constraints = field.constraints ?? {};
  return {
    key: field.key,
    type: field.type,
    required: field.required,
    defaultValue: field.defaultValue ?? null,
    label: field.label,
    description: field.description ?? null,
    sensitive: field.sensitive ?? false,
    constraints: {
      allowedValues: constraints.allowedValues ?? null,
      min: constraints.min ?? null,
      max: constraints.max ?? null,
      minLength: constraints.minLength ?? null,
      maxLength: constraints.maxLength ?? null,
      pattern: constraints.pattern ?? null,
    },
  };
}

function componentView(component: CatalogComponent, context: ClusterContext | undefined) {
  return {
    key: component.key,
    kind: component.kind,
    description: component.description ?? null,
    fields: narrowAll(component.fields, context).map(fieldView),
  };
}

/** PlatformTemplateSummaryResponse; with a context, only what applies there, with narrowed constraints. */
export function templateView(release: CatalogRelease, context: ClusterContext | undefined) {
  const layers = context === undefined ? release.layers : release.layers.filter((layer) => layerApplies(layer, context));
  return {
    key: release.key,
    version: release.version,
    status: release.status,
    description: release.description ?? null,
    layers: layers.map((layer) => ({
      key: layer.key,
      mandatory: layer.mandatory,
      enabledByDefault: layer.enabledByDefault,
      modes: context === undefined ? layer.modes : [context.mode],
      providers: context === undefined ? (layer.providers ?? null) : [context.provider],
      componentKeys: layer.components.map((component) => component.key),
      components: layer.components.map((component) => componentView(component, context)),
      description: layer.description ?? null,
    })),
  };
}

export function findComponent(release: CatalogRelease, componentKey: string): { layer: CatalogLayer; component: CatalogComponent } | undefined {
  for (const layer of release.layers) {
    const component = layer.components.find((candidate) => candidate.key === componentKey);
    if (component !== undefined) return { layer, component };
  }
  return undefined;
}

// ---- checking values ----

export type ViolationCode =
  | NonNullable<ReturnType<typeof valueProblem>>['code']
  | 'UNKNOWN_FIELD'
  | 'UNKNOWN_INPUT'
  | 'BOUND_INPUT'
  | 'REQUIRED';

export interface Violation {
  code: ViolationCode;
  /** Where the value sits in the request, as a list of keys (rendered per operation). */
  path: string[];
  message: string;
}

function hasValue(values: Record<string, unknown> | undefined, key: string): boolean {
  return values !== undefined && Object.hasOwn(values, key);
}

/** Problems with a component's profile values (managedConfig / profileConfig): unknown keys and broken constraints. */
function profileViolations(fields: CatalogField[], values: Record<string, unknown>, path: string[]): Violation[] {
  const violations: Violation[] = [];
  const byKey = new Map(fields.map((field) => [field.key, field]));
  for (const [key, value] of Object.entries(values)) {
    const field = byKey.get(key);
    if (field === undefined) {
      violations.push({ code: 'UNKNOWN_FIELD', path: [...path, key], message: `${key} is not a configuration field here` });
      continue;
    }
    const problem = valueProblem(field, value, false);
    if (problem !== undefined) violations.push({ code: problem.code, path: [...path, key], message: `${field.label} ${problem.message}` });
  }
  return violations;
}

/** Problems with a component's customer-provided inputs: unknown inputs, inputs another component provides, bad values. */
function inputViolations(inputs: CatalogInput[], values: Record<string, string>, context: ClusterContext, path: string[]): Violation[] {
  const violations: Violation[] = [];
  const byKey = new Map(inputs.map((input) => [input.key, input]));
  for (const [key, value] of Object.entries(values)) {
    const input = byKey.get(key);
    if (input === undefined) {
      violations.push({ code: 'UNKNOWN_INPUT', path: [...path, key], message: `${key} is not a runtime input here` });
      continue;
    }
    const binding = bindingOf(input, context);
    if (binding !== undefined) {
      violations.push({
        code: 'BOUND_INPUT',
        path: [...path, key],
        message: `${input.label} is provided by output ${binding.output} of component ${binding.fromComponent} for ${describeContext(context)}`,
      });
      continue;
    }
    const problem = valueProblem(input, value, true);
    if (problem !== undefined) violations.push({ code: problem.code, path: [...path, key], message: `${input.label} ${problem.message}` });
  }
  return violations;
}

// ---- resolvePlatformTemplateComponentConfiguration ----

export interface ComponentPreview {
  profileConfig?: Record<string, unknown> | undefined;
  clusterInputs?: Record<string, string> | undefined;
  componentOutputs?: Record<string, Record<string, string>> | undefined;
}

/**
 * PlatformComponentConfigurationResolutionResponse. Requirements are the component's required profile fields (scope
 * PLATFORM_PROFILE: READY with a valid value or a default) and all its runtime inputs (scope CLUSTER: READY with a
 * valid customer-provided value, a default, the bound component output in componentOutputs, or when optional and
 * absent). Invalid values are violations and leave their requirement MISSING.
 */
export function resolveComponent(component: CatalogComponent, context: ClusterContext, preview: ComponentPreview) {
  const fields = narrowAll(component.fields, context);
  const inputs = narrowAll(component.inputs ?? [], context);
  const profile = preview.profileConfig ?? {};
  const clusterInputs = preview.clusterInputs ?? {};
  const violations = [
    ...profileViolations(fields, profile, ['profileConfig']),
    ...inputViolations(inputs, clusterInputs, context, ['clusterInputs']),
  ];
  const invalid = new Set(violations.map((violation) => violation.path.join('.')));
  const requirements = [];
  const componentBindings = [];
  for (const field of fields) {
    if (!field.required) continue;
    const given = hasValue(profile, field.key) && !invalid.has(`profileConfig.${field.key}`);
    const ready = given || field.defaultValue !== undefined;
    requirements.push({ ...fieldView(field), scope: 'PLATFORM_PROFILE' as const, status: ready ? ('READY' as const) : ('MISSING' as const) });
  }
  for (const input of inputs) {
    const binding = bindingOf(input, context);
    let ready: boolean;
    if (binding !== undefined) {
      componentBindings.push({ input: input.key, fromComponent: binding.fromComponent, output: binding.output });
      const output = preview.componentOutputs?.[binding.fromComponent]?.[binding.output];
      const problem = output === undefined ? undefined : valueProblem(input, output, true);
      if (problem !== undefined) {
        violations.push({
          code: problem.code,
          path: ['componentOutputs', binding.fromComponent, binding.output],
          message: `${input.label} ${problem.message}`,
        });
      }
      ready = output !== undefined && problem === undefined;
    } else {
      const given = hasValue(clusterInputs, input.key) && !invalid.has(`clusterInputs.${input.key}`);
      ready = given || input.defaultValue !== undefined || !input.required;
    }
    requirements.push({ ...fieldView(input), scope: 'CLUSTER' as const, status: ready ? ('READY' as const) : ('MISSING' as const) });
  }
  return {
    componentKey: component.key,
    fields: fields.map(fieldView),
    requirements,
    componentBindings,
    violations: violations.map((violation) => ({ code: violation.code, fieldPath: violation.path.join('.'), message: violation.message })),
  };
}

// ---- cluster platform configuration ----

export interface ConfigurationInput {
  layerSelections: Record<string, boolean>;
  managedConfig: Record<string, Record<string, unknown>>;
  customerProvidedInputs: Record<string, Record<string, string>>;
}

export type LayerStatus = 'ENABLED' | 'DISABLED' | 'SKIPPED';

/** ClusterPlatformBindingLayerResponse for every layer of the release, in catalog order. */
export function resolveLayers(release: CatalogRelease, context: ClusterContext, selections: Record<string, boolean>) {
  return release.layers.map((layer) => {
    const componentKeys = layer.components.map((component) => component.key);
    const selected = selections[layer.key];
    let status: LayerStatus;
    let reason: string;
    if (!layerApplies(layer, context)) {
      status = 'SKIPPED';
      reason = `the layer does not apply to ${describeContext(context)}`;
    } else if (layer.mandatory) {
      status = 'ENABLED';
      reason = 'the layer is mandatory';
    } else if (selected !== undefined) {
      status = selected ? 'ENABLED' : 'DISABLED';
      reason = selected ? 'enabled by the layer selection' : 'disabled by the layer selection';
    } else {
      status = layer.enabledByDefault ? 'ENABLED' : 'DISABLED';
      reason = layer.enabledByDefault ? 'enabled by default' : 'disabled by default';
    }
    return { key: layer.key, status, reason, componentKeys };
  });
}

/** JSON pointer of a request location (RFC 6901 escaping), as the error body's details carry. */
export function pointer(path: string[]): string {
  return `/${path.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

/**
 * Every problem with a configuration for a release in a context, as error details. Layer selections must name
 * layers of the release, may not disable a mandatory layer nor enable one that does not apply; values must name
 * components of applicable layers and satisfy their fields; the enabled components' required profile fields need a
 * value or a default. Missing runtime inputs are not problems here: they are runtime requirements, reported MISSING
 * by the resolve preview until the customer or a component provides them.
 */
export function configurationProblems(release: CatalogRelease, context: ClusterContext, input: ConfigurationInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const layers = new Map(release.layers.map((layer) => [layer.key, layer]));
  for (const [key, enabled] of Object.entries(input.layerSelections)) {
    const layer = layers.get(key);
    const path = pointer(['layerSelections', key]);
    if (layer === undefined) problems.push({ field: path, message: `the template has no layer ${key}` });
    else if (!layerApplies(layer, context) && enabled) problems.push({ field: path, message: `layer ${key} does not apply to ${describeContext(context)}` });
    else if (layer.mandatory && !enabled) problems.push({ field: path, message: `layer ${key} is mandatory and cannot be disabled` });
  }
  const statuses = new Map(resolveLayers(release, context, input.layerSelections).map((layer) => [layer.key, layer.status]));

  const componentFor = (section: 'managedConfig' | 'customerProvidedInputs', componentKey: string) => {
    const found = findComponent(release, componentKey);
    if (found === undefined) {
      problems.push({ field: pointer([section, componentKey]), message: `the template has no component ${componentKey}` });
      return undefined;
    }
    if (statuses.get(found.layer.key) === 'SKIPPED') {
      problems.push({ field: pointer([section, componentKey]), message: `component ${componentKey} is in layer ${found.layer.key}, which does not apply to ${describeContext(context)}` });
      return undefined;
    }
    return found.component;
  };
  const toProblem = (violation: Violation): FieldProblem => ({ field: pointer(violation.path), message: violation.message });

  for (const [componentKey, values] of Object.entries(input.managedConfig)) {
    const component = componentFor('managedConfig', componentKey);
    if (component === undefined) continue;
    problems.push(...profileViolations(narrowAll(component.fields, context), values, ['managedConfig', componentKey]).map(toProblem));
  }
  for (const [componentKey, values] of Object.entries(input.customerProvidedInputs)) {
    const component = componentFor('customerProvidedInputs', componentKey);
    if (component === undefined) continue;
    problems.push(...inputViolations(narrowAll(component.inputs ?? [], context), values, context, ['customerProvidedInputs', componentKey]).map(toProblem));
  }
  for (const layer of release.layers) {
    if (statuses.get(layer.key) !== 'ENABLED') continue;
    for (const component of layer.components) {
      for (const field of narrowAll(component.fields, context)) {
        if (field.required && field.defaultValue === undefined && !hasValue(input.managedConfig[component.key], field.key)) {
          problems.push({ field: pointer(['managedConfig', component.key, field.key]), message: `${field.label} is required (layer ${layer.key} is enabled)` });
        }
      }
    }
  }
  return problems;
}

/** Which profile fields and runtime inputs of a release are sensitive (sealed at rest, never answered). */
export function sensitiveKeys(release: CatalogRelease): { fields: Map<string, Set<string>>; inputs: Map<string, Set<string>> } {
  const fields = new Map<string, Set<string>>();
  const inputs = new Map<string, Set<string>>();
  for (const layer of release.layers) {
    for (const component of layer.components) {
      fields.set(component.key, new Set(component.fields.filter((field) => field.sensitive === true).map((field) => field.key)));
      inputs.set(component.key, new Set((component.inputs ?? []).filter((input) => input.sensitive === true).map((input) => input.key)));
    }
  }
  return { fields, inputs };
}
