import { notFound } from '../../lib/errors.ts';

/**
 * An environment written out as Terraform configuration (exportEnvironmentConfigurationIntoTerraform,
 * docs/service-insights.md "Terraform export"): a `slipway` provider block, the environment as a
 * `slipway_environment` resource and each service as `slipway_<kind>` (application, container, database, job, helm,
 * terraform, agentic_workflow) whose arguments are the fields of the API's create request for that kind — the
 * shape of the provider of the API Slipway serves — referring to the environment resource rather than to its id.
 * Values are written literally (strings quoted and escaped, `${` and `%{` escaped so nothing is interpolated).
 *
 * Variables are not part of the export: values of secrets are never written; exportSecrets is accepted and changes
 * nothing until variables are exported (docs).
 */

export interface ExportedService {
  id: string;
  kind: string;
  name: string;
  description: string | null;
  settings: Record<string, unknown>;
}

export interface EnvironmentExportDeps {
  findEnvironment(environmentId: string): Promise<{ id: string; projectId: string; name: string; mode: string; clusterId: string } | undefined>;
  listEnvironmentServices(environmentId: string): Promise<ExportedService[]>;
}

const PROVIDER_SOURCE = 'slipway/slipway';

/** An HCL string literal: escapes, and template sequences doubled so the text is taken literally. */
function hclString(value: string): string {
  const escaped = value
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('\n', '\\n')
    .replaceAll('\r', '\\r')
    .replaceAll('\t', '\\t')
    .replaceAll('${', '$${')
    .replaceAll('%{', '%%{');
  // Other control characters as unicode escapes.
  let literal = '';
  for (const char of escaped) {
    const code = char.codePointAt(0) ?? 0;
    literal += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return `"${literal}"`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function hclKey(key: string): string {
  return IDENTIFIER.test(key) ? key : hclString(key);
}

/** A JSON value as an HCL expression, indented at `depth`. */
function hclValue(value: unknown, depth: number): string {
  const indent = '  '.repeat(depth + 1);
  const closing = '  '.repeat(depth);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return hclString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${indent}${hclValue(item, depth + 1)},`).join('\n')}\n${closing}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${indent}${hclKey(key)} = ${hclValue(item, depth + 1)}`).join('\n')}\n${closing}}`;
}

/** A resource label from a name: HCL identifier characters, unique among `taken`. */
function labelFor(name: string, taken: Set<string>): string {
  let base = name.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (base === '' || !/^[a-z_]/.test(base)) base = `s_${base}`;
  let label = base;
  for (let suffix = 2; taken.has(label); suffix += 1) label = `${base}_${suffix}`;
  taken.add(label);
  return label;
}

function resourceBlock(type: string, label: string, attributes: Array<[string, string]>): string {
  const lines = attributes.map(([key, expression]) => `  ${hclKey(key)} = ${expression}`);
  return `resource "${type}" "${label}" {\n${lines.join('\n')}\n}\n`;
}

export function createEnvironmentExport(deps: EnvironmentExportDeps) {
  return {
    /** The environment's configuration as one `.tf` file; 404 for an unknown environment. */
    async exportEnvironment(environmentId: string): Promise<{ filename: string; content: string }> {
      const environment = await deps.findEnvironment(environmentId);
      if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
      const services = await deps.listEnvironmentServices(environmentId);
      const taken = new Set<string>();
      const environmentLabel = labelFor(environment.name, taken);
      const blocks = [
        `# The environment ${environment.name} (${environment.id}) as Slipway serves it, exported ${new Date().toISOString()}.\n` +
          `terraform {\n  required_providers {\n    slipway = {\n      source = ${hclString(PROVIDER_SOURCE)}\n    }\n  }\n}\n`,
        resourceBlock('slipway_environment', environmentLabel, [
          ['project_id', hclString(environment.projectId)],
          ['cluster_id', hclString(environment.clusterId)],
          ['name', hclString(environment.name)],
          ['mode', hclString(environment.mode)],
        ]),
      ];
      const sorted = [...services].sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : 1) : a.kind === 'DATABASE' ? -1 : b.kind === 'DATABASE' ? 1 : a.kind < b.kind ? -1 : 1));
      for (const service of sorted) {
        const attributes: Array<[string, string]> = [
          ['environment_id', `slipway_environment.${environmentLabel}.id`],
          ['name', hclString(service.name)],
        ];
        if (service.description !== null && service.description !== '') attributes.push(['description', hclString(service.description)]);
        for (const [key, value] of Object.entries(service.settings)) {
          if (value === undefined || value === null || key === 'name' || key === 'description' || key === 'environment_id') continue;
          attributes.push([key, hclValue(value, 1)]);
        }
        blocks.push(resourceBlock(`slipway_${service.kind.toLowerCase()}`, labelFor(service.name, taken), attributes));
      }
      const fileName = environment.name.replace(/[^A-Za-z0-9._-]+/g, '_') || 'environment';
      return { filename: `${fileName}.tf`, content: blocks.join('\n') };
    },
  };
}

export type EnvironmentExport = ReturnType<typeof createEnvironmentExport>;
