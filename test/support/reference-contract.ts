import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { expect } from 'vitest';

// ajv-formats ships CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The reference's response schemas as a contract over every answer the test suite receives (issue 24). Clients
 * generated from the original product's OpenAPI decode our answers with those schemas, so an answer to an operation
 * the reference defines must fit the reference's schema for its status. The reference is OpenAPI 3.0: its schemas
 * are turned into JSON Schema here (nullable, discriminators, `$ref` to components) and checked with Ajv.
 */

export const REFERENCE_DOCUMENT_PATH = new URL('../reference/platform-openapi.yaml', import.meta.url);

/**
 * Where Slipway's answers knowingly differ from the reference's schemas: each entry amends the reference's schema
 * at `pointer` (a JSON pointer into the reference document) before it is compiled, and says why. Mirrored in
 * docs/decisions.md, "Where Slipway differs from the reference's response schemas".
 */
export interface ContractException {
  pointer: string;
  reason: string;
  amend(schema: ReferenceSchema): ReferenceSchema;
}

export const CONTRACT_EXCEPTIONS: readonly ContractException[] = [
  {
    pointer: '#/components/schemas/ClusterStatusResponseList/properties/results/items',
    reason: 'SPEC.md: the cluster status list operation returns only an id and a status for each cluster.',
    amend: () => ({
      type: 'object',
      required: ['cluster_id', 'status'],
      properties: { cluster_id: { type: 'string', format: 'uuid' }, status: { $ref: '#/components/schemas/ClusterStateEnum' } },
    }),
  },
  {
    pointer: '#/components/schemas/CostRange',
    reason:
      'SPEC.md: getClusterCurrentCost answers a cost range, and no exact cost is given, so total and total_in_cents ' +
      'are not answered.',
    amend: (schema) => ({ ...schema, required: ['currency_code'] }),
  },
  {
    pointer: '#/paths/~1organization~1{organizationId}~1invoice~1{invoiceId}~1download/get/responses/200/content/application~1json/schema',
    reason:
      'SPEC.md: the invoice download answers the URL of the PDF in a Link object; the reference’s Link is a ' +
      'service’s link (ports, service id and type), which an invoice has none of.',
    amend: () => ({ type: 'object', required: ['url'], properties: { url: { type: 'string' } } }),
  },
  {
    pointer: '#/components/schemas/OrganizationEventResponseList/properties/links',
    reason:
      'The page links are paths of the same API (docs/audit-log.md), followed as they are on any address the API is ' +
      'reached by; URI types of clients parse them as relative references.',
    amend: (schema) => ({
      ...schema,
      properties: { previous: { type: 'string', format: 'uri-reference' }, next: { type: 'string', format: 'uri-reference' } },
    }),
  },
  {
    pointer: '#/components/schemas/KubernetesEnum',
    reason:
      'LOCAL is Slipway’s cluster kind for the host the control plane runs on (docs/decisions.md, Clusters): none of ' +
      'the reference’s values means it, and the slipway CLI tells clusters apart by it. Only organizations the ' +
      'installation’s operator allowed (`slipway admin local-clusters allow`) have LOCAL clusters.',
    amend: (schema) => ({ ...schema, enum: [...enumOf(schema), 'LOCAL'] }),
  },
  {
    pointer: '#/components/schemas/InviteStatusEnum',
    reason: 'docs/decisions.md, Members and invitations: an accepted invitation answers ACCEPTED, an addition to the reference.',
    amend: (schema) => ({ ...schema, enum: [...enumOf(schema), 'ACCEPTED'] }),
  },
  {
    pointer: '#/components/schemas/HelmPortProtocolEnum',
    reason:
      'A chart may expose a TCP or UDP service (a database, a broker) on an external port of its own, as an ' +
      'application or a container does (docs/service-kinds.md, HELM); the reference’s Helm ports are HTTP and GRPC ' +
      'only. HTTP and GRPC ports answer as the reference does.',
    amend: (schema) => ({ ...schema, enum: [...enumOf(schema), 'TCP', 'UDP'] }),
  },
  {
    pointer: '#/components/schemas/CustomDomainStatusEnum',
    reason:
      'The reference’s enum has VALIDATION_PENDING only, so it cannot say that a domain was verified or failed its ' +
      'check; Slipway verifies custom domains in DNS and answers VALIDATED or VALIDATION_FAILED then ' +
      '(docs/service-kinds.md, Custom domains).',
    amend: (schema) => ({ ...schema, enum: [...enumOf(schema), 'VALIDATED', 'VALIDATION_FAILED'] }),
  },
  {
    pointer: '#/components/schemas/Commit',
    reason:
      'A deployment records the commit id it ran (a deploy names a full commit id; the agent checks it out), not the ' +
      'commit’s author, message, date or tag: the control plane never reads the repository.',
    amend: (schema) => ({ ...schema, required: ['git_commit_id'] }),
  },
  {
    pointer: '#/components/schemas/ServiceTotalNumber',
    reason:
      'The reference requires a field `number` in both parts of ProjectStats without saying what it holds; the ' +
      'counts are service_total_number and environment_total_number, which Slipway answers.',
    amend: ({ required: _required, ...schema }) => schema,
  },
  {
    pointer: '#/components/schemas/EnvironmentTotalNumber',
    reason: 'As ServiceTotalNumber.',
    amend: ({ required: _required, ...schema }) => schema,
  },
  {
    pointer: '#/components/schemas/TerraformProviderVersion',
    reason:
      'A Terraform service whose version is read from the terraform block has no explicit version, and a request ' +
      'giving both is refused (docs/service-kinds.md), so the answer leaves explicit_version out then.',
    amend: ({ required: _required, ...schema }) => schema,
  },
  {
    pointer: '#/components/schemas/AgenticWorkflowResponse',
    reason:
      'AGENTIC_WORKFLOW has Slipway’s own shape (model, instructions, tools, schedule: docs/service-kinds.md), made ' +
      'when the reference named the service type only; its workflows (webhooks, MCP servers, governance) are another ' +
      'design. Only the fields every service answers are checked.',
    amend: () => ({
      type: 'object',
      required: ['id', 'created_at', 'environment', 'name', 'service_type'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        created_at: { type: 'string', format: 'date-time' },
        environment: { $ref: '#/components/schemas/ReferenceObject' },
        name: { type: 'string' },
        service_type: { $ref: '#/components/schemas/ServiceTypeEnum' },
      },
    }),
  },
];

function enumOf(schema: ReferenceSchema): unknown[] {
  return Array.isArray(schema['enum']) ? schema['enum'] : [];
}

/** An OpenAPI 3.0 schema object as the YAML holds it. */
export type ReferenceSchema = { [keyword: string]: unknown };

export interface ReferenceDocument {
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown>; responses?: Record<string, unknown> };
}

export interface SchemaViolation {
  /** Where in the answer's body, as a JSON pointer. */
  instancePath: string;
  /** Where in the reference document the violated keyword is. */
  schemaPath: string;
  message: string;
}

export interface ContractMismatch {
  operationId: string;
  method: string;
  /** The reference's path template. */
  path: string;
  status: number;
  violations: SchemaViolation[];
}

export type ContractVerdict =
  | { kind: 'skipped'; reason: string }
  | { kind: 'conforms'; operationId: string }
  | { kind: 'mismatch'; mismatch: ContractMismatch };

export interface ReceivedAnswer {
  method: string;
  /** The request's URL as sent (path and query). */
  url: string;
  status: number;
  contentType: string | undefined;
  body: string;
  /** The request's Accept header: a client asking for another media type (a log as text) is answered in it. */
  accept?: string | undefined;
}

export interface ReferenceContract {
  check(answer: ReceivedAnswer): ContractVerdict;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
/** The Ajv schema id the converted `#/components/schemas/*` live under: toJsonSchema's `$ref`s point into it. */
export const DEFINITIONS_ID = 'reference';

interface ReferenceOperation {
  operationId: string;
  method: string;
  path: string;
  segments: string[];
  responses: Record<string, unknown>;
}

interface CompiledResponse {
  validate: ValidateFunction;
  /** Where the answer's schema is in the reference. */
  pointer: string;
  /** Media types besides JSON the reference allows for this answer (text/plain IP lists, YAML). */
  otherMediaTypes: string[];
}

export function createReferenceContract(
  document: ReferenceDocument,
  exceptions: readonly ContractException[] = CONTRACT_EXCEPTIONS,
): ReferenceContract {
  const amended = applyExceptions(document, exceptions);
  const origins = new WeakMap<object, string>();
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, inlineRefs: false });
  addFormats(ajv);
  // Formats the reference names that JSON Schema does not define, or that only document a number's width.
  for (const format of ['int32', 'int64', 'float', 'double', 'password', 'binary', 'byte', 'cron', 'string', 'uu']) {
    ajv.addFormat(format, true);
  }
  // ISO 8601 allows a decimal fraction of the smallest unit (PT1.5S), which java.time.Duration and the other clients'
  // parsers read; ajv-formats follows RFC 3339's grammar, which has none.
  ajv.addFormat('duration', /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/);
  const definitions: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(amended.components?.schemas ?? {})) {
    definitions[name] = toJsonSchema(schema, `#/components/schemas/${escapePointer(name)}`, origins);
  }
  ajv.addSchema({ $id: DEFINITIONS_ID, definitions });

  const operations = collectOperations(amended);
  const compiled = new Map<string, CompiledResponse | undefined>();

  function responseSchema(operation: ReferenceOperation, status: string): CompiledResponse | undefined {
    const key = `${operation.method} ${operation.path} ${status}`;
    if (compiled.has(key)) return compiled.get(key);
    const response = resolveResponse(amended, operation.responses[status]);
    const content = isObject(response) && isObject(response['content']) ? response['content'] : {};
    const media = content['application/json'];
    const schema = isObject(media) ? media['schema'] : undefined;
    const pointer = `#/paths/${escapePointer(operation.path)}/${operation.method}/responses/${status}/content/application~1json/schema`;
    const result =
      schema === undefined
        ? undefined
        : {
            validate: ajv.compile(toJsonSchema(schema, pointer, origins) as object),
            pointer,
            otherMediaTypes: Object.keys(content).filter((type) => type !== 'application/json'),
          };
    compiled.set(key, result);
    return result;
  }

  return {
    check(answer) {
      const method = answer.method.toLowerCase();
      const operation = matchOperation(operations, method, pathOf(answer.url));
      if (operation === undefined) return { kind: 'skipped', reason: 'not an operation of the reference' };
      const status = String(answer.status);
      if (!(status in operation.responses)) return { kind: 'skipped', reason: `the reference defines no ${status} for ${operation.operationId}` };
      const compiledResponse = responseSchema(operation, status);
      if (compiledResponse === undefined) return { kind: 'skipped', reason: `the reference defines no JSON body for ${status}` };
      const mismatch = (violations: SchemaViolation[]): ContractVerdict => ({
        kind: 'mismatch',
        mismatch: { operationId: operation.operationId, method: answer.method.toUpperCase(), path: operation.path, status: answer.status, violations },
      });
      const mediaType = (answer.contentType ?? '').split(';')[0]?.trim() ?? '';
      if (compiledResponse.otherMediaTypes.includes(mediaType)) return { kind: 'skipped', reason: `a ${mediaType} answer, not checked` };
      if (mediaType !== 'application/json' && answer.accept !== undefined && !acceptsJson(answer.accept)) {
        return { kind: 'skipped', reason: `the request asked for ${answer.accept}` };
      }
      if (mediaType !== 'application/json') {
        const what = answer.body === '' ? 'no body' : `a body of type ${answer.contentType ?? 'unknown'}`;
        return mismatch([{ instancePath: '', schemaPath: compiledResponse.pointer, message: `answered ${what} where the reference defines a JSON body` }]);
      }
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        return mismatch([{ instancePath: '', schemaPath: compiledResponse.pointer, message: 'answered a body that is not JSON' }]);
      }
      if (compiledResponse.validate(body)) return { kind: 'conforms', operationId: operation.operationId };
      return mismatch(violationsOf(compiledResponse.validate.errors ?? [], origins));
    },
  };
}

function acceptsJson(accept: string): boolean {
  return accept.split(',').some((range) => ['application/json', 'application/*', '*/*'].includes(range.split(';')[0]?.trim().toLowerCase() ?? ''));
}

function violationsOf(errors: ErrorObject[], origins: WeakMap<object, string>): SchemaViolation[] {
  const seen = new Set<string>();
  const violations: SchemaViolation[] = [];
  for (const error of errors) {
    const origin = isObject(error.parentSchema) ? origins.get(error.parentSchema) : undefined;
    const schemaPath = origin === undefined ? error.schemaPath : `${origin}/${error.keyword}`;
    const detail = error.keyword === 'enum' ? ` (${JSON.stringify(error.data)} is not one of ${JSON.stringify(error.params['allowedValues'])})` : '';
    const violation = { instancePath: error.instancePath, schemaPath, message: `${error.message ?? error.keyword}${detail}` };
    const key = JSON.stringify(violation);
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push(violation);
  }
  return violations;
}

export function describeMismatch(mismatch: ContractMismatch): string {
  const lines = mismatch.violations.map((violation) => `  ${violation.instancePath || '(body)'} ${violation.message} — ${violation.schemaPath}`);
  return [
    `the answer of ${mismatch.operationId} (${mismatch.method} ${mismatch.path}) with status ${mismatch.status} does not fit the reference's schema:`,
    ...lines,
  ].join('\n');
}

/** Converts an OpenAPI 3.0 schema object to JSON Schema (draft 7), recording each node's place in the reference. */
export function toJsonSchema(schema: unknown, pointer: string, origins: WeakMap<object, string>): unknown {
  if (!isObject(schema)) return schema;
  const converted = convertNode(schema, pointer, origins);
  origins.set(converted, pointer);
  return converted;
}

function convertNode(schema: Record<string, unknown>, pointer: string, origins: WeakMap<object, string>): Record<string, unknown> {
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    // OpenAPI 3.0 ignores a reference's siblings; `nullable` beside one is honoured, as its authors meant.
    const target = { $ref: definitionRef(ref) };
    return schema['nullable'] === true ? nullableOf(target, pointer, origins) : target;
  }
  const converted: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    const at = `${pointer}/${escapePointer(keyword)}`;
    switch (keyword) {
      case 'properties':
        converted[keyword] = Object.fromEntries(
          Object.entries(isObject(value) ? value : {}).map(([name, property]) => [name, toJsonSchema(property, `${at}/${escapePointer(name)}`, origins)]),
        );
        break;
      case 'items':
      case 'not':
        converted[keyword] = toJsonSchema(value, at, origins);
        break;
      case 'additionalProperties':
        converted[keyword] = typeof value === 'boolean' ? value : toJsonSchema(value, at, origins);
        break;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        // oneOf is checked as anyOf: the reference's variants are open objects, so a body that fits one variant
        // usually fits others too, and a client decodes it by the variant it finds (or the discriminator).
        converted[keyword === 'oneOf' ? 'anyOf' : keyword] = (Array.isArray(value) ? value : []).map((member, index) =>
          toJsonSchema(member, `${at}/${index}`, origins),
        );
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // OpenAPI 3.0's are booleans beside minimum/maximum; draft 7's are the bound itself.
        if (value === true) {
          const bound = schema[keyword === 'exclusiveMinimum' ? 'minimum' : 'maximum'];
          converted[keyword] = bound;
        }
        break;
      case 'type':
      case 'enum':
      case 'format':
      case 'required':
      case 'minimum':
      case 'maximum':
      case 'minLength':
      case 'maxLength':
      case 'pattern':
      case 'minItems':
      case 'maxItems':
      case 'uniqueItems':
      case 'multipleOf':
      case 'minProperties':
      case 'maxProperties':
        converted[keyword] = value;
        break;
      default:
        // Annotations (title, default, readOnly, writeOnly, deprecated, example) do not constrain an answer;
        // nullable and discriminator are applied below.
        break;
    }
  }
  if (schema['exclusiveMinimum'] === true) delete converted['minimum'];
  if (schema['exclusiveMaximum'] === true) delete converted['maximum'];
  const discriminated = withDiscriminator(converted, schema['discriminator'], pointer, origins);
  return schema['nullable'] === true ? nullableOf(discriminated, pointer, origins) : discriminated;
}

/**
 * A discriminator with a mapping picks the variant by the property's value, as generated clients decode it: the
 * property must hold one of the mapping's values and the body must fit that value's schema.
 */
function withDiscriminator(
  converted: Record<string, unknown>,
  discriminator: unknown,
  pointer: string,
  origins: WeakMap<object, string>,
): Record<string, unknown> {
  if (!isObject(discriminator) || typeof discriminator['propertyName'] !== 'string' || !isObject(discriminator['mapping'])) return converted;
  if (!Array.isArray(converted['anyOf'])) return converted;
  const property = discriminator['propertyName'];
  const mapping = Object.entries(discriminator['mapping']).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  const at = `${pointer}/discriminator`;
  const { anyOf: _variants, ...rest } = converted;
  const propertyValues = { enum: mapping.map(([value]) => value) };
  origins.set(propertyValues, `${at}/mapping`);
  const cases = mapping.map(([value, ref]) => {
    const variant = { if: { properties: { [property]: { const: value } } }, then: { $ref: definitionRef(ref) } };
    origins.set(variant, `${at}/mapping/${escapePointer(value)}`);
    return variant;
  });
  const properties = isObject(rest['properties']) ? rest['properties'] : {};
  const required = Array.isArray(rest['required']) ? rest['required'] : [];
  const result = {
    ...rest,
    type: 'object',
    required: [...new Set([...required, property])],
    properties: { ...properties, [property]: propertyValues },
    allOf: [...(Array.isArray(rest['allOf']) ? rest['allOf'] : []), ...cases],
  };
  origins.set(result, at);
  return result;
}

function nullableOf(schema: Record<string, unknown>, pointer: string, origins: WeakMap<object, string>): Record<string, unknown> {
  const type = schema['type'];
  if (typeof type === 'string' && schema['$ref'] === undefined) {
    const enumeration = schema['enum'];
    return {
      ...schema,
      type: [type, 'null'],
      ...(Array.isArray(enumeration) && !enumeration.includes(null) ? { enum: [...enumeration, null] } : {}),
    };
  }
  const inner = schema;
  origins.set(inner, pointer);
  return { anyOf: [{ type: 'null' }, inner] };
}

function definitionRef(ref: string): string {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref in the reference: ${ref}`);
  return `${DEFINITIONS_ID}#/definitions/${ref.slice(prefix.length)}`;
}

function resolveResponse(document: ReferenceDocument, response: unknown): unknown {
  if (isObject(response) && typeof response['$ref'] === 'string') {
    const name = response['$ref'].replace('#/components/responses/', '');
    return document.components?.responses?.[name];
  }
  return response;
}

function collectOperations(document: ReferenceDocument): ReferenceOperation[] {
  const operations: ReferenceOperation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operations.push({
        operationId: typeof operation['operationId'] === 'string' ? operation['operationId'] : `${method} ${path}`,
        method,
        path,
        segments: path.split('/'),
        responses: isObject(operation['responses']) ? operation['responses'] : {},
      });
    }
  }
  return operations;
}

/**
 * The reference operation a request reaches: same method, same number of segments, every literal segment equal.
 * Where several match, literal segments win over parameters from the left, as routers choose.
 */
function matchOperation(operations: ReferenceOperation[], method: string, path: string): ReferenceOperation | undefined {
  const segments = path.split('/');
  let best: ReferenceOperation | undefined;
  let bestRank = '';
  for (const operation of operations) {
    if (operation.method !== method || operation.segments.length !== segments.length) continue;
    let rank = '';
    let matches = true;
    for (const [index, segment] of operation.segments.entries()) {
      const isParameter = segment.startsWith('{') && segment.endsWith('}');
      if (isParameter) {
        if (segments[index] === '') matches = false;
        rank += '0';
      } else if (segment === segments[index]) {
        rank += '1';
      } else {
        matches = false;
      }
      if (!matches) break;
    }
    if (matches && rank > bestRank) {
      best = operation;
      bestRank = rank;
    }
  }
  return best;
}

function pathOf(url: string): string {
  const path = url.split('?')[0] ?? url;
  return path
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .join('/');
}

function applyExceptions(document: ReferenceDocument, exceptions: readonly ContractException[]): ReferenceDocument {
  if (exceptions.length === 0) return document;
  const copy = structuredClone(document) as ReferenceDocument;
  for (const exception of exceptions) {
    const tokens = exception.pointer.replace(/^#\//, '').split('/').map(unescapePointer);
    const last = tokens.pop();
    let parent: unknown = copy;
    for (const token of tokens) parent = childOf(parent, token);
    const schema = last === undefined ? undefined : childOf(parent, last);
    if (last === undefined || !isObject(schema) || !(isObject(parent) || Array.isArray(parent))) {
      throw new Error(`contract exception ${exception.pointer}: no schema there in the reference`);
    }
    (parent as Record<string, unknown>)[last] = exception.amend(schema);
  }
  return copy;
}

function childOf(node: unknown, token: string): unknown {
  if (Array.isArray(node)) return /^\d+$/.test(token) ? node[Number(token)] : undefined;
  return isObject(node) ? node[token] : undefined;
}

function escapePointer(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapePointer(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

let loaded: ReferenceContract | undefined;

/** The contract of the reference document beside this project, loaded once per test process. */
export function referenceContract(): ReferenceContract {
  loaded ??= createReferenceContract(parseYaml(readFileSync(REFERENCE_DOCUMENT_PATH, 'utf8')) as ReferenceDocument);
  return loaded;
}

/**
 * What `call` does with every answer (test-app.ts). By default a mismatch fails the test that received it.
 * `SLIPWAY_CONTRACT=record` appends mismatches as JSON lines to `SLIPWAY_CONTRACT_FILE` (default
 * slipway-contract-mismatches.jsonl in the temporary directory) instead, to see them all from a run of many files;
 * `SLIPWAY_CONTRACT=off` checks nothing.
 */
export function checkAnswerAgainstReference(response: LightMyRequestResponse): void {
  const mode = process.env['SLIPWAY_CONTRACT'] ?? 'enforce';
  if (mode === 'off') return;
  const contentType = response.headers['content-type'];
  const accept = response.raw.req.headers.accept;
  const verdict = referenceContract().check({
    accept: typeof accept === 'string' ? accept : undefined,
    method: response.raw.req.method ?? 'GET',
    url: response.raw.req.url ?? '/',
    status: response.statusCode,
    contentType: typeof contentType === 'string' ? contentType : undefined,
    body: response.body,
  });
  if (verdict.kind !== 'mismatch') return;
  if (mode === 'record') {
    const file = process.env['SLIPWAY_CONTRACT_FILE'] ?? join(tmpdir(), 'slipway-contract-mismatches.jsonl');
    appendFileSync(file, `${JSON.stringify({ ...verdict.mismatch, test: expect.getState().currentTestName })}\n`);
    return;
  }
  throw new Error(describeMismatch(verdict.mismatch));
}
