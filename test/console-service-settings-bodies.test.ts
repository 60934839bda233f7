import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSetting, requiredOf, showSetting } from '../console/src/pages/service-settings/settings-bodies.ts';
import { KINDS, kindNamed, type ServiceKind } from '../console/src/services/kinds.ts';

function kind(name: string): ServiceKind {
  const found = kindNamed(name);
  if (found === undefined) throw new Error(`no kind ${name}`);
  return found;
}

/**
 * The service settings' request pieces (console/src/pages/service-settings/settings-bodies.ts): what each kind's edit
 * requires, taken from the stored service as the request takes it, and an advanced setting's value read by the type of
 * its default.
 */
describe('console service settings bodies', () => {
  it('sends each kind’s required edit fields from the stored service, shaped as the request takes them', () => {
    const healthchecks = { readiness_probe: null, liveness_probe: null };
    expect(requiredOf(kind('application'), { name: 'web', healthchecks, cpu: 500 })).toEqual({ healthchecks });
    expect(requiredOf(kind('container'), { name: 'api', registry_id: 'r', image_name: 'nginx', tag: '1', healthchecks, memory: 1 })).toEqual({ name: 'api', registry_id: 'r', image_name: 'nginx', tag: '1', healthchecks });
    expect(requiredOf(kind('database'), { name: 'db' })).toEqual({});
    // A job's image source loses the registry the answer adds (the request takes its id only).
    const schedule = { cronjob: { scheduled_at: '0 * * * *', timezone: 'Etc/UTC', arguments: [] } };
    expect(requiredOf(kind('job'), { name: 'cron', healthchecks, schedule, source: { image: { image_name: 'tool', tag: '2', registry_id: 'r', registry: { id: 'r', name: 'hub' } } } })).toEqual({
      name: 'cron',
      healthchecks,
      schedule,
      source: { image: { image_name: 'tool', tag: '2', registry_id: 'r' } },
    });
    // A Helm chart's answer names its repository as an object; the request takes the repository's id.
    expect(requiredOf(kind('helm'), { name: 'cache', source: { repository: { chart_name: 'redis', chart_version: '18.6.4', repository: { id: 'h', name: 'stable' } } } })).toEqual({
      name: 'cache',
      source: { helm_repository: { repository: 'h', chart_name: 'redis', chart_version: '18.6.4' } },
    });
    const git = { url: 'https://git.example.com/infra.git', branch: 'main', root_path: '/', provider: 'GITHUB', owner: '', name: 'infra', git_token_id: null };
    expect(requiredOf(kind('helm'), { name: 'chart', source: { git: { git_repository: git } } })).toEqual({ name: 'chart', source: { git_repository: git } });
    expect(requiredOf(kind('terraform'), { name: 'network', terraform_files_source: { git_repository: git }, engine: 'TERRAFORM' })).toEqual({ name: 'network', terraform_files_source: { git_repository: git } });
    const model = { provider: 'ANTHROPIC', model: 'claude', base_url: null, api_key_variable: 'KEY' };
    expect(requiredOf(kind('agenticWorkflow'), { name: 'agent', model, instructions: 'do', cpu: 500 })).toEqual({ name: 'agent', model, instructions: 'do' });
  });

  it('reads an advanced setting by its default’s type, and leaves what it cannot read for the server to name', () => {
    expect(parseSetting('900', 1800)).toBe(900);
    expect(parseSetting(' true ', false)).toBe(true);
    expect(parseSetting('["sh", "-c", "sleep 5"]', [])).toEqual(['sh', '-c', 'sleep 5']);
    expect(parseSetting('{"zone": "a"}', {})).toEqual({ zone: 'a' });
    // A string setting is taken as typed, even when it looks like a number or JSON.
    expect(parseSetting('42', 'Preferred')).toBe('42');
    expect(parseSetting(' spaced ', '')).toBe(' spaced ');
    // Empty for a setting whose default is null: back to null.
    expect(parseSetting('', null)).toBeNull();
    expect(parseSetting('30', null)).toBe(30);
    // Not JSON: sent as typed, the server's 400 names the key.
    expect(parseSetting('soon', 1800)).toBe('soon');
    expect(showSetting('Preferred')).toBe('Preferred');
    expect(showSetting(1800)).toBe('1800');
    expect(showSetting(['a'])).toBe('["a"]');
    expect(showSetting(null)).toBe('null');
  });

  it('describes the settings sections of every kind by what its API serves', () => {
    const sections = Object.fromEntries(KINDS.map((entry) => [entry.name, entry.settings]));
    expect(Object.keys(sections)).toEqual(['application', 'container', 'database', 'job', 'helm', 'terraform', 'agenticWorkflow']);
    // Deployment restrictions and advanced settings exist only where the API has their paths.
    expect(KINDS.filter((entry) => entry.settings.deploymentRestrictions).map((entry) => entry.name)).toEqual(['application', 'job', 'helm', 'terraform']);
    expect(KINDS.filter((entry) => entry.settings.advancedSettings !== undefined).map((entry) => entry.name)).toEqual(['application', 'container', 'job', 'helm', 'terraform']);
    expect(KINDS.filter((entry) => entry.settings.ports).map((entry) => entry.name)).toEqual(['application', 'container']);
    // …as the API description says: each flag matches the presence of the kind's path.
    const paths = Object.keys((JSON.parse(readFileSync('openapi/openapi.json', 'utf8')) as { paths: Record<string, unknown> }).paths);
    for (const entry of KINDS) {
      const item = `/${entry.name}/{${entry.name}Id}`;
      expect(paths.includes(`${item}/deploymentRestriction`), `${entry.name} deployment restrictions`).toBe(entry.settings.deploymentRestrictions);
      expect(paths.includes(`${item}/advancedSettings`), `${entry.name} advanced settings`).toBe(entry.settings.advancedSettings !== undefined);
      if (entry.settings.advancedSettings !== undefined) expect(paths).toContain(`/default${entry.settings.advancedSettings}AdvancedSettings`);
      expect(paths.includes(`${item}/customDomain`), `${entry.name} links`).toBe(entry.hasLinks);
      expect(paths).toContain(`/environment/{environmentId}/${entry.name}`);
    }
  });
});
