import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { OpenAPI3 } from 'openapi-typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { servedOpenApiDocument } from '../scripts/openapi-snapshot.ts';
import { API_TAGS } from '../src/http/openapi.tags.ts';
import { DEFINITIONS_ID, toJsonSchema } from './support/reference-contract.ts';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The API description as documentation a user reads at /docs (issue 24, part 5): operations grouped under a tag list
 * in the order a user meets them, each with a summary and a description, error answers that say what they mean, and
 * examples that are true to their own schemas.
 */

/** The service kinds as the per-kind tags spell them (`Application Actions`, `AgenticWorkflow Secret`, …). */
const SERVICE_KIND_NOUNS = ['Application', 'Container', 'Database', 'Job', 'Helm', 'Terraform', 'AgenticWorkflow'];

/**
 * The tags whose every operation has been given a summary and a description. Widened to every tag once the modules
 * of the other tags are documented too; until then a tag listed here that loses one fails.
 */
const FULLY_DOCUMENTED_TAGS = [
  'Organization Main Calls',
  'Members',
  'Organization Custom Role',
  'Organization Api Token',
  'Organization Policy Api Token',
  'Projects',
  'Project Main Calls',
  'Certificates',
  'Git repositories',
  'Organization Account Git Repositories',
  'Github App',
  'Container Registries',
  'Helm Repositories',
  'Platform Configuration',
  'IPs',
  'Organization Labels Group',
  'Organization Annotations Group',
  'Webhooks',
  'Alert Receivers',
  'Alert Rules',
  'Billing',
  'Billing downloads',
  'Organization Event',
  'Cluster Agent',
  'Clusters',
  'Cluster Locks',
  'Cluster Operator',
  'Environments',
  'Environment Main Calls',
  'Environment',
  'Environment Logs',
  'Environment Actions',
  'Environment Deployment History',
  'Deployment Queue Actions',
  'Deployment Stage Main Calls',
  'Environment Deployment Rule',
  'Project Deployment Rule',
  'Applications',
  'Containers',
  'Databases',
  'Jobs',
  'Helms',
  'Terraforms',
  'Agentic Workflows',
  ...SERVICE_KIND_NOUNS.flatMap((noun) => [`${noun} Main Calls`, `${noun} Logs`, `${noun} Actions`, `${noun} Deployment History`]),
  ...['Application', 'Container', 'Job', 'Helm', 'Terraform'].map((noun) => `${noun} Configuration`),
  'Project Environment Variable',
  'Project Secret',
  'Environment Variable',
  'Environment Secret',
  ...SERVICE_KIND_NOUNS.filter((noun) => noun !== 'Database').flatMap((noun) => [`${noun} Environment Variable`, `${noun} Secret`]),
  'Variable Main Calls',
  'Cloud Provider Credentials',
  'Cloud Provider',
  'Organization Webhook',
  'service_status',
  'Service Main Calls',
  'Git Webhooks',
  'Backups',
  'Terraform Resources',
  'Environment Export',
];

/** Request bodies and answers that carry an example, one per documented module's main resource. */
const EXAMPLES_EXPECTED: ReadonlyArray<{ operationId: string; part: 'request' | string }> = [
  { operationId: 'createOrganization', part: 'request' },
  { operationId: 'createOrganization', part: '201' },
  { operationId: 'createProject', part: 'request' },
  { operationId: 'createProject', part: '200' },
  { operationId: 'createOrganizationApiToken', part: 'request' },
  { operationId: 'createOrganizationApiToken', part: '201' },
  { operationId: 'createOrganizationPolicyApiToken', part: 'request' },
  { operationId: 'postInviteMember', part: 'request' },
  { operationId: 'postInviteMember', part: '201' },
  { operationId: 'editOrganizationMemberRole', part: 'request' },
  { operationId: 'createOrganizationCustomRole', part: 'request' },
  { operationId: 'createGitToken', part: 'request' },
  { operationId: 'createGitToken', part: '201' },
  { operationId: 'createContainerRegistry', part: 'request' },
  { operationId: 'createContainerRegistry', part: '201' },
  { operationId: 'createHelmRepository', part: 'request' },
  { operationId: 'createOrganizationLabelsGroup', part: 'request' },
  { operationId: 'createOrganizationAnnotationsGroup', part: 'request' },
  { operationId: 'createOrganizationWebhook', part: 'request' },
  { operationId: 'createOrganizationWebhook', part: '201' },
  { operationId: 'editOrganizationBillingInfo', part: 'request' },
  { operationId: 'addCreditCard', part: 'request' },
  { operationId: 'getOrganizationCurrentCost', part: '200' },
  { operationId: 'updateOrganizationOnboarding', part: 'request' },
  { operationId: 'createCluster', part: 'request' },
  { operationId: 'createCluster', part: '201' },
  { operationId: 'lockCluster', part: 'request' },
  { operationId: 'createEnvironment', part: 'request' },
  { operationId: 'createEnvironment', part: '201' },
  { operationId: 'cloneEnvironment', part: 'request' },
  { operationId: 'editEnvironment', part: 'request' },
  { operationId: 'createApplication', part: 'request' },
  { operationId: 'createApplication', part: '201' },
  { operationId: 'createContainer', part: 'request' },
  { operationId: 'createContainer', part: '201' },
  { operationId: 'createDatabase', part: 'request' },
  { operationId: 'createDatabase', part: '201' },
  { operationId: 'createJob', part: 'request' },
  { operationId: 'createJob', part: '201' },
  { operationId: 'createHelm', part: 'request' },
  { operationId: 'createHelm', part: '201' },
  { operationId: 'createTerraform', part: 'request' },
  { operationId: 'createTerraform', part: '201' },
  { operationId: 'createAgenticWorkflow', part: 'request' },
  { operationId: 'createAgenticWorkflow', part: '201' },
  { operationId: 'createEnvironmentEnvironmentVariable', part: 'request' },
  { operationId: 'createEnvironmentEnvironmentVariable', part: '201' },
  { operationId: 'createApplicationSecret', part: 'request' },
  { operationId: 'createApplicationSecret', part: '201' },
  { operationId: 'CreateEnvironmentDeploymentStage', part: 'request' },
  { operationId: 'CreateEnvironmentDeploymentStage', part: '200' },
  { operationId: 'createDeploymentRule', part: 'request' },
  { operationId: 'createDeploymentRule', part: '201' },
  { operationId: 'editEnvironmentDeploymentRule', part: 'request' },
  { operationId: 'editEnvironmentDeploymentRule', part: '200' },
];

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  operation: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function operationsOf(document: OpenAPI3): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Json)) {
      if (isObject(operation) && typeof operation['operationId'] === 'string') operations.push({ method, path, operation });
    }
  }
  return operations;
}

function tagsOf(operation: Json): string[] {
  return Array.isArray(operation['tags']) ? operation['tags'].filter((tag): tag is string => typeof tag === 'string') : [];
}

/** The media objects of an operation's request body ('request') and of each of its responses (by status). */
function mediaOf(operation: Json): Array<{ part: string; mediaType: string; media: Json }> {
  const found: Array<{ part: string; mediaType: string; media: Json }> = [];
  const body = operation['requestBody'];
  const collect = (part: string, holder: unknown) => {
    const content = isObject(holder) ? holder['content'] : undefined;
    for (const [mediaType, media] of Object.entries(isObject(content) ? content : {})) {
      if (isObject(media)) found.push({ part, mediaType, media });
    }
  };
  collect('request', body);
  for (const [status, response] of Object.entries(isObject(operation['responses']) ? operation['responses'] : {})) collect(status, response);
  return found;
}

/** The examples a media object shows: `example`, or each `examples` entry's value. */
function examplesOf(media: Json): unknown[] {
  if ('example' in media) return [media['example']];
  const named = media['examples'];
  return isObject(named) ? Object.values(named).map((entry) => (isObject(entry) ? entry['value'] : undefined)) : [];
}

/** Every schema object with an `example` of its own (a field's), with a pointer to say where it is. */
function schemaExamples(node: unknown, pointer: string, found: Array<{ pointer: string; schema: Json }>): void {
  if (Array.isArray(node)) {
    node.forEach((child, index) => schemaExamples(child, `${pointer}/${index}`, found));
    return;
  }
  if (!isObject(node)) return;
  if ('example' in node && ('type' in node || '$ref' in node || 'anyOf' in node || 'enum' in node)) found.push({ pointer, schema: node });
  for (const [key, child] of Object.entries(node)) {
    if (key !== 'example' && key !== 'examples') schemaExamples(child, `${pointer}/${key}`, found);
  }
}

describe('the API documentation', () => {
  let document: OpenAPI3;
  let operations: Operation[];

  beforeAll(async () => {
    document = await servedOpenApiDocument();
    operations = operationsOf(document);
  }, 60_000);

  it('lists its tags, each described, in the order of src/http/openapi.tags.ts, and every tag an operation uses is listed', () => {
    const listed = (document.tags ?? []).map((tag) => tag.name);
    expect(listed.length).toBeGreaterThan(10);
    expect(new Set(API_TAGS.map((tag) => tag.name)).size, 'a tag named twice in src/http/openapi.tags.ts').toBe(API_TAGS.length);
    for (const tag of document.tags ?? []) expect(tag.description, `tag ${tag.name}`).toMatch(/\S/);
    const order = API_TAGS.map((tag) => tag.name);
    expect(listed).toEqual(order.filter((name) => listed.includes(name)));

    const used = new Set(operations.flatMap(({ operation }) => tagsOf(operation)));
    const unlisted = [...used].filter((tag) => !listed.includes(tag));
    expect(unlisted, 'tags used by routes but missing from src/http/openapi.tags.ts').toEqual([]);
    const unused = listed.filter((tag) => !used.has(tag));
    expect(unused, 'the document lists only tags some operation carries').toEqual([]);
  });

  it('gives every operation of the documented tags a summary and a description', () => {
    const documented = operations.filter(({ operation }) => tagsOf(operation).some((tag) => FULLY_DOCUMENTED_TAGS.includes(tag)));
    expect(documented.length).toBeGreaterThan(100);
    const lacking = documented
      .filter(({ operation }) => typeof operation['summary'] !== 'string' || typeof operation['description'] !== 'string')
      .map(({ operation }) => operation['operationId']);
    expect(lacking, 'operations without a summary or a description').toEqual([]);
    for (const { operation } of documented) {
      const summary = operation['summary'] as string;
      expect(summary.length, `summary of ${String(operation['operationId'])}`).toBeLessThanOrEqual(80);
      expect(summary, `summary of ${String(operation['operationId'])}: a short title, no final period`).not.toMatch(/\.$/);
    }
  });

  it('says what each answer means, and shows an error body for each error status', () => {
    const bare = operations.flatMap(({ operation }) =>
      Object.entries(isObject(operation['responses']) ? operation['responses'] : {})
        .filter(([, response]) => !isObject(response) || response['description'] === 'Default Response')
        .map(([status]) => `${String(operation['operationId'])} ${status}`),
    );
    expect(bare, 'responses the generator left as "Default Response"').toEqual([]);
    const createToken = operations.find(({ operation }) => operation['operationId'] === 'createOrganizationApiToken')?.operation;
    const responses = (createToken?.['responses'] ?? {}) as Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
    expect(responses['404']?.description).toMatch(/organization you belong to/);
    expect(responses['409']?.description).toMatch(/name already taken/);
    // The description is the response's, not part of the shared error schema.
    expect(responses['404']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    expect(responses['404']?.content?.['application/json']).toMatchObject({ example: { status: 404, error: 'Not Found' } });
    expect(responses['400']?.content?.['application/json']).toMatchObject({ example: { status: 400, details: [{ field: '/name' }] } });
  });

  it('shows examples on the main request bodies and answers of the documented modules', () => {
    const missing = EXAMPLES_EXPECTED.filter(({ operationId, part }) => {
      const found = operations.find(({ operation }) => operation['operationId'] === operationId);
      if (found === undefined) return true;
      return !mediaOf(found.operation).some((media) => media.part === part && examplesOf(media.media).length > 0);
    });
    expect(missing).toEqual([]);
  });

  it('has every example valid against its own schema', () => {
    const ajv = new Ajv({ allErrors: true, strict: false, inlineRefs: false });
    addFormats(ajv);
    const origins = new WeakMap<object, string>();
    const definitions: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      definitions[name] = toJsonSchema(schema, `#/components/schemas/${name}`, origins);
    }
    ajv.addSchema({ $id: DEFINITIONS_ID, definitions });

    const problems: string[] = [];
    let checked = 0;
    const check = (where: string, schema: unknown, example: unknown) => {
      const validate = ajv.compile(toJsonSchema(schema, where, origins) as object);
      checked += 1;
      if (!validate(example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const { operation } of operations) {
      for (const { part, mediaType, media } of mediaOf(operation)) {
        for (const example of examplesOf(media)) check(`${String(operation['operationId'])} ${part} ${mediaType}`, media['schema'], example);
      }
    }
    const fieldExamples: Array<{ pointer: string; schema: Json }> = [];
    schemaExamples(document.paths, '#/paths', fieldExamples);
    schemaExamples(document.components, '#/components', fieldExamples);
    for (const { pointer, schema } of fieldExamples) {
      const { example, ...rest } = schema;
      check(pointer, rest, example);
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(EXAMPLES_EXPECTED.length);
  });
});
