import { readFile } from 'node:fs/promises';
import { connect, dataOf, type AnswerOf, type Api, type ApiClient } from './api-client.ts';
import { parseDotenv } from './dotenv.ts';
import { printJson, printTable } from './output.ts';
import { environmentNamed, projectNamed, serviceNamed, type ServiceKind } from './services.ts';
import { CliError, type CliIo } from './sign-in.ts';
import { organizationScope, type OrganizationOptions } from './team.ts';

/**
 * `slipway var set|list|unset|import`: the variables and secrets of a project, an environment or a service
 * (docs/variables.md). Each command acts on the narrowest scope named: --service (a name looked up within --env),
 * else --env (a name looked up within --project), else --project.
 */

type VariableView = AnswerOf<'listApplicationEnvironmentVariable'>['results'][number];
type SecretView = AnswerOf<'listApplicationSecrets'>['results'][number];
type Scope = VariableView['scope'];
type Written = Pick<AnswerOf<'createApplicationEnvironmentVariable', 201>, 'id' | 'key' | 'scope'>;
interface VariableBody {
  key: string;
  value: string;
}

/** What one scope's paths offer (`/project/{id}/…`, `/environment/{id}/…`, `/<kind>/{id}/…`). */
interface VariableOperations {
  /**
   * Every variable visible from the scope, broader scopes and built-ins included (docs/variables.md rule 1); hidden
   * built-in values only when revealed (the API answers 403 to a caller who may not).
   */
  list(reveal: boolean): Promise<{ results: VariableView[] }>;
  listSecrets(): Promise<{ results: SecretView[] }>;
  /** Creating a name the scope has already replaces it (SPEC.md rule 3). */
  create(body: VariableBody, secret: boolean): Promise<Written>;
  edit(id: string, body: VariableBody, secret: boolean): Promise<Written>;
  remove(id: string, secret: boolean): Promise<void>;
}

/** `?reveal=true` only when asked: without it the API hides sensitive built-ins, and asks for no permission. */
function revealQuery(reveal: boolean): { reveal?: boolean } {
  return reveal ? { reveal: true } : {};
}

/** A DELETE's answer has no body: the client has thrown for a refusal already, so there is nothing left to read. */
async function removed(pending: Promise<unknown>): Promise<void> {
  await pending;
}

/** The variable paths of each kind that has variables of its own (a database provides built-ins instead). */
const SERVICE_VARIABLES: Partial<Record<ServiceKind['kind'], (api: Api, id: string) => VariableOperations>> = {
  APPLICATION: (api, applicationId) => {
    const path = { applicationId };
    return {
      list: (reveal) => dataOf(api.GET('/application/{applicationId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
      listSecrets: () => dataOf(api.GET('/application/{applicationId}/secret', { params: { path } })),
      create: (body, secret) =>
        secret
          ? dataOf(api.POST('/application/{applicationId}/secret', { params: { path }, body }))
          : dataOf(api.POST('/application/{applicationId}/environmentVariable', { params: { path }, body })),
      edit: (id, body, secret) =>
        secret
          ? dataOf(api.PUT('/application/{applicationId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
          : dataOf(api.PUT('/application/{applicationId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
      remove: (id, secret) =>
        removed(
          secret
            ? api.DELETE('/application/{applicationId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
            : api.DELETE('/application/{applicationId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
        ),
    };
  },
  CONTAINER: (api, containerId) => {
    const path = { containerId };
    return {
      list: (reveal) => dataOf(api.GET('/container/{containerId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
      listSecrets: () => dataOf(api.GET('/container/{containerId}/secret', { params: { path } })),
      create: (body, secret) =>
        secret
          ? dataOf(api.POST('/container/{containerId}/secret', { params: { path }, body }))
          : dataOf(api.POST('/container/{containerId}/environmentVariable', { params: { path }, body })),
      edit: (id, body, secret) =>
        secret
          ? dataOf(api.PUT('/container/{containerId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
          : dataOf(api.PUT('/container/{containerId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
      remove: (id, secret) =>
        removed(
          secret
            ? api.DELETE('/container/{containerId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
            : api.DELETE('/container/{containerId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
        ),
    };
  },
  JOB: (api, jobId) => {
    const path = { jobId };
    return {
      list: (reveal) => dataOf(api.GET('/job/{jobId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
      listSecrets: () => dataOf(api.GET('/job/{jobId}/secret', { params: { path } })),
      create: (body, secret) =>
        secret ? dataOf(api.POST('/job/{jobId}/secret', { params: { path }, body })) : dataOf(api.POST('/job/{jobId}/environmentVariable', { params: { path }, body })),
      edit: (id, body, secret) =>
        secret
          ? dataOf(api.PUT('/job/{jobId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
          : dataOf(api.PUT('/job/{jobId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
      remove: (id, secret) =>
        removed(
          secret
            ? api.DELETE('/job/{jobId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
            : api.DELETE('/job/{jobId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
        ),
    };
  },
  HELM: (api, helmId) => {
    const path = { helmId };
    return {
      list: (reveal) => dataOf(api.GET('/helm/{helmId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
      listSecrets: () => dataOf(api.GET('/helm/{helmId}/secret', { params: { path } })),
      create: (body, secret) =>
        secret ? dataOf(api.POST('/helm/{helmId}/secret', { params: { path }, body })) : dataOf(api.POST('/helm/{helmId}/environmentVariable', { params: { path }, body })),
      edit: (id, body, secret) =>
        secret
          ? dataOf(api.PUT('/helm/{helmId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
          : dataOf(api.PUT('/helm/{helmId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
      remove: (id, secret) =>
        removed(
          secret
            ? api.DELETE('/helm/{helmId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
            : api.DELETE('/helm/{helmId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
        ),
    };
  },
  TERRAFORM: (api, terraformId) => {
    const path = { terraformId };
    return {
      list: (reveal) => dataOf(api.GET('/terraform/{terraformId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
      listSecrets: () => dataOf(api.GET('/terraform/{terraformId}/secret', { params: { path } })),
      create: (body, secret) =>
        secret
          ? dataOf(api.POST('/terraform/{terraformId}/secret', { params: { path }, body }))
          : dataOf(api.POST('/terraform/{terraformId}/environmentVariable', { params: { path }, body })),
      edit: (id, body, secret) =>
        secret
          ? dataOf(api.PUT('/terraform/{terraformId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
          : dataOf(api.PUT('/terraform/{terraformId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
      remove: (id, secret) =>
        removed(
          secret
            ? api.DELETE('/terraform/{terraformId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
            : api.DELETE('/terraform/{terraformId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
        ),
    };
  },
};

function environmentVariables(api: Api, environmentId: string): VariableOperations {
  const path = { environmentId };
  return {
    list: (reveal) => dataOf(api.GET('/environment/{environmentId}/environmentVariable', { params: { path, query: revealQuery(reveal) } })),
    listSecrets: () => dataOf(api.GET('/environment/{environmentId}/secret', { params: { path } })),
    create: (body, secret) =>
      secret
        ? dataOf(api.POST('/environment/{environmentId}/secret', { params: { path }, body }))
        : dataOf(api.POST('/environment/{environmentId}/environmentVariable', { params: { path }, body })),
    edit: (id, body, secret) =>
      secret
        ? dataOf(api.PUT('/environment/{environmentId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
        : dataOf(api.PUT('/environment/{environmentId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
    remove: (id, secret) =>
      removed(
        secret
          ? api.DELETE('/environment/{environmentId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
          : api.DELETE('/environment/{environmentId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
      ),
  };
}

function projectVariables(api: Api, projectId: string): VariableOperations {
  const path = { projectId };
  return {
    // A project holds no built-ins, so nothing of its listing is hidden and there is nothing to reveal.
    list: () => dataOf(api.GET('/project/{projectId}/environmentVariable', { params: { path } })),
    listSecrets: () => dataOf(api.GET('/project/{projectId}/secret', { params: { path } })),
    create: (body, secret) =>
      secret
        ? dataOf(api.POST('/project/{projectId}/secret', { params: { path }, body }))
        : dataOf(api.POST('/project/{projectId}/environmentVariable', { params: { path }, body })),
    edit: (id, body, secret) =>
      secret
        ? dataOf(api.PUT('/project/{projectId}/secret/{secretId}', { params: { path: { ...path, secretId: id } }, body }))
        : dataOf(api.PUT('/project/{projectId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } }, body })),
    remove: (id, secret) =>
      removed(
        secret
          ? api.DELETE('/project/{projectId}/secret/{secretId}', { params: { path: { ...path, secretId: id } } })
          : api.DELETE('/project/{projectId}/environmentVariable/{environmentVariableId}', { params: { path: { ...path, environmentVariableId: id } } }),
      ),
  };
}

export interface VariableScopeOptions extends OrganizationOptions {
  project?: string | undefined;
  env?: string | undefined;
  service?: string | undefined;
  secret?: boolean | undefined;
  reveal?: boolean | undefined;
}

interface VariableScope extends VariableOperations {
  /** How messages name it: "application web", "environment staging", "project shop". */
  label: string;
  /** Whether a row of a listing was written at this scope (rather than seen from a broader one, or built in). */
  owns(scope: Scope): boolean;
}

/** How far a scope reaches, broadest first: a narrower definition of a name wins (docs/variables.md, precedence). */
function rankOf(scope: Scope): number {
  if (scope === 'BUILT_IN') return 0;
  if (scope === 'PROJECT') return 1;
  if (scope === 'ENVIRONMENT') return 2;
  return 3;
}

/** The narrowest scope named: --service, else --env, else --project. */
async function variableScope(client: ApiClient, options: VariableScopeOptions, io: CliIo): Promise<VariableScope> {
  const { api } = client;
  if (options.service !== undefined) {
    const service = await serviceNamed(client, options.service, options, io);
    const operations = SERVICE_VARIABLES[service.kind.kind];
    if (operations === undefined) throw new CliError(`a ${service.kind.path} has no variables of its own; use the environment's`);
    return { label: `${service.kind.path} ${service.name}`, owns: (scope) => rankOf(scope) === 3, ...operations(api, service.id) };
  }
  if (options.env !== undefined) {
    const environment = await environmentNamed(client, options, io);
    return { label: `environment ${environment.label}`, owns: (scope) => scope === 'ENVIRONMENT', ...environmentVariables(api, environment.id) };
  }
  if (options.project !== undefined) {
    const { organizationId } = await organizationScope(options, io);
    const projectId = await projectNamed(client, organizationId, options.project);
    return { label: `project ${options.project}`, owns: (scope) => scope === 'PROJECT', ...projectVariables(api, projectId) };
  }
  throw new CliError('name the scope: --project <id|name>, --env <id|name> or --service <id|name> (with --env)');
}

/** A definition as `var list` shows it: the API's row, whether it is a secret, and what narrower definition hides it. */
type Definition = (VariableView | SecretView) & { secret: boolean; shadowed_by: Scope | null };

async function definitionsOf(scope: VariableScope, reveal = false): Promise<Definition[]> {
  const [variables, secrets] = await Promise.all([scope.list(reveal), scope.listSecrets()]);
  const all = [
    ...variables.results.map((row) => ({ ...row, secret: false })),
    ...secrets.results.map((row) => ({ ...row, secret: true })),
  ].sort((a, b) => (a.key === b.key ? rankOf(a.scope) - rankOf(b.scope) : a.key < b.key ? -1 : 1));
  // Sorted broadest first, so the last definition of a name is the one that wins.
  const winners = new Map(all.map((definition) => [definition.key, definition]));
  return all.map((definition) => {
    const winner = winners.get(definition.key);
    return { ...definition, shadowed_by: winner === undefined || winner === definition ? null : winner.scope };
  });
}

/** Sets a variable (or with --secret a secret): a name already set at that scope is replaced (SPEC.md rule 3). */
export async function setVariable(key: string, value: string, options: VariableScopeOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const scope = await variableScope(client, options, io);
  const created = await scope.create({ key, value }, options.secret === true);
  if (options.json === true) return printJson(io, created);
  io.out(`Set ${options.secret === true ? 'secret' : 'variable'} ${created.key} on ${scope.label} (${created.scope}).\n`);
}

const MASK = '********';
const SHOWN_VALUE_LENGTH = 60;

/** A value on one table line: line breaks and tabs escaped, long values cut. */
function displayValue(value: string): string {
  const escaped = value.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t');
  return escaped.length > SHOWN_VALUE_LENGTH ? `${escaped.slice(0, SHOWN_VALUE_LENGTH - 1)}…` : escaped;
}

/** Where a definition's value comes from, beyond its scope: the alias it follows, what it overrides, what hides it. */
function provenanceOf(definition: Definition): string {
  const notes: string[] = [];
  const aliased = 'aliased_variable' in definition ? definition.aliased_variable : 'aliased_secret' in definition ? definition.aliased_secret : undefined;
  const overridden = 'overridden_variable' in definition ? definition.overridden_variable : 'overridden_secret' in definition ? definition.overridden_secret : undefined;
  if (definition.variable_type === 'ALIAS') notes.push(aliased === undefined ? 'alias of a name that resolves to nothing' : `alias of ${aliased.key} (${aliased.scope})`);
  if (overridden !== undefined) notes.push(`overrides ${overridden.scope}`);
  if (definition.service_name !== undefined && definition.scope === 'BUILT_IN') notes.push(`of ${definition.service_type?.toLowerCase() ?? 'service'} ${definition.service_name}`);
  if (definition.mount_path !== null) notes.push(`file at ${definition.mount_path}`);
  if (definition.shadowed_by !== null) notes.push(`shadowed by ${definition.shadowed_by}`);
  return notes.join('; ');
}

/**
 * Every variable and secret the scope sees, with where each comes from; secret values masked, and hidden built-in
 * values unless --reveal asks for them.
 */
export async function listVariables(options: VariableScopeOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const scope = await variableScope(client, options, io);
  const definitions = await definitionsOf(scope, options.reveal === true);
  if (options.json === true) return printJson(io, { results: definitions });
  const rows = definitions.map((definition) => {
    const value = definition.secret ? MASK : 'value' in definition && definition.value !== undefined ? displayValue(definition.value) : `${MASK} (hidden)`;
    const type = definition.secret ? (definition.variable_type === 'VALUE' ? 'SECRET' : `SECRET ${definition.variable_type}`) : definition.variable_type;
    return [definition.key, value, definition.scope, type, provenanceOf(definition)];
  });
  printTable(io, ['KEY', 'VALUE', 'SCOPE', 'TYPE', 'PROVENANCE'], rows, `No variables on ${scope.label}.`);
}

/** Removes a name set at the scope; what a broader scope defines for it shows again (docs/variables.md rule 3). */
export async function unsetVariable(key: string, options: VariableScopeOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const scope = await variableScope(client, options, io);
  const named = (await definitionsOf(scope)).filter((definition) => definition.key === key);
  const own = named.find((definition) => scope.owns(definition.scope));
  if (own === undefined) {
    const broader = named.at(-1);
    throw new CliError(
      broader === undefined
        ? `${scope.label} has no variable or secret named ${key}`
        : `${key} is not set on ${scope.label}: it comes from ${broader.scope === 'BUILT_IN' ? 'the built-ins' : broader.scope}; unset it there`,
    );
  }
  await scope.remove(own.id, own.secret);
  const revealed = named.filter((definition) => definition !== own).at(-1);
  if (options.json === true) return printJson(io, { id: own.id, key, scope: own.scope, secret: own.secret, removed: true, now_from: revealed?.scope ?? null });
  io.out(`Unset ${own.secret ? 'secret' : 'variable'} ${key} on ${scope.label} (${own.scope}).${revealed === undefined ? '' : ` ${key} now comes from ${revealed.scope}.`}\n`);
}

type ImportOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Writes the variables of a .env file at the scope: a new name is created, a changed value updated in place, an equal
 * one left alone. A secret's value cannot be read back, so an imported secret that exists counts as updated. Every
 * conflict is found before the first write: a name that is a secret at the scope cannot be imported as a plain
 * variable, nor the other way round.
 */
export async function importVariables(file: string, options: VariableScopeOptions, io: CliIo): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  const entries = parseDotenv(text, file);
  const client = await connect(options, io);
  const scope = await variableScope(client, options, io);
  const secret = options.secret === true;
  const own = new Map((await definitionsOf(scope)).filter((definition) => scope.owns(definition.scope)).map((definition) => [definition.key, definition]));
  const conflicts = entries.filter((entry) => {
    const existing = own.get(entry.key);
    return existing !== undefined && existing.secret !== secret;
  });
  if (conflicts.length > 0) {
    const names = conflicts.map((entry) => entry.key).join(', ');
    throw new CliError(
      secret
        ? `${names} ${conflicts.length === 1 ? 'is a plain variable' : 'are plain variables'} on ${scope.label}: import them without --secret, or unset them first; nothing was imported`
        : `${names} ${conflicts.length === 1 ? 'is a secret' : 'are secrets'} on ${scope.label}: import them with --secret, or unset them first; nothing was imported`,
    );
  }
  const outcomes: Array<{ key: string; outcome: ImportOutcome }> = [];
  for (const { key, value } of entries) {
    const existing = own.get(key);
    if (existing === undefined) {
      await scope.create({ key, value }, secret);
      outcomes.push({ key, outcome: 'created' });
    } else if (!secret && 'value' in existing && existing.value === value) {
      outcomes.push({ key, outcome: 'unchanged' });
    } else {
      await scope.edit(existing.id, { key, value }, secret);
      outcomes.push({ key, outcome: 'updated' });
    }
  }
  const keysOf = (outcome: ImportOutcome) => outcomes.filter((entry) => entry.outcome === outcome).map((entry) => entry.key);
  if (options.json === true) return printJson(io, { scope: scope.label, secret, created: keysOf('created'), updated: keysOf('updated'), unchanged: keysOf('unchanged') });
  printTable(io, ['KEY', 'RESULT'], outcomes.map((entry) => [entry.key, entry.outcome]), `${file} defines no variables.`);
  const noun = secret ? 'secret' : 'variable';
  io.out(
    `${entries.length} ${noun}${entries.length === 1 ? '' : 's'} from ${file} on ${scope.label}: ` +
      `${keysOf('created').length} created, ${keysOf('updated').length} updated, ${keysOf('unchanged').length} unchanged.\n`,
  );
}
