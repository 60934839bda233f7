import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requirementOf, type Grant, type Permission } from '../../auth/permissions.ts';
import type { Access, Principal } from '../../auth/principal.ts';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal, type RouteAccess } from '../../http/route-access.ts';
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';
import { NoContent, Uuid } from '../../protocol/wire.ts';
import { importIntoService, type ImportOwners } from './variables.import.ts';
import type { StoredScope, VariableScope } from './variables.resolver.ts';
import {
  APIVariableScopeEnum,
  ImportEnvironmentVariablesQuery,
  ListVariablesQuery,
  UnifiedAliasRequest,
  UnifiedOverrideRequest,
  UnifiedVariable,
  UnifiedVariableEditRequest,
  UnifiedVariableRequest,
  UnifiedVariableResponseList,
  VariableIdParams,
  VariableImport,
  VariableImportRequest,
  type VariableImportBody,
} from './variables.schemas.ts';
import type { VariableOwner, VariablesService } from './variables.service.ts';
import {
  isServiceScope,
  listUnified,
  ownerOfScope,
  targetOfScope,
  unifiedOfSecret,
  unifiedOfVariable,
  type OwnerTarget,
  type SecretView,
  type ServiceLocator,
  type VariableView,
} from './variables.unified.ts';

/**
 * The unified /variable API and the .env imports. The per-scope routes name their owner in the path, so the
 * authorizer checks them before their handler runs; these name it in the query, the body or the stored row of
 * `variableId`, and the permission depends on what is addressed (a secret needs the secrets permission). Their
 * routes declare the permission with target `none` (the caller must be signed in); a route-level preValidation hook
 * then finds the owner and asks the same authorizer with it as the target, before validation and before anything is
 * read or written: another organization's ids answer 404, a missing permission 403, exactly as on the per-scope
 * routes. A request whose owner fields are malformed is left to validation (400), and located in the handler should
 * validation accept a spelling the hook did not.
 */

/** The authorizer (src/http/authorize.ts) with an explicit target id. */
export type TargetAuthorizer = (
  request: FastifyRequest,
  principal: Principal,
  access: Exclude<RouteAccess, { public: true }>,
  targetId?: string,
) => Promise<Access | undefined>;

export interface UnifiedVariableRouteDeps {
  variables: VariablesService;
  authorize: TargetAuthorizer;
  locateService: ServiceLocator;
}

type VariablePermission = Extract<Permission, `variables:${string}` | `secrets:${string}`>;
type Action = 'read' | 'create' | 'update' | 'delete';

function permissionFor(secret: boolean, action: Action): VariablePermission {
  return `${secret ? 'secrets' : 'variables'}:${action}`;
}

function holds(access: Access, permission: Permission): boolean {
  return access.grants.has(requirementOf(permission) as Grant);
}

/** A permission beyond the one the owner was authorized with (secrets rows of an import, overwriting). */
function requireHeld(access: Access, permission: Permission, why: string): void {
  if (!holds(access, permission)) throw forbidden(`${why} requires the ${permission} permission, which this caller does not have`);
}

function routeAccess(permission: VariablePermission) {
  return { access: { permission, target: 'none' as const, ownerFoundByHandler: true as const } };
}

/** The service's, its environment's and its project's owners, for an import into the service. */
async function importOwners(
  deps: Pick<UnifiedVariableRouteDeps, 'variables' | 'locateService'>,
  access: Access,
  scope: ServiceImportScope['kind'],
  serviceId: string,
): Promise<ImportOwners> {
  const service = await ownerOfScope(deps.variables, deps.locateService, scope, serviceId, access.organizationId);
  const environmentId = service.environment?.id;
  if (environmentId === undefined) throw new Error('a service owner always has its environment');
  return {
    service,
    environment: await deps.variables.environmentOwner(environmentId),
    project: deps.variables.projectOwner(access.organizationId, service.projectId),
  };
}

/** Beyond variables:create (checked on the service): secrets:create for secret rows, the update permissions to overwrite. */
function requireImportPermissions(access: Access, body: VariableImportBody): void {
  const kinds = new Set(body.vars.map((row) => row.is_secret));
  if (kinds.has(true)) requireHeld(access, 'secrets:create', 'importing secrets');
  if (body.overwrite) {
    if (kinds.has(false)) requireHeld(access, 'variables:update', 'overwriting variables');
    if (kinds.has(true)) requireHeld(access, 'secrets:update', 'overwriting secrets');
  }
}

function importDescription(where: string, ownScope: string): string {
  return (
    `Imports the rows of a .env file (parsed by the client) into ${where}: each row goes to ${ownScope}, its environment or its ` +
    'project, as a variable or a secret. A name that exists at its row’s scope is skipped, or with `overwrite` gets the row’s value (the ' +
    'variable keeps its id). Every row is checked first and all are written in one transaction: 400 naming the first bad row (an invalid ' +
    'or reserved name, a scope this import cannot write, a name twice at one scope, an alias of an unknown variable) and nothing is ' +
    'written; 409 when overwriting would turn a secret into a variable or the reverse. The answer lists the rows written, those ' +
    'overwritten and those skipped. Importing secrets needs secrets:create; overwriting needs the update permissions.'
  );
}

/** What a unified operation acts on, once the caller is authorized there. */
interface Located {
  access: Access;
  owner: VariableOwner;
  /** Whether a secret is addressed (the secrets permissions applied). */
  secret: boolean;
}

/**
 * Each request's location, found once: before validation when the request names its owner well-formedly (so an
 * outsider's 404 or a member's 403 comes before any 400 about the rest of the body, as the authorizer does for path
 * targets), else in the handler from the validated request.
 */
const locations = new WeakMap<FastifyRequest, Promise<Located>>();

function locatedOnce(request: FastifyRequest, locate: () => Promise<Located>): Promise<Located> {
  let located = locations.get(request);
  if (located === undefined) {
    located = locate();
    locations.set(request, located);
  }
  return located;
}

const SCOPES: readonly string[] = APIVariableScopeEnum.enum;

/** Raw request fields (before validation): a value only when well-formed, else undefined (validation will answer). */
function rawScope(value: unknown): VariableScope | undefined {
  return typeof value === 'string' && SCOPES.includes(value) ? (value as VariableScope) : undefined;
}

function rawUuid(value: unknown): string | undefined {
  return typeof value === 'string' && isUuid(value) ? value : undefined;
}

function rawRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** The query's `is_secret` as text or a boolean: null when absent, undefined when it is neither. */
function rawQueryFlag(value: unknown): boolean | null | undefined {
  if (value === undefined || value === null) return null;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

export function registerUnifiedVariableRoutes(app: FastifyTypeBox, deps: UnifiedVariableRouteDeps): void {
  const { variables, locateService } = deps;

  /** Authorizes `permission` on the owner a target names and keeps the answer as the request's access (the audit log's). */
  async function authorizeOwner(request: FastifyRequest, permission: VariablePermission, target: OwnerTarget): Promise<Access> {
    const access = await deps.authorize(request, requirePrincipal(request), { permission, target: target.target }, target.id);
    if (access === undefined) throw new Error('an owner target always names an organization');
    request.access = access;
    return access;
  }

  /** The owner a scope and parent id name, with the caller authorized there for `action` on the kind addressed. */
  async function atScope(request: FastifyRequest, scope: VariableScope, parentId: string, field: string, secret: boolean, action: Action): Promise<Located> {
    const target = targetOfScope(scope, parentId, field);
    const access = await authorizeOwner(request, permissionFor(secret, action), target);
    return { access, owner: await ownerOfScope(variables, locateService, target.scope, parentId, access.organizationId), secret };
  }

  /**
   * A stored variable or secret by id, with its owner once the caller is authorized there. An id of another
   * organization, or of nothing, answers the same 404; so does a built-in's id (built-ins are not stored: override
   * one instead).
   */
  async function storedVariable(request: FastifyRequest, id: string, action: Action): Promise<Located> {
    const row = await variables.findVariableRow(id);
    if (row === undefined) throw notFound(`variable ${id} not found`);
    const secret = row.is_secret === 1;
    const scope = row.scope as StoredScope;
    let access: Access;
    try {
      access = await authorizeOwner(request, permissionFor(secret, action), targetOfScope(scope, row.owner_id, '/variableId'));
    } catch (error) {
      if (error instanceof AppError && error.kind === 'not_found') throw notFound(`variable ${id} not found`);
      throw error;
    }
    if (access.organizationId !== row.organization_id) throw notFound(`variable ${id} not found`);
    return { access, owner: await ownerOfScope(variables, locateService, scope, row.owner_id, access.organizationId), secret };
  }

  /**
   * Where an alias or override is created: the owner its body names, authorized to create the kind of the variable
   * it names (a stored secret's, else a variable's: a built-in or nothing, which the service then answers 404).
   */
  async function linkedAt(request: FastifyRequest, parentVariableId: string, scope: VariableScope, parentId: string, field: string): Promise<Located> {
    const secret = (await variables.findVariableRow(parentVariableId))?.is_secret === 1;
    return atScope(request, scope, parentId, field, secret, 'create');
  }

  function refuseSecretManager(id: string | null | undefined): void {
    if (id !== undefined && id !== null) {
      throw badRequest('Slipway seals secrets itself; external secret managers are not supported', [
        { field: '/secret_manager_access_id', message: 'must be null or absent' },
      ]);
    }
  }

  app.get(
    '/variable',
    {
      schema: {
        operationId: 'listVariables',
        tags: ['Variable Main Calls'],
        summary: 'List the variables and secrets a scope sees',
        description:
          'Everything a consumer at the named scope sees: the scope’s own variables and secrets, those of the broader scopes it inherits ' +
          '(an environment sees its project’s, a service its environment’s and project’s) and, from an environment or service, the built-ins. ' +
          '`is_secret` keeps only secrets (true) or only variables (false); without it, secrets are listed when the caller may read them. ' +
          'Secret values are never shown (`value` is null), nor hidden built-in values. 400 for the BUILT_IN scope; 404 when `parent_id` names ' +
          'no owner of that scope in the caller’s organizations; 403 without variables:read (secrets:read with `is_secret=true`).',
        querystring: ListVariablesQuery,
        response: { 200: UnifiedVariableResponseList, ...authenticatedErrors() },
      },
      config: routeAccess('variables:read'),
      preValidation: async (request) => {
        const query = rawRecord(request.query);
        const scope = rawScope(query.scope);
        const parentId = rawUuid(query.parent_id);
        const isSecret = rawQueryFlag(query.is_secret);
        if (scope === undefined || parentId === undefined || isSecret === undefined) return;
        await locatedOnce(request, () => atScope(request, scope, parentId, '/scope', isSecret === true, 'read'));
      },
    },
    async (request) => {
      const { parent_id: parentId, scope, is_secret: isSecret } = request.query;
      const { access, owner } = await locatedOnce(request, () => atScope(request, scope, parentId, '/scope', isSecret === true, 'read'));
      const kinds = {
        withVariables: isSecret !== true,
        withSecrets: isSecret === true || (isSecret !== false && holds(access, 'secrets:read')),
      };
      return { results: await listUnified(variables, owner, kinds) };
    },
  );

  app.post(
    '/variable',
    {
      schema: {
        operationId: 'createVariable',
        tags: ['Variable Main Calls'],
        summary: 'Create a variable or a secret at a scope',
        description:
          'Creates a variable (or, with `is_secret`, a secret) at the scope `variable_scope` of the owner `variable_parent_id`: a project, an ' +
          'environment or a service of that kind. Creating a name again at the same scope replaces it, as on the per-scope routes; a value ' +
          '`$NAME` makes an alias. 400 for an invalid name or value, a reserved PLATFORM_ name, the BUILT_IN scope, an unknown alias target ' +
          'or an alias cycle; 404 for an unknown owner; 409 when the name is held by the other kind (secret or variable) at that scope.',
        body: UnifiedVariableRequest,
        response: { 201: UnifiedVariable, ...authenticatedErrors('conflict') },
      },
      config: routeAccess('variables:create'),
      preValidation: async (request) => {
        const body = rawRecord(request.body);
        const scope = rawScope(body.variable_scope);
        const parentId = rawUuid(body.variable_parent_id);
        if (scope === undefined || parentId === undefined || typeof body.is_secret !== 'boolean') return;
        const secret = body.is_secret;
        await locatedOnce(request, () => atScope(request, scope, parentId, '/variable_scope', secret, 'create'));
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { owner } = await locatedOnce(request, () => atScope(request, body.variable_scope, body.variable_parent_id, '/variable_scope', body.is_secret, 'create'));
      refuseSecretManager(body.secret_manager_access_id);
      const input = {
        key: body.key,
        value: body.value,
        ...(body.mount_path === undefined ? {} : { mount_path: body.mount_path }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.enable_interpolation_in_file === undefined ? {} : { enable_interpolation_in_file: body.enable_interpolation_in_file }),
      };
      const created = body.is_secret
        ? unifiedOfSecret((await variables.createSecret(owner, input)) as SecretView)
        : unifiedOfVariable((await variables.createVariable(owner, input)) as VariableView);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  /** The routes that address a stored variable by id: located from the path before validation. */
  const byStoredId = (action: Action) => async (request: FastifyRequest) => {
    const id = rawUuid(rawRecord(request.params).variableId);
    if (id !== undefined) await locatedOnce(request, () => storedVariable(request, id, action));
  };

  app.put(
    '/variable/:variableId',
    {
      schema: {
        operationId: 'editVariable',
        tags: ['Variable Main Calls'],
        summary: 'Edit a variable or a secret',
        description:
          'Renames it and changes its value, description or interpolation flag, at its own scope. Without `value` (or with null) the value is ' +
          'kept, a secret’s sealed value included. An override keeps its name. 404 for an unknown id, a built-in’s or another organization’s; ' +
          '409 when the new name is taken at that scope; 403 without variables:update (secrets:update for a secret).',
        params: VariableIdParams,
        body: UnifiedVariableEditRequest,
        response: { 200: UnifiedVariable, ...authenticatedErrors('conflict') },
      },
      config: routeAccess('variables:update'),
      preValidation: byStoredId('update'),
    },
    async (request) => {
      const { variableId } = request.params;
      const { secret, owner } = await locatedOnce(request, () => storedVariable(request, variableId, 'update'));
      const body = request.body;
      refuseSecretManager(body.secret_manager_access_id);
      const input = {
        key: body.key,
        ...(body.value === undefined || body.value === null ? {} : { value: body.value }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.enable_interpolation_in_file === undefined ? {} : { enable_interpolation_in_file: body.enable_interpolation_in_file }),
      };
      return secret
        ? unifiedOfSecret((await variables.editSecret(owner, variableId, input)) as SecretView)
        : unifiedOfVariable((await variables.editVariable(owner, variableId, input)) as VariableView);
    },
  );

  app.delete(
    '/variable/:variableId',
    {
      schema: {
        operationId: 'deleteVariable',
        tags: ['Variable Main Calls'],
        summary: 'Delete a variable or a secret',
        description:
          'Deletes it from its scope; consumers then see what the broader scopes define under that name, if anything. 404 for an unknown id, ' +
          'a built-in’s or another organization’s; 403 without variables:delete (secrets:delete for a secret).',
        params: VariableIdParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: routeAccess('variables:delete'),
      preValidation: byStoredId('delete'),
    },
    async (request, reply) => {
      const { variableId } = request.params;
      const { secret, owner } = await locatedOnce(request, () => storedVariable(request, variableId, 'delete'));
      if (secret) await variables.deleteSecret(owner, variableId);
      else await variables.deleteVariable(owner, variableId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  /** The alias and override routes: located from the path's variable and the body's scope and owner before validation. */
  const linked = (scopeField: 'alias_scope' | 'override_scope', parentField: 'alias_parent_id' | 'override_parent_id') => async (request: FastifyRequest) => {
    const id = rawUuid(rawRecord(request.params).variableId);
    const body = rawRecord(request.body);
    const scope = rawScope(body[scopeField]);
    const parentId = rawUuid(body[parentField]);
    if (id === undefined || scope === undefined || parentId === undefined) return;
    await locatedOnce(request, () => linkedAt(request, id, scope, parentId, `/${scopeField}`));
  };

  app.post(
    '/variable/:variableId/alias',
    {
      schema: {
        operationId: 'createVariableAlias',
        tags: ['Variable Main Calls'],
        summary: 'Create an alias of a variable or a secret',
        description:
          'Creates, at the scope `alias_scope` of the owner `alias_parent_id`, a variable of another name whose value is the named variable’s ' +
          '(a secret’s alias is a secret). The named variable, a built-in included, must be one that owner’s consumers see (404 otherwise). ' +
          '400 for an invalid or reserved name or the BUILT_IN scope; 409 when the name is held by the other kind at that scope.',
        params: VariableIdParams,
        body: UnifiedAliasRequest,
        response: { 201: UnifiedVariable, ...authenticatedErrors('conflict') },
      },
      config: routeAccess('variables:create'),
      preValidation: linked('alias_scope', 'alias_parent_id'),
    },
    async (request, reply) => {
      const { variableId } = request.params;
      const body = request.body;
      const { secret, owner } = await locatedOnce(request, () => linkedAt(request, variableId, body.alias_scope, body.alias_parent_id, '/alias_scope'));
      const input = {
        key: body.key,
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.enable_interpolation_in_file === undefined ? {} : { enable_interpolation_in_file: body.enable_interpolation_in_file }),
      };
      const created = secret
        ? unifiedOfSecret((await variables.aliasSecret(owner, variableId, input)) as SecretView)
        : unifiedOfVariable((await variables.aliasVariable(owner, variableId, input)) as VariableView);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.post(
    '/variable/:variableId/override',
    {
      schema: {
        operationId: 'createVariableOverride',
        tags: ['Variable Main Calls'],
        summary: 'Override a variable or a secret at a narrower scope',
        description:
          'Sets, at the scope `override_scope` of the owner `override_parent_id`, the value its consumers get for the named variable (a ' +
          'built-in included) of a broader scope. 400 when the named variable is not of a broader scope, or for the BUILT_IN scope; 404 when ' +
          'that owner’s consumers do not see it.',
        params: VariableIdParams,
        body: UnifiedOverrideRequest,
        response: { 201: UnifiedVariable, ...authenticatedErrors('conflict') },
      },
      config: routeAccess('variables:create'),
      preValidation: linked('override_scope', 'override_parent_id'),
    },
    async (request, reply) => {
      const { variableId } = request.params;
      const body = request.body;
      const { secret, owner } = await locatedOnce(request, () => linkedAt(request, variableId, body.override_scope, body.override_parent_id, '/override_scope'));
      const input = {
        value: body.value,
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.enable_interpolation_in_file === undefined ? {} : { enable_interpolation_in_file: body.enable_interpolation_in_file }),
      };
      const created = secret
        ? unifiedOfSecret((await variables.overrideSecret(owner, variableId, input)) as SecretView)
        : unifiedOfVariable((await variables.overrideVariable(owner, variableId, input)) as VariableView);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  /** The import's service, authorized for variables:create (the rows' own permissions are checked once validated). */
  const atService = (request: FastifyRequest, serviceType: ServiceImportScope['kind'], serviceId: string) => atScope(request, serviceType, serviceId, '/service_type', false, 'create');

  app.post(
    '/variable/import',
    {
      schema: {
        operationId: 'importEnvironmentVariables',
        tags: ['Variable Main Calls'],
        summary: 'Import a .env file into a service',
        description: `${importDescription('the service `service_id` of the kind `service_type`', 'its own scope (`service_type`)')} 404 for an unknown service.`,
        querystring: ImportEnvironmentVariablesQuery,
        body: VariableImportRequest,
        response: { 201: VariableImport, ...authenticatedErrors('conflict') },
      },
      config: routeAccess('variables:create'),
      preValidation: async (request) => {
        const query = rawRecord(request.query);
        const serviceType = rawScope(query.service_type);
        const serviceId = rawUuid(query.service_id);
        if (serviceType === undefined || serviceId === undefined || !isServiceScope(serviceType)) return;
        await locatedOnce(request, () => atService(request, serviceType, serviceId));
      },
    },
    async (request, reply) => {
      const { service_id: serviceId, service_type: serviceType } = request.query;
      const { access } = await locatedOnce(request, () => atService(request, serviceType, serviceId));
      requireImportPermissions(access, request.body);
      const answer = await importIntoService(variables, await importOwners(deps, access, serviceType, serviceId), request.body);
      return reply.code(HTTP_STATUS.created).send(answer);
    },
  );
}

/** A service kind's import route, as the services module describes the kind (services.kinds.ts). */
export interface ServiceImportScope {
  kind: Exclude<StoredScope, 'PROJECT' | 'ENVIRONMENT'>;
  noun: string;
  item: string;
  idParam: string;
}

/**
 * import<Noun>EnvironmentVariable (importEnvironmentVariable for applications, as the reference names it): the
 * service is in the path, so the authorizer checks variables:create on it before the handler runs.
 */
export function registerServiceImportRoute(app: FastifyTypeBox, deps: Pick<UnifiedVariableRouteDeps, 'variables' | 'locateService'>, scope: ServiceImportScope): void {
  const { variables } = deps;
  const operationId = scope.kind === 'APPLICATION' ? 'importEnvironmentVariable' : `import${scope.noun}EnvironmentVariable`;
  app.post(
    `/${scope.item}/:${scope.idParam}/environmentVariable/import`,
    {
      schema: {
        operationId,
        tags: [`${scope.noun} Environment Variable`],
        summary: `Import a .env file into a ${scope.item}`,
        description: `${importDescription(`the ${scope.item}`, `its own ${scope.kind} scope`)} 404 for an unknown ${scope.item}.`,
        params: Type.Object({ [scope.idParam]: Uuid }, { additionalProperties: false }),
        body: VariableImportRequest,
        response: { 201: VariableImport, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'variables:create', target: 'service' } },
    },
    async (request, reply) => {
      const access = requireAccess(request);
      const body = request.body as VariableImportBody;
      const serviceId = (request.params as Record<string, string>)[scope.idParam] as string;
      requireImportPermissions(access, body);
      const owners = await importOwners(deps, access, scope.kind, serviceId);
      return reply.code(HTTP_STATUS.created).send(await importIntoService(variables, owners, body));
    },
  );
}
