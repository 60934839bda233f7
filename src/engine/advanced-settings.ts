/**
 * A service's advanced settings as its deployment carries them to a driver (docs/service-kinds.md, "Advanced
 * settings"): the control plane sends every key of the kind in `settings.advanced_settings`, its defaults included
 * (services.agent-spec.ts), so a driver reads a key and never keeps a default of its own. Readers answer undefined
 * for a key that is missing or of another type: a spec of an older control plane, or a kind without that key.
 */
function advancedSettingsIn(settings: { advanced_settings?: unknown }): Record<string, unknown> {
  const advanced = settings.advanced_settings;
  return typeof advanced === 'object' && advanced !== null && !Array.isArray(advanced) ? (advanced as Record<string, unknown>) : {};
}

export function advancedInteger(settings: { advanced_settings?: unknown }, key: string): number | undefined {
  const value = advancedSettingsIn(settings)[key];
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

export function advancedBoolean(settings: { advanced_settings?: unknown }, key: string): boolean | undefined {
  const value = advancedSettingsIn(settings)[key];
  return typeof value === 'boolean' ? value : undefined;
}

export function advancedString(settings: { advanced_settings?: unknown }, key: string): string | undefined {
  const value = advancedSettingsIn(settings)[key];
  return typeof value === 'string' ? value : undefined;
}

export function advancedStrings(settings: { advanced_settings?: unknown }, key: string): string[] | undefined {
  const value = advancedSettingsIn(settings)[key];
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/** A map of strings (node labels). */
export function advancedLabels(settings: { advanced_settings?: unknown }, key: string): Record<string, string> | undefined {
  const value = advancedSettingsIn(settings)[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, item]) => typeof item === 'string') ? (Object.fromEntries(entries) as Record<string, string>) : undefined;
}
