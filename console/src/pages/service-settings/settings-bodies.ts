import type { ServiceKind } from '../../services/kinds.ts';

/** The stored service as the settings read it: every kind's fields, each optional (the kind says which it has). */
export type Stored = Record<string, unknown> & { name: string; description?: string | null };

/**
 * What the kind's edit operation requires whatever changes (the API keeps an optional field left out, but these must
 * be sent), taken from the stored service and shaped as the request takes them.
 */
export function requiredOf(kind: ServiceKind, service: Stored): Record<string, unknown> {
  switch (kind.name) {
    case 'application':
      return { healthchecks: service.healthchecks };
    case 'container':
      return { name: service.name, registry_id: service.registry_id, image_name: service.image_name, tag: service.tag, healthchecks: service.healthchecks };
    case 'job': {
      const source = service.source as { image?: { image_name: string; tag: string; registry_id: string } | null; docker?: unknown } | undefined;
      const image = source?.image;
      return {
        name: service.name,
        source: image === undefined || image === null ? { docker: source?.docker } : { image: { image_name: image.image_name, tag: image.tag, registry_id: image.registry_id } },
        healthchecks: service.healthchecks,
        schedule: service.schedule,
      };
    }
    case 'database':
      return {};
    case 'helm': {
      const source = service.source as { repository?: { chart_name: string; chart_version: string; repository: { id: string } }; git?: { git_repository: Record<string, unknown> } };
      return {
        name: service.name,
        source:
          source.repository === undefined
            ? { git_repository: source.git?.git_repository }
            : { helm_repository: { repository: source.repository.repository.id, chart_name: source.repository.chart_name, chart_version: source.repository.chart_version } },
      };
    }
    case 'terraform':
      return { name: service.name, terraform_files_source: service.terraform_files_source };
    case 'agenticWorkflow':
      return { name: service.name, model: service.model, instructions: service.instructions };
  }
}

export type Settings = Record<string, unknown>;

/** A setting's value as typed, read by the type of its default: numbers and booleans, lists and maps as JSON. */
export function parseSetting(input: string, defaultValue: unknown): unknown {
  const trimmed = input.trim();
  if (typeof defaultValue === 'string') return input;
  if (trimmed === '' && defaultValue === null) return null;
  try {
    return JSON.parse(trimmed);
  } catch {
    // Sent as typed: the server names the key and says what it takes.
    return input;
  }
}

export function showSetting(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
