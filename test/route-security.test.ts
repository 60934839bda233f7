import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { mintToken } from '../src/auth/tokens.ts';
import type { RegisteredRoute } from '../src/http/server.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';
import { isConsolePage, isDocumentationRoute, isMetricsRoute, isOperatorRoute, isPublicRoute } from './support/public-routes.ts';

/** A sweep sends a request (with its audit write and snapshot reads) for every route of the API, several hundred. */
const SWEEP_TIMEOUT_MS = 120_000;

/**
 * The route-security table. It walks every route the server has registered (the server's own onRoute listing, so
 * routes of future modules are covered without editing this file) and proves, for each one:
 *
 *   - public routes are exactly /ips, /openapi.json, the /docs pages and the console's pages (/, /console/*);
 *   - every other route refuses a request without credentials, and with each kind of invalid credential, with 401
 *     and the error body;
 *   - a signed-in member of another organization, an ADMIN API token of another organization, and a policy API token
 *     of another organization whose policy allows everything, addressing the victim organization's resources get
 *     403 or 404 — never a success — and the victim's rows are unchanged;
 *   - every route is described in the OpenAPI document with an operation id, including every SPEC.md operation
 *     implemented so far — except GET /metrics, the Prometheus scrape endpoint, served here (a metrics token is set)
 *     so that it is walked like the rest: no user credential opens it.
 */

const SPEC_OPERATION_IDS = [
  'listPlatformIps',
  'listOrganization',
  'createOrganization',
  'getOrganization',
  'editOrganization',
  'deleteOrganization',
  'listOrganizationAvailableRoles',
  'getOrganizationOnboarding',
  'updateOrganizationOnboarding',
  'listOrganizationApiTokens',
  'createOrganizationApiToken',
  'deleteOrganizationApiToken',
  'listOrganizationPolicyApiTokens',
  'createOrganizationPolicyApiToken',
  'deleteOrganizationPolicyApiToken',
  'listProject',
  'createProject',
  'getOrganizationProjectStats',
  'getProject',
  'editProject',
  'deleteProject',
  'getOrganizationMembers',
  'editOrganizationMemberRole',
  'deleteMember',
  'getOrganizationInvitedMembers',
  'postInviteMember',
  'getMemberInvitation',
  'postAcceptInviteMember',
  'deleteInviteMember',
  'postOrganizationTransferOwnership',
  'listOrganizationGitTokens',
  'createGitToken',
  'getOrganizationGitToken',
  'editGitToken',
  'deleteGitToken',
  'getGitTokenAssociatedServices',
  'listDirectoriesFromGitRepository',
  'getOrganizationCurrentCost',
  'addCreditCode',
  'changePlan',
  'getClusterCurrentCost',
  'getOrganizationBillingInfo',
  'editOrganizationBillingInfo',
  'getOrganizationBillingStatus',
  'generateBillingUsageReport',
  'getOrganizationBillingExternalId',
  'listOrganizationInvoice',
  'getOrganizationInvoice',
  'getOrganizationInvoicePDF',
  'organizationDownloadAllInvoices',
  'listOrganizationCreditCards',
  'addCreditCard',
  'deleteCreditCard',
  'listContainerRegistry',
  'createContainerRegistry',
  'getContainerRegistry',
  'editContainerRegistry',
  'deleteContainerRegistry',
  'checkContainerRegistry',
  'getContainerVersions',
  'listHelmRepository',
  'createHelmRepository',
  'getHelmRepository',
  'editHelmRepository',
  'deleteHelmRepository',
  'getHelmCharts',
  'checkOrganizationHelmRepository',
  'listOrganizationLabelsGroup',
  'createOrganizationLabelsGroup',
  'getOrganizationLabelssGroup',
  'editOrganizationLabelsGroup',
  'deleteOrganizationLabelsGroup',
  'getOrganizationLabelsGroupAssociatedItems',
  'listOrganizationAnnotationsGroup',
  'createOrganizationAnnotationsGroup',
  'getOrganizationAnnotationsGroup',
  'editOrganizationAnnotationsGroup',
  'deleteOrganizationAnnotationsGroup',
  'getOrganizationAnnotationsGroupAssociatedItems',
  'listPlatformTemplates',
  'resolvePlatformTemplateComponentConfiguration',
  'getClusterPlatformBinding',
  'updateClusterPlatformBinding',
  'getClusterPlatformConfiguration',
  'updateClusterPlatformConfiguration',
  'listAWSCredentials',
  'createAWSCredentials',
  'getAWSCredentials',
  'editAWSCredentials',
  'deleteAWSCredentials',
  'listScalewayCredentials',
  'createScalewayCredentials',
  'getScalewayCredentials',
  'editScalewayCredentials',
  'deleteScalewayCredentials',
  'listGcpCredentials',
  'createGcpCredentials',
  'getGcpCredentials',
  'editGcpCredentials',
  'deleteGcpCredentials',
  'listOnPremiseCredentials',
  'createOnPremiseCredentials',
  'getOnPremiseCredentials',
  'editOnPremiseCredentials',
  'deleteOnPremiseCredentials',
  'createSelfManagedCluster',
  'listOrganizationCluster',
  'createCluster',
  'getOrganizationClusterStatus',
  'editCluster',
  'deleteCluster',
  'upgradeCluster',
  'listEnvironment',
  'createEnvironment',
  'getEnvironment',
  'editEnvironment',
  'deleteEnvironment',
  'getEnvironmentStatus',
  'deployEnvironment',
  'stopEnvironment',
  'redeployEnvironment',
  'rebootServices',
  'listEnvironmentDeploymentHistory',
  'listEnvironmentDeploymentHistoryV2',
  'listProjectEnvironmentVariable',
  'createProjectEnvironmentVariable',
  'editProjectEnvironmentVariable',
  'deleteProjectEnvironmentVariable',
  'createProjectEnvironmentVariableOverride',
  'createProjectEnvironmentVariableAlias',
  'listProjectSecrets',
  'createProjectSecret',
  'editProjectSecret',
  'deleteProjectSecret',
  'createProjectSecretOverride',
  'createProjectSecretAlias',
  'listEnvironmentEnvironmentVariable',
  'createEnvironmentEnvironmentVariable',
  'editEnvironmentEnvironmentVariable',
  'deleteEnvironmentEnvironmentVariable',
  'createEnvironmentEnvironmentVariableOverride',
  'createEnvironmentEnvironmentVariableAlias',
  'listEnvironmentSecrets',
  'createEnvironmentSecret',
  'editEnvironmentSecret',
  'deleteEnvironmentSecret',
  'createEnvironmentSecretOverride',
  'createEnvironmentSecretAlias',
  // Webhooks (docs/webhooks.md): not in SPEC.md's endpoints, designed in the original product's style.
  'listOrganizationWebHooks',
  'createOrganizationWebhook',
  'getOrganizationWebhook',
  'editOrganizationWebhook',
  'deleteOrganizationWebhook',
  'listWebhookDeliveries',
  'redeliverWebhookDelivery',
];

/** A Rego policy whose `allow` holds for every request: the most a policy API token can be given. */
const ALLOW_EVERYTHING = 'package agent\n\nallow := true\n';

const ERROR_BODY_KEYS = ['status', 'error', 'message', 'request_id', 'details'];

function routeName(route: RegisteredRoute): string {
  return `${route.method} ${route.url}`;
}

/** `/organization/:organizationId` → `/organization/{organizationId}`, the OpenAPI spelling of the same path. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function paramNames(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] as string);
}

function fillPath(url: string, values: Record<string, string>): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_whole, name: string) => values[name] ?? randomUUID()).replace(/\*$/, 'anything');
}

interface OpenApiOperation {
  operationId?: string;
  security?: unknown[];
  parameters?: { name?: string }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  nullable?: boolean;
}

/**
 * A minimal valid-looking instance of a request schema (required fields only), so a refused request is refused by
 * authorization and not merely by validation: were authorization missing, this body would go through.
 */
function sampleOf(schema: JsonSchema | undefined, document: OpenApiDocument, depth = 0): unknown {
  if (schema === undefined || depth > 8) return undefined;
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return sampleOf(document.components?.schemas?.[name], document, depth + 1);
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches !== undefined) {
    const branch = branches.find((candidate) => candidate.type !== 'null') ?? branches[0];
    return sampleOf(branch, document, depth + 1);
  }
  if (schema.allOf !== undefined) {
    return Object.assign({}, ...schema.allOf.map((part) => sampleOf(part, document, depth + 1) as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sampleOf(schema.properties?.[key], document, depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items, document, depth + 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string':
      switch (schema.format) {
        case 'uuid':
          return randomUUID();
        case 'date-time':
          return new Date(Date.now() + 86_400_000).toISOString();
        case 'email':
          return 'intruder@example.com';
        case 'uri':
          return 'https://example.com/';
        default: {
          const text = `intruder-${randomUUID().slice(0, 8)}`;
          return text.length < (schema.minLength ?? 0) ? text.padEnd(schema.minLength ?? 0, 'x') : text.slice(0, schema.maxLength ?? text.length);
        }
      }
    default:
      return undefined;
  }
}

function requestBodyOf(route: RegisteredRoute, document: OpenApiDocument): unknown {
  const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
  const schema = operation?.requestBody?.content?.['application/json']?.schema;
  if (schema !== undefined) return sampleOf(schema, document);
  return ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined;
}

/** The content type of a route's request body when it takes text rather than JSON (none otherwise). */
function textBodyTypeOf(route: RegisteredRoute, document: OpenApiDocument): string | undefined {
  const content = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()]?.requestBody?.content;
  if (content === undefined || 'application/json' in content) return undefined;
  return Object.keys(content)[0];
}

/** Every property name of a schema, nested ones included. */
function propertyNamesOf(schema: JsonSchema | undefined, document: OpenApiDocument, depth = 0): string[] {
  if (schema === undefined || depth > 8) return [];
  if (schema.$ref !== undefined) return propertyNamesOf(document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')], document, depth + 1);
  const parts = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? []), ...(schema.items === undefined ? [] : [schema.items])];
  return [
    ...Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [name, ...propertyNamesOf(property, document, depth + 1)]),
    ...parts.flatMap((part) => propertyNamesOf(part, document, depth + 1)),
  ];
}

/** The names of the fields a route reads from its request: path and query parameters, and its body's properties. */
function requestFieldNames(route: RegisteredRoute, document: OpenApiDocument): string[] {
  const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
  const parameters = (operation?.parameters ?? []).flatMap((parameter) => (parameter.name === undefined ? [] : [parameter.name]));
  return [...new Set([...parameters, ...propertyNamesOf(operation?.requestBody?.content?.['application/json']?.schema, document)])];
}

/** Problems with an error answer of `status`; empty when it is the one error body. */
function errorBodyProblems(response: LightMyRequestResponse, status: number): string[] {
  const problems: string[] = [];
  if (response.statusCode !== status) return [`answered ${response.statusCode} (${response.body.slice(0, 200)}), expected ${status}`];
  if (!String(response.headers['content-type'] ?? '').startsWith('application/json')) {
    problems.push(`content-type ${String(response.headers['content-type'])}`);
    return problems;
  }
  const body = response.json<Record<string, unknown>>();
  const extra = Object.keys(body).filter((key) => !ERROR_BODY_KEYS.includes(key));
  if (extra.length > 0) problems.push(`unexpected error body fields ${extra.join(', ')}`);
  if (body.status !== status) problems.push(`body.status ${String(body.status)}`);
  if (body.error !== STATUS_CODES[status]) problems.push(`body.error ${String(body.error)}`);
  if (typeof body.message !== 'string' || body.message === '') problems.push('no message');
  if (typeof body.request_id !== 'string' || body.request_id !== response.headers['x-request-id']) problems.push('request_id differs from X-Request-Id');
  return problems;
}

/** Every table of the database the app is using (its own schema on PostgreSQL), migration bookkeeping aside. */
async function tableNames(testApp: TestApp): Promise<string[]> {
  const { db } = testApp.database;
  const rows =
    testApp.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  // In one order: PostgreSQL lists the catalog in no particular order, and two snapshots must compare table by table.
  return rows.rows
    .map((row) => row.name)
    .filter((name) => !name.startsWith('kysely_'))
    .sort();
}

/** The table the sweeps' change counters live in (created by the test, in the test's own database). */
const CHANGES_TABLE = 'route_security_changes';

/**
 * Every row of every table, as of now. The sweeps need one after each of several hundred requests, so the rows are
 * kept between reads and a table is read again only when it changed: the test gives each table a trigger that counts
 * its writes (every insert, update and delete, whoever makes it), and one query of the counters says which moved.
 */
class EveryRow {
  private readonly tables = new Map<string, Record<string, unknown>[]>();
  private readonly counts = new Map<string, number>();
  private readonly testApp: TestApp;
  private constructor(testApp: TestApp) {
    this.testApp = testApp;
  }

  static async watch(testApp: TestApp): Promise<EveryRow> {
    const { db } = testApp.database;
    const names = await tableNames(testApp);
    await sql`create table ${sql.table(CHANGES_TABLE)} (table_name text primary key, changes integer not null)`.execute(db);
    if (testApp.dialect === 'postgres') {
      await sql`create function route_security_count() returns trigger language plpgsql as $$
        begin update ${sql.table(CHANGES_TABLE)} set changes = changes + 1 where table_name = TG_TABLE_NAME; return null; end $$`.execute(db);
    }
    for (const name of names) {
      await sql`insert into ${sql.table(CHANGES_TABLE)} values (${name}, 0)`.execute(db);
      if (testApp.dialect === 'postgres') {
        await sql`create trigger ${sql.id(`${name}_changes`)} after insert or update or delete on ${sql.table(name)} for each statement execute function route_security_count()`.execute(db);
        continue;
      }
      for (const event of ['insert', 'update', 'delete']) {
        await sql`create trigger ${sql.id(`${name}_${event}_changes`)} after ${sql.raw(event)} on ${sql.table(name)}
          begin update ${sql.table(CHANGES_TABLE)} set changes = changes + 1 where table_name = ${sql.lit(name)}; end`.execute(db);
      }
    }
    return new EveryRow(testApp);
  }

  async read(): Promise<Map<string, Record<string, unknown>[]>> {
    const { db } = this.testApp.database;
    const counters = (await sql<{ table_name: string; changes: number }>`select table_name, changes from ${sql.table(CHANGES_TABLE)}`.execute(db)).rows;
    for (const { table_name: name, changes } of counters) {
      if (this.counts.get(name) === Number(changes)) continue;
      // Counted before it is read: a write landing in between is read now and counted again, so read again next time.
      this.counts.set(name, Number(changes));
      this.tables.set(name, (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows);
    }
    return this.tables;
  }
}

const watched = new WeakMap<TestApp, Promise<EveryRow>>();

/**
 * Every row that belongs to the victim, by table: rows holding one of the victim's ids in any column, closed
 * transitively (a row that refers to a victim row is the victim's, and so are rows that refer to it), so
 * resources nested under the victim's projects by future modules are covered too.
 */
async function victimSnapshot(testApp: TestApp, seedIds: string[]): Promise<Record<string, string[]>> {
  let rows = watched.get(testApp);
  if (rows === undefined) watched.set(testApp, (rows = EveryRow.watch(testApp)));
  const tables = Object.fromEntries(await (await rows).read());
  const victimIds = new Set(seedIds);
  const owned = new Map<string, Set<Record<string, unknown>>>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [table, rows] of Object.entries(tables)) {
      const mine = owned.get(table) ?? new Set();
      owned.set(table, mine);
      for (const row of rows) {
        if (mine.has(row)) continue;
        if (!Object.values(row).some((value) => typeof value === 'string' && victimIds.has(value))) continue;
        mine.add(row);
        grew = true;
        if (typeof row.id === 'string') victimIds.add(row.id);
      }
    }
  }
  const snapshot: Record<string, string[]> = {};
  for (const [table, rows] of owned) snapshot[table] = [...rows].map((row) => JSON.stringify(row)).sort();
  return snapshot;
}

/** Which of the victim's rows appeared or went between two snapshots, table by table. */
function describeChange(before: Record<string, string[]>, after: Record<string, string[]>): string {
  const changes: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set(before[table] ?? []);
    const is = new Set(after[table] ?? []);
    for (const row of was) if (!is.has(row)) changes.push(`${table} lost ${row}`);
    for (const row of is) if (!was.has(row)) changes.push(`${table} gained ${row}`);
  }
  return changes.join('; ');
}

describeEachDatabase('route security', (ctx) => {
  let routes: RegisteredRoute[] = [];
  let document: OpenApiDocument;
  let victim: TestUser;
  let victimIds: {
    organizationId: string;
    projectId: string;
    apiTokenId: string;
    policyApiTokenId: string;
    environmentVariableId: string;
    secretId: string;
    clusterId: string;
    environmentId: string;
    /** The unified /variable API addresses the project's variable by this name. */
    variableId: string;
    /** An application of the environment, under every name a service is addressed by. */
    applicationId: string;
    serviceId: string;
    targetApplicationId: string;
    /** Two deployment stages of the environment (the moves name the second), and a deployment rule of the project. */
    deploymentStageId: string;
    stageId: string;
    deploymentRuleId: string;
    /** A deployment request (a service deployment record) of the application. */
    deploymentRequestId: string;
  };
  let revokedPolicyTokenAuth: string;
  let expiredPolicyTokenAuth: string;
  let intruder: TestUser;
  let intruderTokenAuth: string;
  let intruderPolicyTokenAuth: string;

  beforeAll(async () => {
    const testApp = ctx();
    routes = [...testApp.app.registeredRoutes()];
    document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();

    victim = await testApp.signUp();
    const organizationId = await testApp.createOrganization(victim);
    const project = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/project`,
      payload: { name: uniqueName('victim-project') },
    });
    expect(project.statusCode).toBe(200);
    // A variable and a secret of the victim's project: the routes that address them by id get the real ones.
    const variable = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/environmentVariable`,
      payload: { key: 'VICTIM_SETTING', value: 'victim-value' },
    });
    expect(variable.statusCode).toBe(201);
    const secret = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/secret`,
      payload: { key: 'VICTIM_SECRET', value: 'victim-secret-value' },
    });
    expect(secret.statusCode).toBe(201);
    const created = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/apiToken`,
      payload: { name: uniqueName('victim-token'), scope: 'ADMIN' },
    });
    expect(created.statusCode).toBe(201);
    const policyToken = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken`,
      payload: { name: uniqueName('victim-agent'), opa_policy: 'package agent\n\nallow if input.method == "GET"\n' },
    });
    expect(policyToken.statusCode).toBe(201);
    // A policy token that existed and was revoked: its value must be worthless at once.
    const revoked = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken`,
      payload: { name: uniqueName('revoked-agent'), opa_policy: ALLOW_EVERYTHING },
    });
    expect(revoked.statusCode).toBe(201);
    const revocation = await testApp.call(victim.auth, {
      method: 'DELETE',
      url: `/organization/${organizationId}/policyApiToken/${revoked.json<{ id: string }>().id}`,
    });
    expect(revocation.statusCode).toBe(204);
    revokedPolicyTokenAuth = `Bearer ${revoked.json<{ token: string }>().token}`;
    // And one that expired: minted for a minute, then the clock moves past it.
    const expiring = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken`,
      payload: {
        name: uniqueName('expired-agent'),
        opa_policy: ALLOW_EVERYTHING,
        expires_at: new Date(testApp.clock.now().getTime() + 60_000).toISOString(),
      },
    });
    expect(expiring.statusCode).toBe(201);
    expiredPolicyTokenAuth = `Token ${expiring.json<{ token: string }>().token}`;
    testApp.clock.advance(120_000);
    const onboarding = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/onboarding`,
      payload: { status: 'IN_PROGRESS' },
    });
    expect(onboarding.statusCode).toBe(200);
    // A cluster and an environment on it: the environment routes (and those nested under it) get the real ones.
    const cluster = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: uniqueName('victim-cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
    });
    expect(cluster.statusCode).toBe(201);
    const environment = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/environment`,
      payload: { name: uniqueName('victim-environment'), cluster: cluster.json<{ id: string }>().id },
    });
    expect(environment.statusCode).toBe(201);
    const environmentId = environment.json<{ id: string }>().id;
    // An application, two stages and a deployment rule: the routes nested under them get the real ones too.
    const application = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/environment/${environmentId}/application`,
      payload: { name: uniqueName('victim-app'), git_repository: { url: 'https://github.com/acme/victim', provider: 'GITHUB', branch: 'main' }, healthchecks: {} },
    });
    expect(application.statusCode, application.body).toBe(201);
    const stageIds: string[] = [];
    for (const name of ['victim-stage', 'victim-other-stage']) {
      const response = await testApp.call(victim.auth, { method: 'POST', url: `/environment/${environmentId}/deploymentStage`, payload: { name: uniqueName(name) } });
      expect(response.statusCode, response.body).toBe(200);
      stageIds.push(response.json<{ id: string }>().id);
    }
    const [stage, otherStage] = stageIds;
    const rule = await testApp.call(victim.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/deploymentRule`,
      payload: {
        name: uniqueName('victim-rule'),
        mode: 'DEVELOPMENT',
        cluster_id: cluster.json<{ id: string }>().id,
        timezone: 'UTC',
        start_time: '08:00',
        stop_time: '19:00',
        weekdays: ['MONDAY'],
        wildcard: 'victim-*',
      },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    // A deployment record of the application that ended before any agent took it, written directly: a deploy through
    // the API would leave a job the worker keeps working on while the sweeps compare the victim's rows.
    const deploymentRequestId = randomUUID();
    const now = testApp.clock.now().toISOString();
    await testApp.database.db
      .insertInto('service_deployments')
      .values({
        id: deploymentRequestId,
        service_id: application.json<{ id: string }>().id,
        action: 'DEPLOY',
        status: 'CANCELED',
        message: 'canceled before the agent took it',
        origin: 'API',
        triggered_by: 'route-security fixture',
        job_id: randomUUID(),
        git_commit_id: null,
        image_tag: null,
        settings_hash: '0'.repeat(64),
        variables_hash: null,
        snapshot: JSON.stringify({ service: { id: application.json<{ id: string }>().id } }),
        created_at: now,
        updated_at: now,
        finished_at: now,
      })
      .execute();
    victimIds = {
      organizationId,
      projectId: project.json<{ id: string }>().id,
      apiTokenId: created.json<{ id: string }>().id,
      policyApiTokenId: policyToken.json<{ id: string }>().id,
      environmentVariableId: variable.json<{ id: string }>().id,
      secretId: secret.json<{ id: string }>().id,
      clusterId: cluster.json<{ id: string }>().id,
      environmentId,
      variableId: variable.json<{ id: string }>().id,
      applicationId: application.json<{ id: string }>().id,
      serviceId: application.json<{ id: string }>().id,
      targetApplicationId: application.json<{ id: string }>().id,
      deploymentStageId: stage as string,
      stageId: otherStage as string,
      deploymentRuleId: rule.json<{ id: string }>().id,
      deploymentRequestId,
    };

    intruder = await testApp.signUp();
    const intruderOrganizationId = await testApp.createOrganization(intruder);
    intruderTokenAuth = `Bearer ${await testApp.createApiToken(intruder.auth, intruderOrganizationId, { name: uniqueName('intruder-token'), scope: 'ADMIN' })}`;
    const intruderPolicyToken = await testApp.call(intruder.auth, {
      method: 'POST',
      url: `/organization/${intruderOrganizationId}/policyApiToken`,
      payload: { name: uniqueName('intruder-agent'), opa_policy: ALLOW_EVERYTHING },
    });
    expect(intruderPolicyToken.statusCode).toBe(201);
    intruderPolicyTokenAuth = `Bearer ${intruderPolicyToken.json<{ token: string }>().token}`;
    // The intruder's agent really does have admin reach at home, so a refusal below is the organization boundary.
    const atHome = await testApp.call(intruderPolicyTokenAuth, { method: 'GET', url: `/organization/${intruderOrganizationId}/apiToken` });
    expect(atHome.statusCode).toBe(200);
  });

  function victimRequest(route: RegisteredRoute) {
    const textType = textBodyTypeOf(route, document);
    const body = requestBodyOf(route, document);
    return {
      method: route.method,
      url: fillPath(route.url, victimIds),
      // A route that takes a text body (a kubeconfig in YAML) is sent one in its own type: a JSON body would be
      // refused as such (415) before anything else is looked at.
      ...(textType !== undefined ? { payload: 'apiVersion: v1\n', headers: { 'content-type': textType } } : body === undefined ? {} : { payload: body as Record<string, unknown> }),
    };
  }

  it('walks a route listing that holds every implemented SPEC.md operation and the public documents', () => {
    const names = routes.map(routeName);
    expect(names).toEqual(expect.arrayContaining(['GET /ips', 'GET /certificateAuthority', 'GET /openapi.json', 'GET /docs', 'GET /metrics', 'GET /organization/:organizationId', 'DELETE /project/:projectId']));
    const documented = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
    expect(documented).toEqual(expect.arrayContaining(SPEC_OPERATION_IDS));
  });

  it('describes every route in the OpenAPI document with a unique operation id', () => {
    const problems: string[] = [];
    const seen = new Map<string, string>();
    for (const route of routes) {
      if (route.method === 'HEAD' || isDocumentationRoute(route.url) || isConsolePage(route.url) || isMetricsRoute(route.url)) continue;
      const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      const operationId = operation?.operationId;
      if (operationId === undefined || operationId === '') {
        problems.push(`${routeName(route)} has no operationId in /openapi.json`);
        continue;
      }
      const previous = seen.get(operationId);
      if (previous !== undefined) problems.push(`${routeName(route)} reuses the operationId ${operationId} of ${previous}`);
      seen.set(operationId, routeName(route));
    }
    expect(problems).toEqual([]);
  });

  it('serves exactly /ips, /openapi.json, the /docs pages and the console pages without credentials', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const response = await ctx().call(undefined, victimRequest(route));
      if (isOperatorRoute(route.url)) {
        // No user credential is asked for; without the operator's own, the answer is 401.
        if (route.method === 'HEAD') {
          if (response.statusCode !== 401) problems.push(`operator ${routeName(route)} answered ${response.statusCode}`);
          continue;
        }
        for (const problem of errorBodyProblems(response, 401)) problems.push(`operator ${routeName(route)}: ${problem}`);
        continue;
      }
      if (isPublicRoute(route.url)) {
        if (response.statusCode === 401 || response.statusCode === 403 || response.statusCode >= 500) {
          problems.push(`public ${routeName(route)} answered ${response.statusCode}`);
        }
        continue;
      }
      if (route.method === 'HEAD') {
        if (response.statusCode !== 401) problems.push(`${routeName(route)} without credentials answered ${response.statusCode}`);
        continue;
      }
      for (const problem of errorBodyProblems(response, 401)) problems.push(`${routeName(route)} without credentials: ${problem}`);
    }
    expect(problems).toEqual([]);
    expect(routes.filter((route) => isPublicRoute(route.url)).map(routeName)).toEqual(
      expect.arrayContaining(['GET /ips', 'GET /certificateAuthority', 'GET /openapi.json', 'GET /docs', 'GET /', 'GET /console', 'GET /console/*']),
    );
  });

  it('authenticates every operator route before reading its request: 401 naming no field, whatever the body, path or query', { timeout: SWEEP_TIMEOUT_MS }, async () => {
    const operatorRoutes = routes.filter((route) => isOperatorRoute(route.url));
    expect(operatorRoutes.map(routeName)).toEqual(
      expect.arrayContaining(['POST /operator/v1/enroll', 'POST /operator/v1/report', 'GET /operator/v1/tasks', 'POST /operator/v1/tasks/:taskId/progress', 'POST /operator/v1/heartbeat']),
    );
    const credentials: Record<string, string | undefined> = {
      'no credential': undefined,
      'a garbage bearer': 'Bearer garbage',
      'a malformed header': 'Basic b3BlcmF0b3I6cGFzc3dvcmQ=',
      'an unknown operator credential of valid form': `Bearer ${mintToken('operator').value}`,
      'an operator credential with a broken checksum': `Bearer ${mintToken('operator').value.slice(0, -1)}x`,
      'an enrollment token of valid form': `Bearer ${mintToken('enrollment').value}`,
      "a person's JWT": intruder.auth,
      'an ADMIN API token': intruderTokenAuth,
    };
    // What a validator would answer field by field, had it run first.
    interface MalformedRequest {
      label: string;
      payload?: string;
      contentType?: string;
    }
    const malformed: MalformedRequest[] = [
      { label: 'no body' },
      { label: 'an empty object', payload: '{}' },
      { label: 'an unknown field', payload: '{"unexpected":1}' },
      { label: 'an array', payload: '[1,2]' },
      { label: 'a JSON string', payload: '"text"' },
      { label: 'broken JSON', payload: '{"unexpected"' },
      { label: 'plain text', payload: 'hello', contentType: 'text/plain' },
    ];
    // The enrollment route's credential is its body's token: wrong ones, beside a field the route does not take.
    const wrongEnrollments: MalformedRequest[] = [
      { label: 'a garbage token', payload: JSON.stringify({ enrollment_token: 'slwe_garbage', unexpected: 1 }) },
      { label: 'an unknown token of valid form', payload: JSON.stringify({ enrollment_token: mintToken('enrollment').value, unexpected: 1 }) },
      { label: "an operator's credential", payload: JSON.stringify({ enrollment_token: mintToken('operator').value, unexpected: 1 }) },
      { label: 'a number', payload: JSON.stringify({ enrollment_token: 42 }) },
    ];
    const problems: string[] = [];
    for (const route of operatorRoutes) {
      const fields = requestFieldNames(route, document);
      // Path parameters no route accepts, and a query of wrong types, bounds and names.
      const url = `${route.url.replace(/:([A-Za-z0-9_]+)/g, 'not-a-uuid')}?max=many&wait_seconds=-1&lease_id=x&unexpected=1`;
      const readsBody = route.method !== 'GET' && route.method !== 'HEAD';
      const bodies: MalformedRequest[] = !readsBody ? [{ label: 'no body' }] : route.url === '/operator/v1/enroll' ? [...malformed, ...wrongEnrollments] : malformed;
      for (const [who, auth] of Object.entries(credentials)) {
        for (const body of bodies) {
          const response = await ctx().app.inject({
            method: route.method,
            url,
            headers: {
              ...(auth === undefined ? {} : { authorization: auth }),
              ...(body.payload === undefined ? {} : { 'content-type': body.contentType ?? 'application/json' }),
            },
            ...(body.payload === undefined ? {} : { payload: body.payload }),
          });
          const label = `${routeName(route)} with ${who} and ${body.label}`;
          if (route.method === 'HEAD') {
            if (response.statusCode !== 401) problems.push(`${label} answered ${response.statusCode}`);
            continue;
          }
          const found = errorBodyProblems(response, 401);
          for (const problem of found) problems.push(`${label}: ${problem}`);
          if (found.length > 0) continue;
          const answer = response.json<{ message: string; details?: unknown }>();
          if (answer.details !== undefined) problems.push(`${label}: details ${JSON.stringify(answer.details)}`);
          const named = fields.filter((field) => new RegExp(`\\b${field}\\b`).test(answer.message));
          if (named.length > 0) problems.push(`${label}: the message "${answer.message}" names ${named.join(', ')}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('refuses every kind of invalid credential on every non-public route with 401 and the error body', { timeout: SWEEP_TIMEOUT_MS }, async () => {
    const forgedJwt = await ctx().issuer.signToken({ sub: 'sub-forger', email: 'forger@example.com', email_verified: true }, { foreignKey: true });
    const expiredJwt = await ctx().issuer.signToken({ sub: 'sub-expired', email: 'expired@example.com', email_verified: true }, { expiresIn: -600 });
    const wrongAudienceJwt = await ctx().issuer.signToken({ sub: 'sub-other-audience' }, { audience: 'some-other-service' });
    const credentials = {
      'garbage bearer': 'Bearer this-is-not-a-token',
      'garbage scheme': `Basic ${Buffer.from('user:password').toString('base64')}`,
      'empty bearer': 'Bearer ',
      'unknown API token of valid form': `Token ${mintToken('api').value}`,
      'API token with a broken checksum': `Bearer ${mintToken('api').value.slice(0, -1)}x`,
      'unknown policy token of valid form': `Token ${mintToken('policy').value}`,
      'policy token with a broken checksum': `Bearer ${mintToken('policy').value.slice(0, -1)}x`,
      'garbage slwp_ token': 'Bearer slwp_garbage',
      'slwp_ prefix alone': 'Bearer slwp_',
      'revoked policy token': revokedPolicyTokenAuth,
      'expired policy token': expiredPolicyTokenAuth,
      'JWT signed by a foreign key': `Bearer ${forgedJwt}`,
      'expired JWT': `Bearer ${expiredJwt}`,
      'JWT for another audience': `Bearer ${wrongAudienceJwt}`,
    };
    const problems: string[] = [];
    for (const route of routes) {
      if (isPublicRoute(route.url)) continue;
      for (const [kind, auth] of Object.entries(credentials)) {
        const response = await ctx().call(auth, victimRequest(route));
        if (route.method === 'HEAD') {
          if (response.statusCode !== 401) problems.push(`${routeName(route)} with ${kind} answered ${response.statusCode}`);
          continue;
        }
        for (const problem of errorBodyProblems(response, 401)) problems.push(`${routeName(route)} with ${kind}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each([
    ['a signed-in member of another organization', () => intruder.auth],
    ['an ADMIN API token of another organization', () => intruderTokenAuth],
    ['an allow-everything policy API token of another organization', () => intruderPolicyTokenAuth],
  ])("keeps %s out of the victim organization's resources", async (_who, auth) => {
    const seeds = () => [victimIds.organizationId, victimIds.projectId, victimIds.apiTokenId, victimIds.policyApiTokenId, victim.id];
    const initial = await victimSnapshot(ctx(), seeds());
    let before = initial;
    expect(before.variables).toHaveLength(2);
    expect(before.organizations).toHaveLength(1);
    expect(before.projects).toHaveLength(1);
    expect(before.api_tokens).toHaveLength(1);
    // The victim's GET-only agent, and the expired one (still a row, no longer a credential).
    expect(before.policy_tokens).toHaveLength(2);

    const problems: string[] = [];
    for (const route of routes) {
      if (isPublicRoute(route.url)) continue;
      const response = await ctx().call(auth(), victimRequest(route));
      const name = routeName(route);
      if (paramNames(route.url).length > 0) {
        // The route addresses something by id: the victim's real ids where the parameter names one of theirs.
        if (response.statusCode !== 403 && response.statusCode !== 404) {
          problems.push(`${name} answered ${response.statusCode}: ${response.body.slice(0, 200)}`);
        } else if (route.method !== 'HEAD') {
          for (const problem of errorBodyProblems(response, response.statusCode)) problems.push(`${name}: ${problem}`);
        }
      } else {
        // A route naming no resource (list or create organizations) acts on the caller's own world: it may
        // succeed, but must not reveal or touch the victim's.
        if (response.statusCode >= 500) problems.push(`${name} answered ${response.statusCode}`);
        for (const id of [...Object.values(victimIds), victim.id, victim.email]) {
          if (response.body.includes(id)) problems.push(`${name} revealed ${id}`);
        }
      }
      const after = await victimSnapshot(ctx(), seeds());
      const change = describeChange(before, after);
      if (change !== '') {
        problems.push(`${name} changed the victim's rows: ${change}`);
        // Each change is reported once, after the request it followed, not again after every later route.
        before = after;
      }
    }
    expect(problems).toEqual([]);
    expect(await victimSnapshot(ctx(), seeds())).toEqual(initial);
  }, SWEEP_TIMEOUT_MS);
}, { metricsToken: 'route-security-metrics-token' });
