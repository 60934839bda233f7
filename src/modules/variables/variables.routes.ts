import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TObject } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { createListAnswers, type ListAnswers } from '../../http/list-answers.ts';
import { REVEAL_SECRETS, requireAccess, type AccessTarget, type RevealDeclaration } from '../../http/route-access.ts';
import { NoContent, Uuid } from '../../protocol/wire.ts';
import {
  AliasRequest,
  EnvironmentSecretParams,
  EnvironmentVariable,
  EnvironmentVariableEditRequest,
  EnvironmentVariableParams,
  EnvironmentVariableRequest,
  EnvironmentVariableResponseList,
  OverrideRequest,
  ProjectSecretParams,
  ProjectVariableParams,
  ResolvedVariableResponseList,
  RevealQuery,
  Secret,
  SecretEditRequest,
  SecretRequest,
  SecretResponseList,
  VariablesEnvironmentParams,
  VariablesProjectParams,
  type AliasBody,
  type OverrideBody,
  type SecretEditBody,
  type VariableRequestBody,
} from './variables.schemas.ts';
import type { VariableOwner, VariablesService } from './variables.service.ts';
import { MAX_VARIABLES_PER_SCOPE } from './variables.writes.ts';

/** One scope's twelve operations (variables and secrets: list, create, edit, delete, override, alias). */
interface ScopeRoutes {
  /** `Project`, `Environment` or a service kind's noun (`Application`, `Container`, `Job`, …), as operation ids spell it. */
  noun: string;
  /** How the documentation names the scope's owner: "a project", "the project"; and who sees what is set there. */
  prose: { anOwner: string; theOwner: string; seenBy: string };
  base: string;
  target: Extract<AccessTarget, 'project' | 'environment' | 'service'>;
  params: TObject;
  variableParams: TObject;
  secretParams: TObject;
  variableTags: string[];
  secretTags: string[];
  /** Whether listings can reveal hidden built-ins (only where built-ins are visible). */
  revealable: boolean;
  owner(request: FastifyRequest): Promise<VariableOwner>;
}

/**
 * Rule 5: a caller sees hidden built-in values only when asking (`?reveal=true`). Whether it may is the authorizer's
 * (the route declares REVEAL_SECRETS): a request that reaches the handler asking has been allowed to.
 */
function revealRequested(request: FastifyRequest): boolean {
  return (request.query as { reveal?: boolean } | undefined)?.reveal === true;
}

/** The variable answers an app keeps serialized (list-answers.ts): a service seeing 2,500 variables answers about 1 MB. */
const KEPT_VARIABLE_ANSWERS_BYTES = 64 * 1024 * 1024;
/** One store per app, shared by the routes of every scope: the app's variables service stands for the app. */
const keptAnswers = new WeakMap<VariablesService, ListAnswers>();

/**
 * A listing or resolution without `reveal`, which is the same for everyone who may read it: sent from the bytes kept
 * for this route and owner while its project's variables revision is unchanged, built by `build` otherwise. The
 * revision is read before `build` reads anything, as list-answers.ts requires; the project is part of what is
 * compared, so an environment moved to another project is never answered under the old one's revision.
 */
async function sendVariablesAnswer(request: FastifyRequest, reply: FastifyReply, variables: VariablesService, build: () => Promise<unknown>): Promise<FastifyReply> {
  let answers = keptAnswers.get(variables);
  if (answers === undefined) {
    answers = createListAnswers(KEPT_VARIABLE_ANSWERS_BYTES);
    keptAnswers.set(variables, answers);
  }
  const { projectId } = requireAccess(request);
  if (projectId === undefined) throw new Error('variables answered for a target outside any project');
  const revision = `${projectId}:${await variables.variablesRevision(projectId)}`;
  const key = `${request.routeOptions.url ?? request.url} ${Object.values(request.params as Record<string, string>).join(' ')}`;
  return answers.send(reply, key, revision, build);
}

function idParam(request: FastifyRequest, name: 'environmentVariableId' | 'secretId'): string {
  return (request.params as Record<string, string>)[name] as string;
}

/** Why a write is refused, in words (variables.writes.ts); a secret's value is opaque, so only a variable's can alias. */
const SECRET_WRITE_REFUSALS =
  'Built-in names (PLATFORM_…) are refused (400; override a built-in instead), as are a mount_path with . or .. segments and a new name ' +
  `on a scope that already holds ${MAX_VARIABLES_PER_SCOPE} variables and secrets.`;
const WRITE_REFUSALS = `${SECRET_WRITE_REFUSALS} So is a value \`$NAME\` when NAME is not visible here, or when the alias closes a cycle.`;

const OVERRIDE_REFUSALS =
  'One of that name already set here is replaced. 400 when what is named is set at this scope or a narrower one (edit it instead) or the ' +
  'value aliases a variable not visible here; 404 for an id this scope does not see (or of the other kind: variable or secret); 409 when ' +
  'that name is held here by the other kind.';

const ALIAS_REFUSALS =
  `400 for a built-in name (PLATFORM_…), or a new name on a scope that already holds ${MAX_VARIABLES_PER_SCOPE} variables and secrets; 404 ` +
  'for an id this scope does not see; 409 when that name is held here by the other kind (variable or secret).';

function registerScope(app: FastifyTypeBox, variables: VariablesService, scope: ScopeRoutes): void {
  const variablesUrl = `${scope.base}/environmentVariable`;
  const variableUrl = `${variablesUrl}/:environmentVariableId`;
  const secretsUrl = `${scope.base}/secret`;
  const secretUrl = `${secretsUrl}/:secretId`;
  const access = (
    permission: 'variables:read' | 'variables:create' | 'variables:update' | 'variables:delete' | 'secrets:read' | 'secrets:create' | 'secrets:update' | 'secrets:delete',
    reveal?: RevealDeclaration,
  ) => ({
    access: { permission, target: scope.target, ...(reveal === undefined ? {} : { reveal }) },
  });
  const noun = scope.noun;
  const { anOwner, theOwner, seenBy } = scope.prose;
  const builtInsListed = scope.revealable
    ? ', the built-ins (PLATFORM_…) included; hidden built-in values only with reveal=true and the secrets:reveal permission'
    : '';

  app.get(
    variablesUrl,
    {
      schema: {
        operationId: `list${noun}EnvironmentVariable`,
        summary: `List the environment variables of ${anOwner}`,
        description:
          `Every plain variable ${theOwner} sees, by name and from the broadest scope to the narrowest: those set on it and those of the ` +
          `scopes above it${builtInsListed}. Secrets are listed apart (list${noun}Secrets).`,
        tags: scope.variableTags,
        params: scope.params,
        ...(scope.revealable ? { querystring: RevealQuery } : {}),
        response: { 200: EnvironmentVariableResponseList, ...authenticatedErrors() },
      },
      config: access('variables:read', scope.revealable ? REVEAL_SECRETS : undefined),
    },
    async (request, reply) => {
      if (!revealRequested(request)) return sendVariablesAnswer(request, reply, variables, async () => ({ results: await variables.listVariables(await scope.owner(request), false) }));
      const results = await variables.listVariables(await scope.owner(request), true);
      reply.header('cache-control', 'no-store');
      return { results };
    },
  );

  app.post(
    variablesUrl,
    {
      schema: {
        operationId: `create${noun}EnvironmentVariable`,
        summary: `Create an environment variable of ${anOwner}`,
        description:
          `Sets a plain variable on ${theOwner}, seen by ${seenBy}; one of the same name set there is replaced. A value \`$NAME\` makes it an ` +
          `alias of the variable NAME; mount_path makes it a file mounted at that path. Deployed services that see it become OUT_OF_DATE. ${WRITE_REFUSALS} ` +
          '409 when a secret of that name is set there.',
        tags: scope.variableTags,
        params: scope.params,
        body: EnvironmentVariableRequest,
        response: { 201: EnvironmentVariable, ...authenticatedErrors('conflict') },
      },
      config: access('variables:create'),
    },
    async (request, reply) => {
      const created = await variables.createVariable(await scope.owner(request), request.body as VariableRequestBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.put(
    variableUrl,
    {
      schema: {
        operationId: `edit${noun}EnvironmentVariable`,
        summary: `Edit an environment variable of ${anOwner}`,
        description:
          `Changes the name, value, description or mount path of a plain variable set on ${theOwner}; a field left out keeps its value. ` +
          '400 for a built-in name (PLATFORM_…), a new name for an override (it keeps the name of what it overrides), a mount_path with . or .. ' +
          `segments, or a value \`$NAME\` when NAME is not visible here or the alias closes a cycle; 404 for a variable not set on ${theOwner}; ` +
          '409 when the new name is taken there.',
        tags: scope.variableTags,
        params: scope.variableParams,
        body: EnvironmentVariableEditRequest,
        response: { 200: EnvironmentVariable, ...authenticatedErrors('conflict') },
      },
      config: access('variables:update'),
    },
    async (request) => variables.editVariable(await scope.owner(request), idParam(request, 'environmentVariableId'), request.body as VariableRequestBody),
  );

  app.delete(
    variableUrl,
    {
      schema: {
        operationId: `delete${noun}EnvironmentVariable`,
        summary: `Delete an environment variable of ${anOwner}`,
        description: `Removes a plain variable set on ${theOwner} (an override removed uncovers what it overrode). 404 for a variable not set on ${theOwner}.`,
        tags: scope.variableTags,
        params: scope.variableParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: access('variables:delete'),
    },
    async (request, reply) => {
      await variables.deleteVariable(await scope.owner(request), idParam(request, 'environmentVariableId'));
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    `${variableUrl}/override`,
    {
      schema: {
        operationId: `create${noun}EnvironmentVariableOverride`,
        summary: `Override an environment variable on ${anOwner}`,
        description:
          `Sets, on ${theOwner}, the value of a variable of a broader scope (a built-in included), keeping its name. ${OVERRIDE_REFUSALS}`,
        tags: scope.variableTags,
        params: scope.variableParams,
        body: OverrideRequest,
        response: { 201: EnvironmentVariable, ...authenticatedErrors('conflict') },
      },
      config: access('variables:create'),
    },
    async (request, reply) => {
      const owner = await scope.owner(request);
      const created = await variables.overrideVariable(owner, idParam(request, 'environmentVariableId'), request.body as OverrideBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.post(
    `${variableUrl}/alias`,
    {
      schema: {
        operationId: `create${noun}EnvironmentVariableAlias`,
        summary: `Alias an environment variable on ${anOwner}`,
        description: `Creates, on ${theOwner}, a variable of another name whose value is \`$NAME\` of the named variable. ${ALIAS_REFUSALS}`,
        tags: scope.variableTags,
        params: scope.variableParams,
        body: AliasRequest,
        response: { 201: EnvironmentVariable, ...authenticatedErrors('conflict') },
      },
      config: access('variables:create'),
    },
    async (request, reply) => {
      const owner = await scope.owner(request);
      const created = await variables.aliasVariable(owner, idParam(request, 'environmentVariableId'), request.body as AliasBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.get(
    secretsUrl,
    {
      schema: {
        operationId: `list${noun}Secrets`,
        summary: `List the secrets of ${anOwner}`,
        description:
          `Every secret ${theOwner} sees, by name and from the broadest scope to the narrowest. Secrets are write-only: listings show their ` +
          'names, never their values.',
        tags: scope.secretTags,
        params: scope.params,
        response: { 200: SecretResponseList, ...authenticatedErrors() },
      },
      config: access('secrets:read'),
    },
    async (request) => ({ results: await variables.listSecrets(await scope.owner(request)) }),
  );

  app.post(
    secretsUrl,
    {
      schema: {
        operationId: `create${noun}Secret`,
        summary: `Create a secret of ${anOwner}`,
        description:
          `Sets a secret on ${theOwner}, seen by ${seenBy}; one of the same name set there is replaced. Its value is encrypted and never ` +
          `answered again; mount_path makes it a file mounted at that path. ${SECRET_WRITE_REFUSALS} 409 when a plain variable of that name is set there.`,
        tags: scope.secretTags,
        params: scope.params,
        body: SecretRequest,
        response: { 201: Secret, ...authenticatedErrors('conflict') },
      },
      config: access('secrets:create'),
    },
    async (request, reply) => {
      const created = await variables.createSecret(await scope.owner(request), request.body as VariableRequestBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.put(
    secretUrl,
    {
      schema: {
        operationId: `edit${noun}Secret`,
        summary: `Edit a secret of ${anOwner}`,
        description:
          `Changes the name, value or description of a secret set on ${theOwner} (its mount path stays); without \`value\` the sealed value ` +
          `is kept. 400 for a built-in name (PLATFORM_…), or a new name for an override; 404 for a secret not set on ${theOwner}; 409 when ` +
          'the new name is taken there.',
        tags: scope.secretTags,
        params: scope.secretParams,
        body: SecretEditRequest,
        response: { 200: Secret, ...authenticatedErrors('conflict') },
      },
      config: access('secrets:update'),
    },
    async (request) => variables.editSecret(await scope.owner(request), idParam(request, 'secretId'), request.body as SecretEditBody),
  );

  app.delete(
    secretUrl,
    {
      schema: {
        operationId: `delete${noun}Secret`,
        summary: `Delete a secret of ${anOwner}`,
        description: `Removes a secret set on ${theOwner} (an override removed uncovers what it overrode). 404 for a secret not set on ${theOwner}.`,
        tags: scope.secretTags,
        params: scope.secretParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: access('secrets:delete'),
    },
    async (request, reply) => {
      await variables.deleteSecret(await scope.owner(request), idParam(request, 'secretId'));
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    `${secretUrl}/override`,
    {
      schema: {
        operationId: `create${noun}SecretOverride`,
        summary: `Override a secret on ${anOwner}`,
        description: `Sets, on ${theOwner}, the value of a secret of a broader scope, keeping its name. ${OVERRIDE_REFUSALS}`,
        tags: scope.secretTags,
        params: scope.secretParams,
        body: OverrideRequest,
        response: { 201: Secret, ...authenticatedErrors('conflict') },
      },
      config: access('secrets:create'),
    },
    async (request, reply) => {
      const created = await variables.overrideSecret(await scope.owner(request), idParam(request, 'secretId'), request.body as OverrideBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.post(
    `${secretUrl}/alias`,
    {
      schema: {
        operationId: `create${noun}SecretAlias`,
        summary: `Alias a secret on ${anOwner}`,
        description: `Creates, on ${theOwner}, a secret of another name with the value of the named secret. ${ALIAS_REFUSALS}`,
        tags: scope.secretTags,
        params: scope.secretParams,
        body: AliasRequest,
        response: { 201: Secret, ...authenticatedErrors('conflict') },
      },
      config: access('secrets:create'),
    },
    async (request, reply) => {
      const created = await variables.aliasSecret(await scope.owner(request), idParam(request, 'secretId'), request.body as AliasBody);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );
}

export function registerProjectVariableRoutes(app: FastifyTypeBox, variables: VariablesService): void {
  registerScope(app, variables, {
    noun: 'Project',
    prose: { anOwner: 'a project', theOwner: 'the project', seenBy: 'every service of its environments' },
    base: '/project/:projectId',
    target: 'project',
    params: VariablesProjectParams,
    variableParams: ProjectVariableParams,
    secretParams: ProjectSecretParams,
    variableTags: ['Project Environment Variable'],
    secretTags: ['Project Secret'],
    revealable: false,
    owner: async (request) => variables.projectOwner(requireAccess(request).organizationId, (request.params as { projectId: string }).projectId),
  });
}

export function registerEnvironmentVariableRoutes(app: FastifyTypeBox, variables: VariablesService): void {
  registerScope(app, variables, {
    noun: 'Environment',
    prose: { anOwner: 'an environment', theOwner: 'the environment', seenBy: 'every service of the environment' },
    base: '/environment/:environmentId',
    target: 'environment',
    params: VariablesEnvironmentParams,
    variableParams: EnvironmentVariableParams,
    secretParams: EnvironmentSecretParams,
    variableTags: ['Environment Variable'],
    secretTags: ['Environment Secret'],
    revealable: true,
    owner: (request) => variables.environmentOwner((request.params as { environmentId: string }).environmentId),
  });

  app.get(
    '/environment/:environmentId/resolvedVariables',
    {
      schema: {
        operationId: 'listEnvironmentResolvedVariables',
        summary: "Explain an environment's final variables",
        description:
          'Every final variable of the environment: the scope that set it, the alias chain that produced its value and what it overrides. ' +
          'Secret values never appear; hidden built-in values only with `reveal=true` and the secrets:reveal permission. ' +
          '`content_hash` changes exactly when what a deployment would receive changes.',
        tags: ['Environment Variable'],
        params: VariablesEnvironmentParams,
        querystring: RevealQuery,
        response: { 200: ResolvedVariableResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'variables:read', target: 'environment', reveal: REVEAL_SECRETS } },
    },
    async (request, reply) => {
      const { environmentId } = request.params;
      if (!revealRequested(request)) return sendVariablesAnswer(request, reply, variables, () => variables.explain(environmentId, undefined, false));
      reply.header('cache-control', 'no-store');
      return variables.explain(environmentId, undefined, true);
    },
  );
}

/** A service kind's scope, as the services module describes it (services.kinds.ts: operationNoun, item, idParam). */
export interface ServiceVariableScope {
  noun: string;
  item: string;
  idParam: string;
  /** The kind's prose (services.kinds.ts): "an application", "the application". */
  prose: { aService: string; theService: string };
  /** The service the path names, with its environment; 404 when it names no service of this kind. */
  locate(serviceId: string): Promise<{ id: string; environmentId: string }>;
}

/**
 * A service scope's variables and secrets (APPLICATION in the reference; CONTAINER, JOB, HELM, TERRAFORM and
 * AGENTIC_WORKFLOW by the same pattern: list<Noun>EnvironmentVariable, create<Noun>Secret, …) and, beyond the
 * reference, the service's resolved variables with the scope and alias chain behind each.
 */
export function registerServiceVariableRoutes(app: FastifyTypeBox, variables: VariablesService, scope: ServiceVariableScope): void {
  const params = Type.Object({ [scope.idParam]: Uuid }, { additionalProperties: false });
  const serviceIdOf = (request: FastifyRequest) => (request.params as Record<string, string>)[scope.idParam] as string;
  registerScope(app, variables, {
    noun: scope.noun,
    prose: { anOwner: scope.prose.aService, theOwner: scope.prose.theService, seenBy: `${scope.prose.theService} alone` },
    base: `/${scope.item}/:${scope.idParam}`,
    target: 'service',
    params,
    variableParams: Type.Object({ [scope.idParam]: Uuid, environmentVariableId: Uuid }, { additionalProperties: false }),
    secretParams: Type.Object({ [scope.idParam]: Uuid, secretId: Uuid }, { additionalProperties: false }),
    variableTags: [`${scope.noun} Environment Variable`],
    secretTags: [`${scope.noun} Secret`],
    revealable: true,
    owner: async (request) => {
      const service = await scope.locate(serviceIdOf(request));
      return variables.serviceOwner(service.environmentId, service.id);
    },
  });

  app.get(
    `/${scope.item}/:${scope.idParam}/resolvedVariables`,
    {
      schema: {
        operationId: `list${scope.noun}ResolvedVariables`,
        summary: `Explain the final variables of ${scope.prose.aService}`,
        description:
          'Every final variable of the service: the scope that set it (its own, the environment, the project or built-in), the alias chain ' +
          'that produced its value and what it overrides. Secret values never appear; hidden built-in values only with `reveal=true` and the ' +
          'secrets:reveal permission. `content_hash` changes exactly when what a deployment would receive changes.',
        tags: [`${scope.noun} Environment Variable`],
        params,
        querystring: RevealQuery,
        response: { 200: ResolvedVariableResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'variables:read', target: 'service', reveal: REVEAL_SECRETS } },
    },
    async (request, reply) => {
      const explainService = async (reveal: boolean) => {
        const service = await scope.locate(serviceIdOf(request));
        return variables.explain(service.environmentId, service.id, reveal);
      };
      if (!revealRequested(request)) return sendVariablesAnswer(request, reply, variables, () => explainService(false));
      reply.header('cache-control', 'no-store');
      return explainService(true);
    },
  );
}
