import { Ajv, type ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import { Type, type Static } from 'typebox';

/**
 * The platform template catalog as it is written down: one JSON document per template release (bundled under
 * catalog/<templateKey>/<version>.json, or served by a remote catalog source as `{ "releases": [...] }`). Each release
 * is validated against CatalogRelease, then checked for what a schema cannot say (unique keys, bindings that name an
 * existing component output, defaults that satisfy their own constraints, patterns that compile). A release that
 * fails either check makes the whole catalog unloadable: serving half a catalog would let a cluster bind to a
 * template whose neighbours silently vanished.
 */

export const CLUSTER_MODES = ['PLATFORM_MANAGED', 'CUSTOMER_MANAGED'] as const;
export type ClusterMode = (typeof CLUSTER_MODES)[number];
export const CLOUD_VENDORS = ['AWS', 'SCW', 'GCP', 'DO', 'AZURE', 'OVH', 'CIVO', 'HETZNER', 'ORACLE', 'IBM', 'UNKNOWN'] as const;
export type CloudVendor = (typeof CLOUD_VENDORS)[number];
export const RELEASE_STATUSES = ['DRAFT', 'PUBLISHED', 'DEPRECATED'] as const;
export const COMPONENT_KINDS = ['HELM', 'TERRAFORM'] as const;
export const FIELD_TYPES = ['string', 'number', 'bool'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const Key = Type.String({ pattern: '^[a-z][a-z0-9-]{0,62}$' });
const FieldKey = Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' });
const Version = Type.String({ pattern: '^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$' });
const Text = Type.String({ minLength: 1, maxLength: 2000 });

/** Where a layer, field, override or binding applies; an absent list means "any". */
const CatalogCondition = Type.Object(
  {
    modes: Type.Optional(Type.Array(Type.Enum(CLUSTER_MODES), { minItems: 1, uniqueItems: true })),
    providers: Type.Optional(Type.Array(Type.Enum(CLOUD_VENDORS), { minItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false },
);

const CatalogConstraints = Type.Object(
  {
    allowedValues: Type.Optional(Type.Array(Type.String(), { minItems: 1, uniqueItems: true })),
    min: Type.Optional(Type.Integer()),
    max: Type.Optional(Type.Integer()),
    minLength: Type.Optional(Type.Integer({ minimum: 0 })),
    maxLength: Type.Optional(Type.Integer({ minimum: 0 })),
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** A context-specific change to a field: the first step of narrowing (overrides apply in order, later ones win). */
const CatalogFieldOverride = Type.Object(
  {
    when: CatalogCondition,
    required: Type.Optional(Type.Boolean()),
    defaultValue: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    constraints: Type.Optional(CatalogConstraints),
  },
  { additionalProperties: false },
);

const fieldProperties = {
  key: FieldKey,
  type: Type.Enum(FIELD_TYPES),
  label: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Text),
  required: Type.Boolean(),
  sensitive: Type.Optional(Type.Boolean()),
  defaultValue: Type.Optional(Type.String()),
  constraints: Type.Optional(CatalogConstraints),
  appliesTo: Type.Optional(CatalogCondition),
  overrides: Type.Optional(Type.Array(CatalogFieldOverride)),
};

/** A value of the component's platform profile (managedConfig), chosen by whoever configures the cluster. */
const CatalogField = Type.Object(fieldProperties, { additionalProperties: false });

/** Where a runtime input comes from in a context: the output of another component of the same release. */
const CatalogBinding = Type.Object(
  { when: Type.Optional(CatalogCondition), fromComponent: Key, output: FieldKey },
  { additionalProperties: false },
);

/**
 * A runtime input of the component that belongs to the cluster rather than to the profile (a VPC id, a load balancer
 * subnet): provided by the customer (customerProvidedInputs / clusterInputs) unless a binding applies in the
 * context, in which case another component's output provides it.
 */
const CatalogInput = Type.Object({ ...fieldProperties, boundTo: Type.Optional(Type.Array(CatalogBinding)) }, { additionalProperties: false });

const CatalogComponent = Type.Object(
  {
    key: Key,
    kind: Type.Enum(COMPONENT_KINDS),
    description: Type.Optional(Text),
    /** The Helm chart or Terraform module the component installs (informational here; the agent resolves it). */
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    fields: Type.Array(CatalogField),
    inputs: Type.Optional(Type.Array(CatalogInput)),
    outputs: Type.Optional(Type.Array(FieldKey, { uniqueItems: true })),
  },
  { additionalProperties: false },
);

const CatalogLayer = Type.Object(
  {
    key: Key,
    description: Type.Optional(Text),
    mandatory: Type.Boolean(),
    enabledByDefault: Type.Boolean(),
    modes: Type.Array(Type.Enum(CLUSTER_MODES), { minItems: 1, uniqueItems: true }),
    providers: Type.Optional(Type.Array(Type.Enum(CLOUD_VENDORS), { minItems: 1, uniqueItems: true })),
    components: Type.Array(CatalogComponent, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export const CatalogRelease = Type.Object(
  {
    key: Key,
    version: Version,
    status: Type.Enum(RELEASE_STATUSES),
    description: Type.Optional(Text),
    /** The cluster contexts the template is made for. */
    modes: Type.Array(Type.Enum(CLUSTER_MODES), { minItems: 1, uniqueItems: true }),
    providers: Type.Array(Type.Enum(CLOUD_VENDORS), { minItems: 1, uniqueItems: true }),
    layers: Type.Array(CatalogLayer, { minItems: 1 }),
  },
  { additionalProperties: false },
);

/** What a remote catalog source serves. */
export const RemoteCatalogDocument = Type.Object({ releases: Type.Array(CatalogRelease) });

export type CatalogCondition = Static<typeof CatalogCondition>;
export type CatalogConstraints = Static<typeof CatalogConstraints>;
export type CatalogField = Static<typeof CatalogField>;
export type CatalogInput = Static<typeof CatalogInput>;
export type CatalogComponent = Static<typeof CatalogComponent>;
export type CatalogLayer = Static<typeof CatalogLayer>;
export type CatalogRelease = Static<typeof CatalogRelease>;

/** A loaded, checked catalog: every release by `key@version`. */
export interface Catalog {
  releases: CatalogRelease[];
  find(templateKey: string, templateVersion: string): CatalogRelease | undefined;
}

/** Thrown when a catalog document is malformed; the message names the document and the first problems. */
export class CatalogInvalidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogInvalidError';
  }
}

/** Compiled on the first catalog read, not at start: most processes never read the catalog. */
let validators: { release: ValidateFunction<CatalogRelease>; remote: ValidateFunction<{ releases: CatalogRelease[] }> } | undefined;

function catalogValidators(): NonNullable<typeof validators> {
  if (validators === undefined) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    validators = { release: ajv.compile<CatalogRelease>(CatalogRelease), remote: ajv.compile<{ releases: CatalogRelease[] }>(RemoteCatalogDocument) };
  }
  return validators;
}

function schemaProblems(errors: ValidateFunction['errors']): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath === '' ? '/' : error.instancePath} ${error.message ?? 'is invalid'}`)
    .join('; ');
}

/** Parses one release document (a bundled file); `origin` names it in errors. */
export function parseRelease(document: unknown, origin: string): CatalogRelease {
  const validateRelease = catalogValidators().release;
  if (!validateRelease(document)) throw new CatalogInvalidError(`${origin}: ${schemaProblems(validateRelease.errors)}`);
  return document;
}

/** Parses what a remote catalog source answered. */
export function parseRemoteDocument(document: unknown, origin: string): CatalogRelease[] {
  const validateRemoteDocument = catalogValidators().remote;
  if (!validateRemoteDocument(document)) throw new CatalogInvalidError(`${origin}: ${schemaProblems(validateRemoteDocument.errors)}`);
  return document.releases;
}

const compiledPatterns = new Map<string, RE2JS>();

/**
 * Patterns come from catalog data, which may be remote: they run on RE2 (linear time) so no value can make a pattern
 * backtrack for ever. Like JSON Schema's `pattern`, a pattern matches anywhere unless it anchors itself.
 */
export function compilePattern(pattern: string): RE2JS {
  let compiled = compiledPatterns.get(pattern);
  if (compiled === undefined) {
    compiled = RE2JS.compile(pattern);
    compiledPatterns.set(pattern, compiled);
  }
  return compiled;
}

/** The semantic checks a schema cannot express; returns the problems found in one release. */
function releaseProblems(release: CatalogRelease): string[] {
  const problems: string[] = [];
  const outputs = new Map<string, Set<string>>();
  const layerKeys = new Set<string>();
  for (const layer of release.layers) {
    if (layerKeys.has(layer.key)) problems.push(`layer ${layer.key} appears twice`);
    layerKeys.add(layer.key);
    if (layer.mandatory && !layer.enabledByDefault) problems.push(`layer ${layer.key} is mandatory but not enabled by default`);
    for (const component of layer.components) {
      if (outputs.has(component.key)) problems.push(`component ${component.key} appears twice`);
      outputs.set(component.key, new Set(component.outputs ?? []));
    }
  }
  for (const layer of release.layers) {
    for (const component of layer.components) {
      const where = `component ${component.key}`;
      const keys = new Set<string>();
      for (const field of [...component.fields, ...(component.inputs ?? [])]) {
        if (keys.has(field.key)) problems.push(`${where}: field or input ${field.key} appears twice`);
        keys.add(field.key);
        problems.push(...fieldProblems(field, `${where} field ${field.key}`));
      }
      for (const input of component.inputs ?? []) {
        for (const binding of input.boundTo ?? []) {
          if (binding.fromComponent === component.key) problems.push(`${where} input ${input.key} is bound to its own output`);
          else if (!outputs.get(binding.fromComponent)?.has(binding.output)) {
            problems.push(`${where} input ${input.key} is bound to ${binding.fromComponent}.${binding.output}, which no component of the release outputs`);
          }
        }
      }
    }
  }
  return problems;
}

function constraintProblems(type: FieldType, constraints: CatalogConstraints | undefined, where: string): string[] {
  if (constraints === undefined) return [];
  const problems: string[] = [];
  if (constraints.pattern !== undefined) {
    try {
      compilePattern(constraints.pattern);
    } catch {
      problems.push(`${where}: pattern ${constraints.pattern} does not compile`);
    }
  }
  if (constraints.min !== undefined && constraints.max !== undefined && constraints.min > constraints.max) problems.push(`${where}: min is above max`);
  if (constraints.minLength !== undefined && constraints.maxLength !== undefined && constraints.minLength > constraints.maxLength) {
    problems.push(`${where}: minLength is above maxLength`);
  }
  if (type !== 'number' && (constraints.min !== undefined || constraints.max !== undefined)) problems.push(`${where}: min/max need a number field`);
  if (type !== 'string' && (constraints.minLength !== undefined || constraints.maxLength !== undefined || constraints.pattern !== undefined)) {
    problems.push(`${where}: minLength/maxLength/pattern need a string field`);
  }
  return problems;
}

function fieldProblems(field: CatalogField | CatalogInput, where: string): string[] {
  const problems = constraintProblems(field.type, field.constraints, where);
  for (const override of field.overrides ?? []) problems.push(...constraintProblems(field.type, override.constraints, `${where} override`));
  if (problems.length > 0) return problems;
  // Every context's effective default must satisfy that context's effective constraints.
  const contexts: (CatalogField | CatalogInput)[] = [field];
  for (const override of field.overrides ?? []) contexts.push(applyOverride(field, override));
  for (const effective of contexts) {
    if (effective.defaultValue === undefined) continue;
    const problem = valueProblem(effective, effective.defaultValue, true);
    if (problem !== undefined) problems.push(`${where}: default "${effective.defaultValue}" ${problem.message}`);
  }
  return problems;
}

/** A field with one override applied; a null defaultValue in the override removes the default. */
export function applyOverride<T extends CatalogField | CatalogInput>(field: T, override: NonNullable<T['overrides']>[number]): T {
  const next = { ...field };
  if (override.required !== undefined) next.required = override.required;
  if (override.defaultValue !== undefined) {
    if (override.defaultValue === null) delete next.defaultValue;
    else next.defaultValue = override.defaultValue;
  }
  if (override.constraints !== undefined) next.constraints = { ...field.constraints, ...override.constraints };
  return next;
}

export interface ValueProblem {
  code: 'INVALID_TYPE' | 'NOT_ALLOWED_VALUE' | 'BELOW_MIN' | 'ABOVE_MAX' | 'TOO_SHORT' | 'TOO_LONG' | 'PATTERN_MISMATCH';
  message: string;
}

/**
 * Checks one value against a field. Profile values are JSON (a number field takes a number, a bool field a boolean);
 * `fromText` accepts the text form instead, as cluster inputs and defaults are strings ("3", "true").
 */
export function valueProblem(field: Pick<CatalogField, 'type' | 'constraints'>, value: unknown, fromText: boolean): ValueProblem | undefined {
  const constraints = field.constraints ?? {};
  let text: string;
  if (field.type === 'number') {
    const number = fromText && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number)) return { code: 'INVALID_TYPE', message: 'must be a number' };
    if (constraints.min !== undefined && number < constraints.min) return { code: 'BELOW_MIN', message: `must be at least ${constraints.min}` };
    if (constraints.max !== undefined && number > constraints.max) return { code: 'ABOVE_MAX', message: `must be at most ${constraints.max}` };
    text = String(number);
  } else if (field.type === 'bool') {
    const bool = fromText && (value === 'true' || value === 'false') ? value === 'true' : value;
    if (typeof bool !== 'boolean') return { code: 'INVALID_TYPE', message: fromText ? 'must be true or false' : 'must be a boolean' };
    text = String(bool);
  } else {
    if (typeof value !== 'string') return { code: 'INVALID_TYPE', message: 'must be a string' };
    const length = [...value].length;
    if (constraints.minLength !== undefined && length < constraints.minLength) {
      return { code: 'TOO_SHORT', message: `must be at least ${constraints.minLength} characters` };
    }
    if (constraints.maxLength !== undefined && length > constraints.maxLength) {
      return { code: 'TOO_LONG', message: `must be at most ${constraints.maxLength} characters` };
    }
    if (constraints.pattern !== undefined && !compilePattern(constraints.pattern).matcher(value).find()) {
      return { code: 'PATTERN_MISMATCH', message: `must match ${constraints.pattern}` };
    }
    text = value;
  }
  if (constraints.allowedValues !== undefined && !constraints.allowedValues.includes(text)) {
    return { code: 'NOT_ALLOWED_VALUE', message: `must be one of ${constraints.allowedValues.join(', ')}` };
  }
  return undefined;
}

function compareVersions(left: string, right: string): number {
  const a = left.split('.').map(Number);
  const b = right.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Checks the releases as a whole and indexes them; throws CatalogInvalidError naming every problem found. */
export function buildCatalog(releases: CatalogRelease[], origin: string): Catalog {
  const problems: string[] = [];
  const byId = new Map<string, CatalogRelease>();
  for (const release of releases) {
    const id = `${release.key}@${release.version}`;
    if (byId.has(id)) problems.push(`${id} appears twice`);
    byId.set(id, release);
    problems.push(...releaseProblems(release).map((problem) => `${id}: ${problem}`));
  }
  if (problems.length > 0) throw new CatalogInvalidError(`${origin}: ${problems.slice(0, 5).join('; ')}`);
  const sorted = [...releases].sort((a, b) => (a.key === b.key ? compareVersions(b.version, a.version) : a.key < b.key ? -1 : 1));
  return { releases: sorted, find: (templateKey, templateVersion) => byId.get(`${templateKey}@${templateVersion}`) };
}
