import { randomUUID } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { FastifyInstance, LightMyRequestResponse, RouteOptions } from 'fastify';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../src/auth/permissions.ts';
import type { AccessTarget, RouteAccess } from '../src/http/route-access.ts';
import type { RegisteredRoute } from '../src/http/server.ts';
import { SERVICE_KIND_DEFINITIONS } from '../src/modules/services/services.kinds.ts';
import { mapInPool } from './support/task-pool.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Role enforcement, proven route by route. The table is generated from the server itself: every route it registered
 * (`registeredRoutes()`) with the access it declared (`config.access`, read from the route options as Fastify
 * registered them), crossed with every kind of caller:
 *
 *   OWNER, ADMIN, DEVELOPER, VIEWER        signed-in members of the organization
 *   custom STAGING deployer                a member holding a custom role (docs/roles.md): deploy on STAGING, read
 *                                          elsewhere
 *   token ADMIN/WRITE/DEPLOY/READ          the organization's API tokens of each scope
 *   non-member                             a signed-in person of no standing in the organization
 *   invitee                                a non-member holding a pending invitation to it
 *   no credentials
 *
 * The expected answer of each cell is derived from the route's declared permission and its requirement in
 * PERMISSIONS, with the grants of each role and scope written here independently from DESIGN.md §5 and docs/roles.md
 * (so a wrong grant table in the code fails here). A route that declares a reveal parameter (`config.access.reveal`:
 * masked values unless `?reveal=true`) is called both ways: asking needs the declared permission's grant as well. A handful of operations narrow access further in their handler; they are listed in
 * HANDLER_RULES, and a route that addresses an organization without letting the authorizer check it must be listed
 * there or this test fails. The few that name their target in the query, body or a stored row, and have a hook ask the
 * authorizer once it is found, are expected as for that target (HOOK_TARGETS). So a new route cannot escape the table.
 *
 * Expected classes: `ok` (2xx for every operation this file knows how to call validly, else at least "reached the
 * handler": not 401/403 and no 5xx), 401, 403 or 404, the latter three with the error body. Refused calls and reads run
 * against one shared organization whose rows must be unchanged afterwards; each allowed write gets a fresh one.
 */

const CALLERS = [
  'OWNER',
  'ADMIN',
  'DEVELOPER',
  'VIEWER',
  'custom STAGING deployer',
  'token ADMIN',
  'token WRITE',
  'token DEPLOY',
  'token READ',
  'non-member',
  'invitee',
  'no credentials',
] as const;
type Caller = (typeof CALLERS)[number];
type Outcome = 'ok' | 401 | 403 | 404;
type MemberRole = 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER';
type Scope = 'ADMIN' | 'WRITE' | 'DEPLOY' | 'READ';

/**
 * DESIGN.md §5: OWNER = ADMIN + ownership; ADMIN = all; DEVELOPER = write + deploy + read; VIEWER = read. Scopes per
 * SPEC.md. Revealing secret values (docs/roles.md): OWNER, ADMIN and the ADMIN scope only.
 */
const HELD: Record<Exclude<Caller, 'non-member' | 'invitee' | 'no credentials' | 'custom STAGING deployer'>, readonly string[]> = {
  OWNER: ['read', 'write', 'deploy', 'admin', 'reveal'],
  ADMIN: ['read', 'write', 'deploy', 'admin', 'reveal'],
  DEVELOPER: ['read', 'write', 'deploy'],
  VIEWER: ['read'],
  'token ADMIN': ['read', 'write', 'deploy', 'admin', 'reveal'],
  'token WRITE': ['read', 'write'],
  'token DEPLOY': ['read', 'deploy'],
  'token READ': ['read'],
};
const GRANTS = ['read', 'write', 'deploy', 'admin', 'reveal'];

/**
 * The custom role of the table, as docs/roles.md defines its rules: organization VIEWER (read), every project VIEWER
 * except STAGING DEPLOYER (read + deploy), clusters unlisted (VIEWER: read). The fixture environment, and the
 * services in it, are STAGING; a project answers read when any of its environment types is visible.
 */
const CUSTOM_ROLE = {
  organization_permission: 'VIEWER',
  default_project_permissions: [
    { environment_type: 'DEVELOPMENT', permission: 'VIEWER' },
    { environment_type: 'PREVIEW', permission: 'VIEWER' },
    { environment_type: 'STAGING', permission: 'DEPLOYER' },
    { environment_type: 'PRODUCTION', permission: 'VIEWER' },
  ],
};

/** Targets that live in the fixture (STAGING) environment: the environment itself and what it holds. */
const STAGING_TARGETS: readonly AccessTarget[] = ['environment', 'service', 'deployment_request', 'deployment_stage'];

function heldBy(caller: Exclude<Caller, 'non-member' | 'invitee' | 'no credentials'>, route: DeclaredRoute): readonly string[] {
  if (caller !== 'custom STAGING deployer') return HELD[caller];
  return STAGING_TARGETS.includes(route.authorizedOn) ? ['read', 'deploy'] : ['read'];
}

function isToken(caller: Caller): boolean {
  return caller.startsWith('token ');
}

/**
 * Operations whose handler decides beyond the authorizer, by permission. Each answers the outcome for a caller the
 * authorizer let through.
 */
const HANDLER_RULES: Partial<Record<Permission, (caller: Caller) => Outcome>> = {
  // The invitee is no member, so the service decides: members, the organization's tokens and the invitee may look.
  'invitations:view': (caller) => (caller === 'non-member' ? 404 : 'ok'),
  // Only the invited person may accept; anyone else signed in is refused.
  'invitations:accept': (caller) => (caller === 'invitee' ? 'ok' : 403),
  // Only the OWNER transfers ownership (ADMIN reach lets the request through to the service).
  'ownership:transfer': (caller) => (caller === 'OWNER' ? 'ok' : 403),
  // The operator fleet lists the clusters of the organizations the caller administers; a caller who administers none
  // is refused.
  'cluster-operator-fleet:read': (caller) => (caller === 'OWNER' || caller === 'ADMIN' || caller === 'token ADMIN' ? 'ok' : 403),
};

function expectedOutcome(route: DeclaredRoute, caller: Caller): Outcome {
  if (caller === 'no credentials') return 401;
  const { permission } = route.access;
  const target = route.authorizedOn;
  const requirement = PERMISSIONS[permission] as string;
  if (requirement === 'person' && isToken(caller)) return 403;
  // Only an ADMIN API token acts for the person who created it (here the OWNER); other tokens act for no one.
  if (requirement === 'creator' && isToken(caller) && caller !== 'token ADMIN') return 403;
  if (target !== 'none') {
    if (caller === 'non-member' || caller === 'invitee') return 404;
    const isGrant = GRANTS.includes(requirement);
    if (isGrant && !heldBy(caller, route).includes(requirement)) return 403;
  }
  const rule = HANDLER_RULES[permission];
  if (rule !== undefined) return rule(caller);
  return 'ok';
}

/** The answer to `?<parameter>=true` on a route that declares it: the route's own, then the reveal permission's grant. */
function expectedRevealOutcome(route: DeclaredRoute, caller: Caller): Outcome {
  const outcome = expectedOutcome(route, caller);
  const reveal = route.access.reveal;
  if (outcome !== 'ok' || reveal === undefined || caller === 'no credentials' || caller === 'non-member' || caller === 'invitee') return outcome;
  return heldBy(caller, route).includes(PERMISSIONS[reveal.permission] as string) ? 'ok' : 403;
}

/** A route's querystring schema, as registered: which parameters it takes. */
function querystringProperties(route: RegisteredRoute): string[] {
  const schema = registeredOptions.get(`${route.method} ${route.url}`)?.schema as { querystring?: { properties?: Record<string, unknown> } } | undefined;
  return Object.keys(schema?.querystring?.properties ?? {});
}

interface DeclaredRoute extends RegisteredRoute {
  access: Exclude<RouteAccess, { public: true }>;
  /** Where the authorizer finds the organization: the declared target, or for HOOK_TARGETS the one its hook asks for. */
  authorizedOn: AccessTarget;
}

/**
 * Operations that address their owner in the query, the body or a stored row (the unified /variable API,
 * docs/variables.md): their routes declare target `none` with `ownerFoundByHandler`, and a pre-validation hook asks
 * the same authorizer on the owner the request names. Their cells are expected as for that target, with the owner QUERY_FIXTURES, VALID_BODIES
 * and fillPath give them: the fixture environment, or the fixture application for an import.
 */
const HOOK_TARGETS: Record<string, AccessTarget> = {
  listVariables: 'environment',
  createVariable: 'environment',
  editVariable: 'environment',
  deleteVariable: 'environment',
  createVariableAlias: 'environment',
  createVariableOverride: 'environment',
  importEnvironmentVariables: 'service',
  // The alert receivers and rules (docs/alerts.md): the organization the body or the stored row names.
  ...Object.fromEntries(
    [
      'createAlertReceiver',
      'getAlertReceiver',
      'editAlertReceiver',
      'deleteAlertReceiver',
      'validateNewAlertReceiver',
      'validateExistingAlertReceiver',
      'createAlertRule',
      'getAlertRule',
      'editAlertRule',
      'deleteAlertRule',
    ].map((operation) => [operation, 'organization' as const]),
  ),
};

/**
 * The route options of every Fastify instance created while this file runs, captured as Fastify registers them
 * (through its documented initialization channel) and read after the app is ready, when every plugin has set them.
 */
const registeredOptions = new Map<string, RouteOptions>();
diagnosticsChannel.channel('fastify.initialization').subscribe((message) => {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) registeredOptions.set(`${method} ${route.url}`, route);
  });
});

function declarationOf(route: RegisteredRoute): RouteAccess | undefined {
  return registeredOptions.get(`${route.method} ${route.url}`)?.config?.access;
}

/** The people of the table; the same people belong to every organization created for it. */
interface People {
  owner: TestUser;
  admin: TestUser;
  developer: TestUser;
  viewer: TestUser;
  /** The member holding the custom role of the table (CUSTOM_ROLE). */
  customMember: TestUser;
  /** A VIEWER member whose role changes, removal or promotion the member operations act on. */
  bystander: TestUser;
  nonMember: TestUser;
  invitee: TestUser;
}

/** A fixture made the first time a cell needs it, then kept for the life of its world. */
type Fixture = () => Promise<string>;

function once(make: () => Promise<string>): Fixture {
  let made: Promise<string> | undefined;
  return () => (made ??= make());
}

/**
 * One organization with the people of the table as members, and the resources the routes act on. Each write cell
 * gets a fresh world, so only what a cell's path and body name is created (the rest would cost hundreds of requests
 * per cell for nothing); the read pass creates everything up front, before it snapshots the database.
 */
interface World {
  organizationId: string;
  roleIds: Record<MemberRole, string>;
  tokens: Record<Scope, Fixture>;
  /** The custom role of the table, given to `customMember` (answers the role's id). */
  customRoleMember: Fixture;
  /** Another custom role, which nobody holds: deleting it is legal. */
  customRoleId: Fixture;
  projectId: Fixture;
  apiTokenId: Fixture;
  policyApiTokenId: Fixture;
  inviteId: Fixture;
  gitTokenId: Fixture;
  invoiceId: Fixture;
  creditCardId: Fixture;
  /** A registry and a repository at addresses that do not resolve: checks answer 200 "unreachable", listings 400. */
  containerRegistryId: Fixture;
  helmRepositoryId: Fixture;
  labelsGroupId: Fixture;
  annotationsGroupId: Fixture;
  /** A cluster that has a platform configuration, so its reads answer 200. */
  clusterId: Fixture;
  /** A READY (never deployed) environment on that cluster: deploying and deleting it are legal. */
  environmentId: Fixture;
  /** One cloud credential per provider path segment (aws, scaleway, gcp, onPremise): each path finds only its own. */
  credentialsIds: Record<string, Fixture>;
  /** A variable and a secret of the project and of the environment (variable and secret path parameters). */
  variableIds: { project: Fixture; projectSecret: Fixture; environment: Fixture; environmentSecret: Fixture };
  /** A webhook at an address that does not resolve (nothing publishes to it here): its delivery log is empty. */
  webhookId: Fixture;
  alertReceiverId: Fixture;
  alertRuleId: Fixture;
  /** One service of each kind in the fixture environment, by its path parameter (applicationId, databaseId, …). */
  serviceIds: Record<string, Fixture>;
  /** A variable and a secret of each service that has variables of its own (every kind but DATABASE). */
  serviceVariableIds: Record<string, { variable: Fixture; secret: Fixture }>;
  /** A finished (CANCELED) deployment record of each service, by the service's path parameter. */
  deploymentIds: Record<string, Fixture>;
  /** Two stages of the fixture environment beside its defaults, empty: deleting one and moving one around the other are legal. */
  deploymentStageIds: { stage: Fixture; other: Fixture };
  /** A deployment rule of the project, and the fixture environment's own rule (written when the environment is). */
  deploymentRuleIds: { project: Fixture; environment: Fixture };
  /**
   * Reading the environment's stages places every service without one in its default stage (docs/deployment-stages.md):
   * done once every fixture service exists, so the reads of the table find the layout settled and change nothing.
   */
  settleDeploymentStages: () => Promise<void>;
}

/** Makes every fixture of a world, for the pass that compares the database before and after. */
async function createEverything(world: World): Promise<void> {
  const fixtures: Fixture[] = [
    ...Object.values(world.deploymentIds),
    ...Object.values(world.tokens),
    world.customRoleMember,
    world.customRoleId,
    world.projectId,
    world.apiTokenId,
    world.policyApiTokenId,
    world.inviteId,
    world.gitTokenId,
    world.invoiceId,
    world.creditCardId,
    world.containerRegistryId,
    world.helmRepositoryId,
    world.labelsGroupId,
    world.annotationsGroupId,
    world.clusterId,
    world.environmentId,
    ...Object.values(world.credentialsIds),
    ...Object.values(world.variableIds),
    world.webhookId,
    world.alertReceiverId,
    world.alertRuleId,
    ...Object.values(world.serviceIds),
    ...Object.values(world.serviceVariableIds).flatMap((ids) => [ids.variable, ids.secret]),
    ...Object.values(world.deploymentStageIds),
    ...Object.values(world.deploymentRuleIds),
  ];
  for (const fixture of fixtures) await fixture();
  await world.settleDeploymentStages();
}

async function createWorld(testApp: TestApp, people: People): Promise<World> {
  const organizationId = await testApp.createOrganization(people.owner);
  const { db } = testApp.database;
  const roles = await db.selectFrom('roles').select(['id', 'name']).where('organization_id', '=', organizationId).execute();
  const roleIds = Object.fromEntries(roles.map((role) => [role.name, role.id])) as Record<MemberRole, string>;
  const now = testApp.clock.now().toISOString();
  const members: [TestUser, MemberRole][] = [
    [people.admin, 'ADMIN'],
    [people.developer, 'DEVELOPER'],
    [people.viewer, 'VIEWER'],
    [people.bystander, 'VIEWER'],
  ];
  await db
    .insertInto('members')
    .values(members.map(([user, role]) => ({ organization_id: organizationId, user_id: user.id, role_id: roleIds[role], created_at: now, updated_at: now })))
    .execute();
  const owner = people.owner.auth;
  const created = async (url: string, payload: Record<string, unknown>, status: number) => {
    const response = await testApp.call(owner, { method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  };
  const token = (scope: Scope) => once(() => testApp.createApiToken(owner, organizationId, { name: uniqueName(`token-${scope}`), scope }));
  const clusterId = once(async () => {
    const id = await created(`/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'us-east-1', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201);
    const configured = await testApp.call(owner, {
      method: 'PUT',
      url: `/organization/${organizationId}/cluster/${id}/platformConfiguration`,
      payload: PLATFORM_CONFIGURATION,
    });
    expect(configured.statusCode, configured.body).toBe(200);
    return id;
  });
  const projectId = once(() => created(`/organization/${organizationId}/project`, { name: uniqueName('project') }, 200));
  const environmentId = once(async () =>
    created(`/project/${await projectId()}/environment`, { name: uniqueName('environment'), cluster: await clusterId(), mode: 'STAGING' }, 201),
  );
  const containerRegistryId = once(() => created(`/organization/${organizationId}/containerRegistry`, REGISTRY_FIXTURE(), 201));
  const serviceIds = Object.fromEntries(
    SERVICE_KIND_DEFINITIONS.map((definition) => [
      definition.idParam,
      once(async () => created(`/environment/${await environmentId()}/${definition.collection}`, await serviceBody(definition.kind, containerRegistryId), 201)),
    ]),
  );
  const serviceVariableIds = Object.fromEntries(
    SERVICE_KIND_DEFINITIONS.filter((definition) => definition.kind !== 'DATABASE').map((definition) => {
      const base = async () => `/${definition.item}/${await (serviceIds[definition.idParam] as Fixture)()}`;
      return [
        definition.idParam,
        {
          variable: once(async () => created(`${await base()}/environmentVariable`, { key: 'ROLE_SERVICE_VARIABLE', value: 's' }, 201)),
          secret: once(async () => created(`${await base()}/secret`, { key: 'ROLE_SERVICE_SECRET', value: 'ss' }, 201)),
        },
      ];
    }),
  );
  // Written directly, like the invoice: a deploy through the API would leave a job the worker keeps working on.
  const deploymentIds = Object.fromEntries(
    SERVICE_KIND_DEFINITIONS.map((definition) => [
      definition.idParam,
      once(async () => deploymentFixture(testApp, await (serviceIds[definition.idParam] as Fixture)())),
    ]),
  );
  const deploymentStage = (name: string) =>
    once(async () => {
      const response = await testApp.call(owner, { method: 'POST', url: `/environment/${await environmentId()}/deploymentStage`, payload: { name: uniqueName(name) } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ id: string }>().id;
    });
  const world: World = {
    serviceIds,
    serviceVariableIds,
    deploymentIds,
    deploymentStageIds: { stage: deploymentStage('stage'), other: deploymentStage('other-stage') },
    deploymentRuleIds: {
      project: once(async () => created(`/project/${await projectId()}/deploymentRule`, await DEPLOYMENT_RULE_FIXTURE(clusterId), 201)),
      environment: once(async () => {
        const rule = await db.selectFrom('environment_deployment_rules').select('id').where('environment_id', '=', await environmentId()).executeTakeFirstOrThrow();
        return rule.id;
      }),
    },
    settleDeploymentStages: async () => {
      const response = await testApp.call(owner, { method: 'GET', url: `/environment/${await environmentId()}/deploymentStage` });
      expect(response.statusCode, response.body).toBe(200);
    },
    organizationId,
    roleIds,
    tokens: { ADMIN: token('ADMIN'), WRITE: token('WRITE'), DEPLOY: token('DEPLOY'), READ: token('READ') },
    customRoleMember: once(async () => {
      const roleId = await created(`/organization/${organizationId}/customRole`, { name: uniqueName('staging-deployer'), ...CUSTOM_ROLE }, 201);
      await db.insertInto('members').values({ organization_id: organizationId, user_id: people.customMember.id, role_id: roleId, created_at: now, updated_at: now }).execute();
      return roleId;
    }),
    customRoleId: once(() => created(`/organization/${organizationId}/customRole`, { name: uniqueName('doomed-role') }, 201)),
    clusterId,
    projectId,
    environmentId,
    variableIds: {
      project: once(async () => created(`/project/${await projectId()}/environmentVariable`, { key: 'ROLE_PROJECT_VARIABLE', value: 'p' }, 201)),
      projectSecret: once(async () => created(`/project/${await projectId()}/secret`, { key: 'ROLE_PROJECT_SECRET', value: 'ps' }, 201)),
      environment: once(async () =>
        created(`/environment/${await environmentId()}/environmentVariable`, { key: 'ROLE_ENVIRONMENT_VARIABLE', value: 'e' }, 201),
      ),
      environmentSecret: once(async () => created(`/environment/${await environmentId()}/secret`, { key: 'ROLE_ENVIRONMENT_SECRET', value: 'es' }, 201)),
    },
    apiTokenId: once(() => created(`/organization/${organizationId}/apiToken`, { name: uniqueName('doomed-token'), scope: 'READ' }, 201)),
    policyApiTokenId: once(() =>
      created(`/organization/${organizationId}/policyApiToken`, { name: uniqueName('doomed-agent'), opa_policy: 'package agent\n\nallow := true\n' }, 201),
    ),
    inviteId: once(() => created(`/organization/${organizationId}/inviteMember`, { email: people.invitee.email, role: 'VIEWER' }, 201)),
    gitTokenId: once(() => created(`/organization/${organizationId}/gitToken`, { name: uniqueName('git'), type: 'GITHUB', token: 'ghp_roleFixture' }, 201)),
    creditCardId: once(() => created(`/organization/${organizationId}/creditCard`, VALID_CARD, 201)),
    invoiceId: once(() => invoiceFixture(testApp, organizationId)),
    containerRegistryId,
    helmRepositoryId: once(() => created(`/organization/${organizationId}/helmRepository`, HELM_REPOSITORY_FIXTURE(), 201)),
    labelsGroupId: once(() => created(`/organization/${organizationId}/labelsGroups`, { name: uniqueName('labels'), labels: [{ key: 'team', value: 'core' }] }, 201)),
    annotationsGroupId: once(() =>
      created(`/organization/${organizationId}/annotationsGroups`, { name: uniqueName('annotations'), annotations: [], scopes: ['PODS'] }, 201),
    ),
    alertReceiverId: once(() => created('/alert-receivers', ALERT_RECEIVER_FIXTURE(organizationId), 201)),
    alertRuleId: once(async () => created('/alert-rules', await ALERT_RULE_FIXTURE(world), 201)),
    webhookId: once(() => created(`/organization/${organizationId}/webhook`, WEBHOOK_FIXTURE(), 201)),
    credentialsIds: {
      aws: once(() => created(`/organization/${organizationId}/aws/credentials`, AWS_CREDENTIALS_FIXTURE(), 201)),
      scaleway: once(() => created(`/organization/${organizationId}/scaleway/credentials`, SCALEWAY_CREDENTIALS_FIXTURE(), 201)),
      gcp: once(() => created(`/organization/${organizationId}/gcp/credentials`, GCP_CREDENTIALS_FIXTURE(), 201)),
      onPremise: once(() => created(`/organization/${organizationId}/onPremise/credentials`, { name: uniqueName('on-premise') }, 201)),
      azure: once(() => created(`/organization/${organizationId}/azure/credentials`, AZURE_CREDENTIALS_FIXTURE(), 201)),
    },
  };
  return world;
}

const AWS_CREDENTIALS_FIXTURE = () => ({ type: 'AWS_STATIC', name: uniqueName('aws'), access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'fixture/secret+key' });
const SCALEWAY_CREDENTIALS_FIXTURE = () => ({
  name: uniqueName('scw'),
  scaleway_access_key: 'SCWFIXTURE0000000000',
  scaleway_secret_key: 'fixture-secret',
  scaleway_project_id: 'project',
  scaleway_organization_id: 'organization',
});
const GCP_CREDENTIALS_FIXTURE = () => ({ name: uniqueName('gcp'), gcp_credentials: '{"type":"service_account"}' });
const AZURE_CREDENTIALS_FIXTURE = () => ({
  name: uniqueName('azure'),
  azure_subscription_id: '0b1f6471-1bf0-4dda-aec3-cb9272f09590',
  azure_tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47',
});

/** A schedule valid for a project's rule and an environment's own (docs/deployment-rules.md). */
const DEPLOYMENT_SCHEDULE = { timezone: 'Europe/Paris', start_time: '08:00', stop_time: '19:00', weekdays: ['MONDAY', 'FRIDAY'] };
const DEPLOYMENT_RULE_FIXTURE = async (clusterId: Fixture) => ({
  name: uniqueName('rule'),
  mode: 'DEVELOPMENT',
  cluster_id: await clusterId(),
  wildcard: 'pr-*',
  ...DEPLOYMENT_SCHEDULE,
});

/** A platform configuration valid for the fixture's AWS cluster. */
const PLATFORM_CONFIGURATION = { templateKey: 'generic-kubernetes', templateVersion: '1.1.0', managedConfig: { traefik: { replicas: 3 } } };

/** A registry and a Helm repository under the reserved .invalid domain: accepted, never reached. */
const REGISTRY_FIXTURE = () => ({ name: uniqueName('registry'), kind: 'GENERIC_CR', url: 'https://registry.slipway-fixture.invalid', config: { username: 'robot', password: 'fixture-pw' } });
const HELM_REPOSITORY_FIXTURE = () => ({ name: uniqueName('charts'), kind: 'HTTPS', url: 'https://charts.slipway-fixture.invalid/stable' });
// Alert receivers and rules name their organization in the body (docs/alerts.md): a Slack receiver to an address
// that does not resolve, and a rule on the fixture application's failed deployments.
const ALERT_RECEIVER_FIXTURE = (organizationId: string) => ({
  organization_id: organizationId,
  name: uniqueName('alerts'),
  description: 'the on-call channel',
  type: 'SLACK',
  send_resolved: true,
  webhook_url: 'https://hooks.slipway-fixture.invalid/services/T000/B000/XXXX',
});
const ALERT_RULE_FIXTURE = async (world: World) => ({
  organization_id: world.organizationId,
  cluster_id: await world.clusterId(),
  name: uniqueName('rule'),
  description: 'the shop does not deploy',
  tag: 'deployments',
  condition: { kind: 'BUILT', promql: 'deployment_failed' },
  for_duration: 'PT5M',
  severity: 'HIGH',
  presentation: { summary: 'A deployment failed' },
  enabled: true,
  alert_receiver_ids: [await world.alertReceiverId()],
  target: { target_type: 'APPLICATION', target_id: await (world.serviceIds.applicationId as Fixture)() },
});
const WEBHOOK_FIXTURE = () => ({ target_url: 'https://hooks.slipway-fixture.invalid/events', events: ['DEPLOYMENT_FAILURE'], description: uniqueName('hook') });
const LABELS_GROUP_FIXTURE = () => ({ name: uniqueName('labels'), labels: [{ key: 'app.kubernetes.io/part-of', value: 'shop' }] });
const ANNOTATIONS_GROUP_FIXTURE = () => ({ name: uniqueName('annotations'), annotations: [{ key: 'example.com/owner', value: 'team a' }], scopes: ['INGRESS'] });

/**
 * Reads that fetch from the registry or repository the fixture names (an address that does not resolve): allowed
 * callers reach the handler, which answers 400 saying the address could not be resolved.
 */
// A custom domain's status is a live DNS check (docs/service-kinds.md), and getHelmCustomDomain reads one domain; no
// fixture domain exists, so these reach the handler and answer 404 for the path's random domain id.
// A service's commits are read from its repository, which the fixture names on github.com (not reachable here: 400),
// and the fixture job is built from an image (400: no commits).
const REMOTE_READS = new Set([
  'getContainerVersions',
  'getHelmCharts',
  'getCustomDomainStatus',
  'getContainerCustomDomainStatus',
  'getHelmCustomDomain',
  'listApplicationCommit',
  'listJobCommit',
  'listHelmCommit',
  'listTerraformCommit',
  'listApplicationContributor',
  // The organization's git provider listings read the fixture token's provider (api.github.com, not resolvable here).
  'getOrganizationGithubRepositories',
  'getOrganizationGithubRepositoryBranches',
  'getOrganizationGitlabRepositoryBranches',
  'getOrganizationBitbucketRepositoryBranches',
  // No fixture analysis or build usage report exists: these reach the handler and answer 404 for the path's random id.
  'getClusterAnalysis',
  'listClusterAnalysisLogs',
  'downloadDeploymentBuildUsageReport',
]);

/** The query an operation needs to address its fixture (operations not listed here are called without one). */
const QUERY_FIXTURES: Record<string, (world: World) => Promise<Record<string, string>>> = {
  listVariables: async (world) => ({ scope: 'ENVIRONMENT', parent_id: await world.environmentId() }),
  importEnvironmentVariables: async (world) => ({ service_type: 'APPLICATION', service_id: await (world.serviceIds.applicationId as Fixture)() }),
  getDeploymentStatusByDeploymentRequestId: async (world) => ({ deploymentRequestId: await (world.deploymentIds.applicationId as Fixture)() }),
  'get-cluster-kubernetes-events': async () => ({ from_date_time: '2026-01-01T00:00:00Z', to_date_time: '2026-12-31T00:00:00Z' }),
  'get-cluster-logs': async () => ({ endpoint: 'query_range', query: '{type="error"}' }),
  'get-cluster-metrics': async () => ({ endpoint: 'query', query: 'up' }),
  ...Object.fromEntries(
    ['getOrganizationGithubRepositoryBranches', 'getOrganizationGitlabRepositoryBranches', 'getOrganizationBitbucketRepositoryBranches'].map((operation) => [
      operation,
      async () => ({ name: 'acme/shop' }),
    ]),
  ),
};
// The agent's install answers mint a one-time enrollment token of a SELF_MANAGED cluster (docs/kubernetes.md,
// "Installing the agent"); the fixture's cluster is another kind, so allowed callers reach the handler and get its 400.
// So do the cluster's kubeconfig, token and operator (docs/cluster-insight.md), and the EKS Anywhere reads, which a
// cluster without EKS Anywhere parameters refuses with 400.
// A live stream opens only when Accept names it (it never ends): called without, allowed callers reach the handler
// and get its 400.
const STREAM_READS = new Set(['streamOrganizationChanges']);
const INSTALL_READS = new Set([
  'getInstallationHelmValues',
  'getInstallationManifests',
  'getClusterOperatorBootstrap',
  'getClusterOperatorStatus',
  'getClusterKubeconfig',
  'get-cluster-token-by-clusterId',
  'getEksAnywhereClusterJwt',
  'listEksAnywhereCommits',
]);

const VALID_CARD = { number: '4242 4242 4242 4242', cvv: '123', expiry_month: 12, expiry_year: new Date().getUTCFullYear() + 2 };

/** A deployment record of a service that ended before any agent took it (CANCELED), with an empty snapshot. */
async function deploymentFixture(testApp: TestApp, serviceId: string): Promise<string> {
  const { db } = testApp.database;
  const service = await db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
  const environment = await db.selectFrom('environments').selectAll().where('id', '=', service.environment_id).executeTakeFirstOrThrow();
  const id = randomUUID();
  const now = testApp.clock.now().toISOString();
  const snapshot = {
    service: {
      id: service.id,
      kind: service.kind,
      name: service.name,
      organizationId: service.organization_id,
      environmentId: service.environment_id,
      clusterId: environment.cluster_id,
      settings: {},
    },
    git_commit_id: null,
    image_tag: null,
    variables: null,
  };
  await db
    .insertInto('service_deployments')
    .values({
      id,
      service_id: serviceId,
      action: 'DEPLOY',
      status: 'CANCELED',
      message: 'canceled before the agent took it',
      origin: 'API',
      triggered_by: 'role-enforcement fixture',
      job_id: randomUUID(),
      git_commit_id: null,
      image_tag: null,
      settings_hash: '0'.repeat(64),
      variables_hash: null,
      snapshot: JSON.stringify(snapshot),
      created_at: now,
      updated_at: now,
      finished_at: now,
    })
    .execute();
  return id;
}

/**
 * A paid invoice of a past month, written directly: invoices come from the monthly run, which is not what this file
 * tests, and an unpaid one would make the organization's billing invalid and its deploys answer 402.
 */
async function invoiceFixture(testApp: TestApp, organizationId: string): Promise<string> {
  const id = randomUUID();
  const now = testApp.clock.now().toISOString();
  await testApp.database.db
    .insertInto('billing_invoices')
    .values({
      id,
      organization_id: organizationId,
      period: '2020-01',
      plan: 'STARTUP',
      status: 'PAID',
      currency_code: 'USD',
      subtotal_cents: 4900,
      allowance_cents: 0,
      credit_applied_cents: 0,
      total_cents: 4900,
      lines: JSON.stringify([{ description: 'Startup plan, 2020-01', amountCents: 4900 }]),
      created_at: now,
      paid_at: now,
      payment_reference: null,
    })
    .execute();
  return id;
}

/** A valid request body per operation, so an allowed call must succeed; operations not listed here get `{}`. */
/** A valid create body of each service kind (the container and the job name an image of the fixture registry). */
async function serviceBody(kind: string, registryId: Fixture): Promise<Record<string, unknown>> {
  const git = { url: 'https://github.com/acme/role-table', provider: 'GITHUB', branch: 'main' };
  switch (kind) {
    case 'APPLICATION':
      return { name: uniqueName('app'), git_repository: git, healthchecks: {} };
    case 'CONTAINER':
      return { name: uniqueName('container'), registry_id: await registryId(), image_name: 'library/nginx', tag: '1.27-alpine', healthchecks: {} };
    case 'DATABASE':
      return { name: uniqueName('db'), type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' };
    case 'JOB':
      return {
        name: uniqueName('job'),
        source: { image: { image_name: 'acme/report', tag: 'v1', registry_id: await registryId() } },
        schedule: { cronjob: { scheduled_at: '0 3 * * *' } },
        healthchecks: {},
      };
    case 'HELM':
      return { name: uniqueName('helm'), source: { git_repository: { ...git, root_path: '/chart' } } };
    case 'TERRAFORM':
      return { name: uniqueName('terraform'), terraform_files_source: { git_repository: git } };
    case 'AGENTIC_WORKFLOW':
      return { name: uniqueName('agent'), model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4', api_key_variable: 'ANTHROPIC_API_KEY' }, instructions: 'Summarise the day.' };
    default:
      throw new Error(`no role-table fixture for service kind ${kind}: add one here`);
  }
}

/** Each kind's create and edit (a database's edit leaves its type and mode out), and the service-scope variables. */
function serviceBodies(): Record<string, (world: World) => Promise<Record<string, unknown>> | Record<string, unknown>> {
  const bodies: Record<string, (world: World) => Promise<Record<string, unknown>> | Record<string, unknown>> = {};
  for (const definition of SERVICE_KIND_DEFINITIONS) {
    bodies[definition.operations.create] = (world) => serviceBody(definition.kind, world.containerRegistryId);
    bodies[definition.operations.edit] =
      definition.kind === 'DATABASE' ? () => ({ name: uniqueName('db') }) : (world) => serviceBody(definition.kind, world.containerRegistryId);
    if (definition.kind === 'DATABASE') continue;
    const noun = definition.operationNoun;
    bodies[`deploy${noun}`] = () => ({});
    bodies[`create${noun}EnvironmentVariable`] = () => ({ key: 'ROLE_CREATED', value: 'x' });
    bodies[`edit${noun}EnvironmentVariable`] = () => ({ key: 'ROLE_SERVICE_VARIABLE', value: 'edited' });
    bodies[`create${noun}EnvironmentVariableOverride`] = () => ({ value: 'overridden' });
    bodies[`create${noun}EnvironmentVariableAlias`] = () => ({ key: 'ROLE_ALIAS' });
    bodies[`create${noun}Secret`] = () => ({ key: 'ROLE_CREATED_SECRET', value: 'x' });
    bodies[`edit${noun}Secret`] = () => ({ key: 'ROLE_SERVICE_SECRET', value: 'edited' });
    bodies[`create${noun}SecretOverride`] = () => ({ value: 'overridden' });
    bodies[`create${noun}SecretAlias`] = () => ({ key: 'ROLE_SECRET_ALIAS' });
  }
  return bodies;
}

const VALID_BODIES: Record<string, (world: World, people: People) => Record<string, unknown> | Promise<Record<string, unknown>>> = {
  ...serviceBodies(),
  createOrganization: () => ({ name: uniqueName('org') }),
  editOrganization: () => ({ name: uniqueName('renamed') }),
  updateOrganizationOnboarding: () => ({ status: 'IN_PROGRESS' }),
  createOrganizationApiToken: () => ({ name: uniqueName('token'), scope: 'READ' }),
  createOrganizationPolicyApiToken: () => ({ name: uniqueName('agent'), opa_policy: 'package agent\n\nallow := input.method == "GET"\n' }),
  evaluateOrganizationPolicyApiTokenPolicy: () => ({ opa_policy: 'package agent\n\nallow := true\n', input: { method: 'GET' } }),
  createProject: () => ({ name: uniqueName('project') }),
  editProject: () => ({ name: uniqueName('project') }),
  editOrganizationMemberRole: (world, people) => ({ user_id: people.bystander.id, role_id: world.roleIds.DEVELOPER }),
  deleteMember: (_world, people) => ({ user_id: people.bystander.id }),
  postInviteMember: () => ({ email: `${uniqueName('invited')}@example.com`, role: 'VIEWER' }),
  postOrganizationTransferOwnership: (_world, people) => ({ user_id: people.bystander.id }),
  createGitToken: () => ({ name: uniqueName('git'), type: 'GITLAB', token: 'glpat_roleFixture' }),
  editGitToken: () => ({ name: uniqueName('git'), type: 'GITHUB' }),
  addCreditCard: () => VALID_CARD,
  editOrganizationBillingInfo: () => ({ first_name: 'A', last_name: 'B', email: 'billing@example.com', address: '1 Main St', city: 'Gent', zip: '9000', country_code: 'BE' }),
  changePlan: () => ({ plan: 'STARTUP' }),
  generateBillingUsageReport: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z', report_expiration_in_seconds: 600 }),
  createContainerRegistry: REGISTRY_FIXTURE,
  editContainerRegistry: REGISTRY_FIXTURE,
  createHelmRepository: HELM_REPOSITORY_FIXTURE,
  editHelmRepository: HELM_REPOSITORY_FIXTURE,
  createOrganizationLabelsGroup: LABELS_GROUP_FIXTURE,
  editOrganizationLabelsGroup: LABELS_GROUP_FIXTURE,
  createOrganizationAnnotationsGroup: ANNOTATIONS_GROUP_FIXTURE,
  editOrganizationAnnotationsGroup: ANNOTATIONS_GROUP_FIXTURE,
  createCluster: () => ({ name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }),
  editCluster: () => ({ name: uniqueName('cluster'), region: 'us-east-1', cloud_provider: 'AWS', kubernetes: 'MANAGED', max_running_nodes: 2 }),
  lockCluster: () => ({ reason: 'role table', ttl_in_days: 1 }),
  updateClusterPlatformConfiguration: () => PLATFORM_CONFIGURATION,
  updateClusterPlatformBinding: () => PLATFORM_CONFIGURATION,
  createAWSCredentials: AWS_CREDENTIALS_FIXTURE,
  editAWSCredentials: AWS_CREDENTIALS_FIXTURE,
  createScalewayCredentials: SCALEWAY_CREDENTIALS_FIXTURE,
  editScalewayCredentials: SCALEWAY_CREDENTIALS_FIXTURE,
  createGcpCredentials: GCP_CREDENTIALS_FIXTURE,
  editGcpCredentials: GCP_CREDENTIALS_FIXTURE,
  createOnPremiseCredentials: () => ({ name: uniqueName('on-premise') }),
  editOnPremiseCredentials: () => ({ name: uniqueName('on-premise') }),
  createEnvironment: async (world) => ({ name: uniqueName('environment'), cluster: await world.clusterId(), mode: 'DEVELOPMENT' }),
  editEnvironment: () => ({ name: uniqueName('environment'), mode: 'PRODUCTION' }),
  // Variables: the project's override operations always answer 400 (nothing is broader than PROJECT), so they are
  // left to "reaches the handler"; an environment's override names the project's variable (fillPath).
  createProjectEnvironmentVariable: () => ({ key: 'ROLE_CREATED', value: 'x' }),
  editProjectEnvironmentVariable: () => ({ key: 'ROLE_PROJECT_VARIABLE', value: 'edited' }),
  createProjectEnvironmentVariableAlias: () => ({ key: 'ROLE_ALIAS' }),
  createProjectSecret: () => ({ key: 'ROLE_CREATED_SECRET', value: 'x' }),
  editProjectSecret: () => ({ key: 'ROLE_PROJECT_SECRET', value: 'edited' }),
  createProjectSecretAlias: () => ({ key: 'ROLE_SECRET_ALIAS' }),
  createEnvironmentEnvironmentVariable: () => ({ key: 'ROLE_CREATED', value: 'x' }),
  editEnvironmentEnvironmentVariable: () => ({ key: 'ROLE_ENVIRONMENT_VARIABLE', value: 'edited' }),
  createEnvironmentEnvironmentVariableOverride: () => ({ value: 'overridden' }),
  createEnvironmentEnvironmentVariableAlias: () => ({ key: 'ROLE_ALIAS' }),
  createEnvironmentSecret: () => ({ key: 'ROLE_CREATED_SECRET', value: 'x' }),
  editEnvironmentSecret: () => ({ key: 'ROLE_ENVIRONMENT_SECRET', value: 'edited' }),
  createEnvironmentSecretOverride: () => ({ value: 'overridden' }),
  createEnvironmentSecretAlias: () => ({ key: 'ROLE_SECRET_ALIAS' }),
  cloneEnvironment: () => ({ name: uniqueName('clone'), clone_variables: true }),
  createAzureCredentials: AZURE_CREDENTIALS_FIXTURE,
  editAzureCredentials: AZURE_CREDENTIALS_FIXTURE,
  // The unified variable API, at the fixture environment (HOOK_TARGETS); fillPath's variableId is the environment's
  // variable, or for an alias and an override the project's they link to.
  createVariable: async (world) => ({ key: 'ROLE_UNIFIED', value: 'x', is_secret: false, variable_scope: 'ENVIRONMENT', variable_parent_id: await world.environmentId() }),
  editVariable: () => ({ key: 'ROLE_ENVIRONMENT_VARIABLE', value: 'edited' }),
  createVariableAlias: async (world) => ({ key: 'ROLE_UNIFIED_ALIAS', alias_scope: 'ENVIRONMENT', alias_parent_id: await world.environmentId() }),
  createVariableOverride: async (world) => ({ value: 'overridden', override_scope: 'ENVIRONMENT', override_parent_id: await world.environmentId() }),
  importEnvironmentVariables: () => ({ overwrite: false, vars: [{ name: 'ROLE_IMPORTED', value: 'x', scope: 'APPLICATION', is_secret: false }] }),
  CreateEnvironmentDeploymentStage: () => ({ name: uniqueName('stage') }),
  EditDeploymentStage: () => ({ name: uniqueName('stage'), description: 'renamed by the role table' }),
  AttachServiceToDeploymentStage: () => ({ is_skipped: false }),
  createDeploymentRule: (world) => DEPLOYMENT_RULE_FIXTURE(world.clusterId),
  editProjectDeployemtnRule: (world) => DEPLOYMENT_RULE_FIXTURE(world.clusterId),
  updateDeploymentRulesPriorityOrder: async (world) => ({ project_deployment_rule_ids_in_order: [await world.deploymentRuleIds.project()] }),
  editEnvironmentDeploymentRule: () => ({ auto_stop: false, ...DEPLOYMENT_SCHEDULE }),
  // Every key left out goes back to its default.
  editClusterAdvancedSettings: () => ({}),
  editAccountInformation: () => ({ communication_email: 'role-table@example.com' }),
  createOrganizationWebhook: WEBHOOK_FIXTURE,
  createAlertReceiver: (world) => ALERT_RECEIVER_FIXTURE(world.organizationId),
  editAlertReceiver: (world) => {
    const { organization_id: _organization, ...edit } = ALERT_RECEIVER_FIXTURE(world.organizationId);
    return edit;
  },
  validateNewAlertReceiver: (world) => ({ alert_receiver: ALERT_RECEIVER_FIXTURE(world.organizationId) }),
  createAlertRule: ALERT_RULE_FIXTURE,
  editAlertRule: async (world) => {
    const { organization_id: _organization, cluster_id: _cluster, target: _target, ...edit } = await ALERT_RULE_FIXTURE(world);
    return edit;
  },
  editOrganizationWebhook: WEBHOOK_FIXTURE,
  createOrganizationCustomRole: () => ({ name: uniqueName('role'), ...CUSTOM_ROLE }),
  editOrganizationCustomRole: () => ({ name: uniqueName('role'), cluster_permissions: [], project_permissions: [] }),
};

/** Operations called without a body, so the "ok" answer of each is known to be a success. */
const BODILESS_OPERATIONS = new Set([
  'deleteOrganization',
  'deleteOrganizationApiToken',
  'deleteOrganizationPolicyApiToken',
  'deleteProject',
  'postAcceptInviteMember',
  'deleteInviteMember',
  'deleteGitToken',
  'deleteCreditCard',
  'organizationDownloadAllInvoices',
  'deleteContainerRegistry',
  'checkContainerRegistry',
  'deleteHelmRepository',
  'checkOrganizationHelmRepository',
  'deleteOrganizationLabelsGroup',
  'deleteOrganizationAnnotationsGroup',
  'deleteAWSCredentials',
  'deleteScalewayCredentials',
  'deleteGcpCredentials',
  'deleteOnPremiseCredentials',
  'deleteAzureCredentials',
  // The unified API's environment variable, the fixture stage (empty, not a default one) and the project's rule.
  'deleteVariable',
  'DeleteDeploymentStage',
  'deleteProjectDeploymentRule',
  // Moving the fixture stage before or after the other one of its environment.
  'MoveBeforeDeploymentStage',
  'MoveAfterDeploymentStage',
  // The fixture cluster is READY (never deployed): deploying and deleting it are legal, so allowed callers succeed.
  'deployCluster',
  'deleteCluster',
  // The fixture environment is READY as well. Redeploy, stop, restart and cancel need a deployment first: allowed
  // callers reach the handler, which answers 409 naming the state.
  'deployEnvironment',
  'deleteEnvironment',
  // The fixture variables and secrets exist: deleting them answers 204.
  'deleteProjectEnvironmentVariable',
  'deleteProjectSecret',
  'deleteEnvironmentEnvironmentVariable',
  'deleteEnvironmentSecret',
  'deleteOrganizationWebhook',
  'deleteOrganizationCustomRole',
  // The fixture services are READY (never deployed), and their own variables and secrets exist: deleting answers 204.
  ...SERVICE_KIND_DEFINITIONS.flatMap((definition) =>
    definition.kind === 'DATABASE'
      ? [definition.operations.delete]
      : [definition.operations.delete, `delete${definition.operationNoun}EnvironmentVariable`, `delete${definition.operationNoun}Secret`],
  ),
]);

async function authOf(caller: Caller, world: World, people: People): Promise<string | undefined> {
  switch (caller) {
    case 'OWNER':
      return people.owner.auth;
    case 'ADMIN':
      return people.admin.auth;
    case 'DEVELOPER':
      return people.developer.auth;
    case 'VIEWER':
      return people.viewer.auth;
    case 'custom STAGING deployer':
      await world.customRoleMember();
      return people.customMember.auth;
    case 'token ADMIN':
      return `Bearer ${await world.tokens.ADMIN()}`;
    case 'token WRITE':
      return `Bearer ${await world.tokens.WRITE()}`;
    case 'token DEPLOY':
      return `Token ${await world.tokens.DEPLOY()}`;
    case 'token READ':
      return `Token ${await world.tokens.READ()}`;
    case 'non-member':
      return people.nonMember.auth;
    case 'invitee':
      return people.invitee.auth;
    case 'no credentials':
      return undefined;
  }
}

async function fillPath(url: string, world: World): Promise<string> {
  const service = SERVICE_KIND_DEFINITIONS.find((definition) => url.startsWith(`/${definition.item}/:${definition.idParam}/`));
  const application = world.serviceIds.applicationId as Fixture;
  const serviceRows = service === undefined ? undefined : world.serviceVariableIds[service.idParam];
  const fixtures: Record<string, Fixture> = {
    organizationId: async () => world.organizationId,
    projectId: world.projectId,
    apiTokenId: world.apiTokenId,
    policyApiTokenId: world.policyApiTokenId,
    inviteId: world.inviteId,
    gitTokenId: world.gitTokenId,
    invoiceId: world.invoiceId,
    creditCardId: world.creditCardId,
    containerRegistryId: world.containerRegistryId,
    helmRepositoryId: world.helmRepositoryId,
    labelsGroupId: world.labelsGroupId,
    annotationsGroupId: world.annotationsGroupId,
    clusterId: world.clusterId,
    environmentId: world.environmentId,
    webhookId: world.webhookId,
    alertReceiverId: world.alertReceiverId,
    alertRuleId: world.alertRuleId,
    customRoleId: world.customRoleId,
    // Under /project the project's rows; under /environment the environment's, except that an override names the
    // broader (project) row it overrides.
    ...Object.fromEntries(SERVICE_KIND_DEFINITIONS.map((definition) => [definition.idParam, world.serviceIds[definition.idParam] as Fixture])),
    ...(service === undefined ? {} : { deploymentId: world.deploymentIds[service.idParam] as Fixture }),
    // Under a service's path its own rows, except that an override names a broader row (the project's).
    environmentVariableId:
      serviceRows !== undefined && !url.endsWith('/override')
        ? serviceRows.variable
        : url.startsWith('/project/') || url.endsWith('/override')
          ? world.variableIds.project
          : world.variableIds.environment,
    secretId:
      serviceRows !== undefined && !url.endsWith('/override')
        ? serviceRows.secret
        : url.startsWith('/project/') || url.endsWith('/override')
          ? world.variableIds.projectSecret
          : world.variableIds.environmentSecret,
    credentialsId: world.credentialsIds[/\/organization\/:organizationId\/([A-Za-z]+)\/credentials\//.exec(url)?.[1] ?? 'aws'] ?? (async () => randomUUID()),
    // Routes addressing any kind of service by `serviceId` (or, for a database's link, the application it names) get
    // the fixture application; the ingress status takes its kind in the path.
    serviceId: application,
    targetApplicationId: application,
    serviceType: async () => 'APPLICATION',
    // A service deployment record is a deployment request (the queue's and deploymentStatus's id).
    deploymentRequestId: world.deploymentIds.applicationId as Fixture,
    deploymentStageId: world.deploymentStageIds.stage,
    stageId: world.deploymentStageIds.other,
    deploymentRuleId: url.startsWith('/project/') ? world.deploymentRuleIds.project : world.deploymentRuleIds.environment,
    // The unified API's stored row: the environment's variable, except that an alias or an override names the
    // broader (project) variable it links to, and the body names the environment as where it is created.
    variableId: url.endsWith('/alias') || url.endsWith('/override') ? world.variableIds.project : world.variableIds.environment,
    // The provider catalogs' entries (cloud-provider-catalogs/catalogs/*.json).
    region: async () => (url.startsWith('/azure/') ? 'westeurope' : url.startsWith('/gcp/') ? 'europe-west1' : 'eu-west-3'),
    zone: async () => 'fr-par-1',
    databaseType: async () => 'POSTGRESQL',
  };
  const values: Record<string, string> = {};
  for (const [, name] of url.matchAll(/:([A-Za-z0-9_]+)/g)) {
    if (name !== undefined) values[name] = await (fixtures[name] ?? (async () => randomUUID()))();
  }
  return url.replace(/:([A-Za-z0-9_]+)/g, (_whole, name: string) => values[name] ?? randomUUID());
}

function isErrorBody(response: LightMyRequestResponse, status: number): boolean {
  if (!String(response.headers['content-type'] ?? '').startsWith('application/json')) return false;
  const body = response.json<Record<string, unknown>>();
  return body.status === status && typeof body.message === 'string' && body.request_id === response.headers['x-request-id'];
}

/** Every row of every table (migration bookkeeping aside), to prove that refused calls and reads change nothing. */
async function databaseSnapshot(testApp: TestApp): Promise<Record<string, string[]>> {
  const { db } = testApp.database;
  const names =
    testApp.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  const snapshot: Record<string, string[]> = {};
  // The audit log records refused writes by design (docs/audit-log.md): it is the one table a refusal may change.
  for (const { name } of names.rows.filter((row) => !row.name.startsWith('kysely_') && row.name !== 'organization_events')) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    // The installation's periodic work (src/jobs/job-schedules.ts: kind `schedule.<name>`) runs on its own clock, some
    // of it every minute, while the pass takes minutes; no request writes those rows.
    const mine = name === 'jobs' ? rows.rows.filter((row) => !String(row.kind).startsWith('schedule.')) : rows.rows;
    // The alert rules' evaluation (docs/alerts.md) is such periodic work: it records on each rule when it last looked
    // and what it found; no request writes those columns.
    const own = name === 'alert_rules' ? mine.map(({ state: _state, condition_since: _since, evaluation_seq: _seq, last_evaluated_at: _evaluated, ...row }) => row) : mine;
    snapshot[name] = own.map((row) => JSON.stringify(row)).sort();
  }
  return snapshot;
}

describeEachDatabase('role enforcement', (ctx) => {
  const routes: DeclaredRoute[] = [];
  let operationIds: Map<string, string>;
  let people: People;

  beforeAll(async () => {
    const testApp = ctx();
    // Read before /openapi.json is first asked for: the documents server built then registers its own /docs routes.
    const problems: string[] = [];
    const declared: { route: RegisteredRoute; access: DeclaredRoute['access'] }[] = [];
    for (const route of testApp.app.registeredRoutes()) {
      const access = declarationOf(route);
      if (access === undefined) problems.push(`${route.method} ${route.url}: no access declaration captured`);
      else if (!('public' in access)) declared.push({ route, access });
    }
    expect(problems).toEqual([]);
    const document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { operationId?: string }>>;
    }>();
    operationIds = new Map();
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.operationId !== undefined) operationIds.set(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`, operation.operationId);
      }
    }
    for (const { route, access } of declared) routes.push({ ...route, access, authorizedOn: HOOK_TARGETS[operationOf(route) ?? ''] ?? access.target });
    const [owner, admin, developer, viewer, customMember, bystander, nonMember, invitee] = await Promise.all(
      ['owner', 'admin', 'developer', 'viewer', 'custom', 'bystander', 'outsider', 'invitee'].map((name) => testApp.signUp(uniqueName(name))),
    );
    people = { owner, admin, developer, viewer, customMember, bystander, nonMember, invitee } as People;
  });

  function operationOf(route: RegisteredRoute): string | undefined {
    return operationIds.get(`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`);
  }

  function isRead(route: RegisteredRoute): boolean {
    return route.method === 'GET' || route.method === 'HEAD';
  }

  async function callCell(route: DeclaredRoute, caller: Caller, world: World, extraQuery?: Record<string, string>): Promise<LightMyRequestResponse> {
    const operation = operationOf(route);
    const bodyOf = operation === undefined ? undefined : VALID_BODIES[operation];
    const payload = isRead(route) || (operation !== undefined && BODILESS_OPERATIONS.has(operation)) ? undefined : ((await bodyOf?.(world, people)) ?? {});
    const queryOf = operation === undefined ? undefined : QUERY_FIXTURES[operation];
    const query = { ...(await queryOf?.(world)), ...extraQuery };
    return ctx().call(await authOf(caller, world, people), {
      method: route.method,
      url: await fillPath(route.url, world),
      ...(payload === undefined ? {} : { payload }),
      ...(Object.keys(query).length === 0 ? {} : { query }),
    });
  }

  /** What is wrong with an answer for the expected outcome; undefined when it is right. */
  function problemWith(route: DeclaredRoute, caller: Caller, expected: Outcome, response: LightMyRequestResponse): string | undefined {
    const name = `${route.method} ${route.url} as ${caller}`;
    const status = response.statusCode;
    const seen = `${status} ${response.body.slice(0, 160)}`;
    if (expected === 'ok') {
      const operation = operationOf(route);
      const known = operation !== undefined && ((isRead(route) && !REMOTE_READS.has(operation) && !INSTALL_READS.has(operation) && !STREAM_READS.has(operation)) || operation in VALID_BODIES || BODILESS_OPERATIONS.has(operation));
      if (known) return status >= 200 && status < 300 ? undefined : `${name}: expected 2xx, got ${seen}`;
      return status === 401 || status === 403 || status >= 500 ? `${name}: expected to reach the handler, got ${seen}` : undefined;
    }
    if (status !== expected) return `${name}: expected ${expected}, got ${seen}`;
    if (route.method !== 'HEAD' && !isErrorBody(response, expected)) return `${name}: ${expected} without the error body: ${seen}`;
    return undefined;
  }

  it('finds a declared access for every route, and a handler rule for every route the authorizer cannot scope', () => {
    expect(routes.length).toBeGreaterThan(30);
    // A route that takes a `reveal` parameter declares it, so the authorizer, not its handler, decides who may ask.
    const undeclaredReveals = routes.filter((route) => querystringProperties(route).includes('reveal') && route.access.reveal?.query !== 'reveal');
    expect(undeclaredReveals.map((route) => `${route.method} ${route.url}`)).toEqual([]);
    const declaredReveals = routes.filter((route) => route.access.reveal !== undefined);
    expect(declaredReveals.every((route) => querystringProperties(route).includes(route.access.reveal?.query ?? ''))).toBe(true);
    expect(declaredReveals.every((route) => route.access.reveal?.permission === 'secrets:reveal')).toBe(true);
    // The environment's listing and explanation, and each service kind's with variables (every kind but DATABASE), as
    // GETs (each with the HEAD Fastify adds).
    expect(declaredReveals.filter((route) => route.method === 'GET').length).toBe(2 + 2 * SERVICE_KIND_DEFINITIONS.filter((definition) => definition.kind !== 'DATABASE').length);
    const unscoped = routes.filter((route) => route.access.target === 'none' && route.url.includes(':organizationId'));
    expect(unscoped.filter((route) => HANDLER_RULES[route.access.permission] === undefined).map((route) => `${route.method} ${route.url}`)).toEqual([]);
    // HOOK_TARGETS names exactly the routes that declare their owner found by their handler (with no target of
    // their own), so such a route cannot be added without its cells being expected as for its real target.
    const hooked = routes.filter((route) => HOOK_TARGETS[operationOf(route) ?? ''] !== undefined);
    const ownerFinding = routes.filter((route) => route.access.ownerFoundByHandler === true);
    expect(new Set(ownerFinding.map(operationOf))).toEqual(new Set(Object.keys(HOOK_TARGETS)));
    expect(hooked.filter((route) => route.access.target !== 'none' || route.access.ownerFoundByHandler !== true).map((route) => `${route.method} ${route.url}`)).toEqual([]);
    // The member and invitation operations are in the table.
    const operations = routes.map(operationOf);
    expect(operations).toEqual(
      expect.arrayContaining([
        'getOrganizationMembers',
        'editOrganizationMemberRole',
        'deleteMember',
        'getOrganizationInvitedMembers',
        'postInviteMember',
        'getMemberInvitation',
        'postAcceptInviteMember',
        'deleteInviteMember',
        'postOrganizationTransferOwnership',
      ]),
    );
  });

  it('answers every refused call with its 401, 403 or 404, and every read as expected, changing nothing', async () => {
    const world = await createWorld(ctx(), people);
    await createEverything(world);
    const before = await databaseSnapshot(ctx());
    const cellsToCall = routes.flatMap((route) => CALLERS.map((caller) => ({ route, caller, expected: expectedOutcome(route, caller) }))).filter(({ route, expected }) => expected !== 'ok' || isRead(route));
    // The cells change nothing (asserted below), so they may run side by side: on PostgreSQL their round trips overlap.
    const answers = await mapInPool(cellsToCall, 8, async ({ route, caller, expected }) => {
      const problems: string[] = [];
      let cells = 1;
      const problem = problemWith(route, caller, expected, await callCell(route, caller, world));
      if (problem !== undefined) problems.push(problem);
      // Asking a revealing route for plain values: a read, so it runs here too.
      if (route.access.reveal !== undefined) {
        cells += 1;
        const asked = await callCell(route, caller, world, { [route.access.reveal.query]: 'true' });
        const revealProblem = problemWith(route, caller, expectedRevealOutcome(route, caller), asked);
        if (revealProblem !== undefined) problems.push(`?${route.access.reveal.query}=true: ${revealProblem}`);
        else if (route.method !== 'HEAD' && asked.statusCode === 403 && expected === 'ok' && !asked.json<{ message: string }>().message.includes(route.access.reveal.permission)) {
          problems.push(`?${route.access.reveal.query}=true: ${route.method} ${route.url} as ${caller}: 403 without naming ${route.access.reveal.permission}`);
        }
      }
      return { problems, cells };
    });
    const problems = answers.flatMap((answer) => answer.problems);
    const cells = answers.reduce((sum, answer) => sum + answer.cells, 0);
    expect(problems).toEqual([]);
    expect(cells).toBeGreaterThan(200);
    expect(await databaseSnapshot(ctx())).toEqual(before);
    // Every route times every caller (seven service kinds with their variable routes among them): on PostgreSQL on a
    // shared machine this is minutes, well past the default 20 s.
  }, 600_000);

  it('lets every allowed caller through every write, each on a fresh organization', async () => {
    const allowedWrites = routes.filter((route) => !isRead(route)).flatMap((route) => CALLERS.filter((caller) => expectedOutcome(route, caller) === 'ok').map((caller) => ({ route, caller })));
    const cells = allowedWrites.length;
    // Each cell has an organization of its own, so cells run side by side: with a service of every kind and their
    // variable routes, one after the other is many minutes on PostgreSQL.
    const answers = await mapInPool(allowedWrites, 8, async ({ route, caller }) => problemWith(route, caller, 'ok', await callCell(route, caller, await createWorld(ctx(), people))));
    const problems = answers.filter((problem): problem is string => problem !== undefined);
    expect(problems).toEqual([]);
    expect(cells).toBeGreaterThan(40);
    // One fresh organization per allowed cell, holding only the fixtures the cell names: several thousand requests.
  }, 600_000);
});
