import { describe, expect, it } from 'vitest';
import {
  CONTRACT_EXCEPTIONS,
  createReferenceContract,
  describeMismatch,
  referenceContract,
  type ContractVerdict,
  type ReceivedAnswer,
  type ReferenceDocument,
} from './support/reference-contract.ts';

/**
 * The checker that makes the whole suite a contract test (test/support/reference-contract.ts, wired into `call` of
 * test-app.ts): OpenAPI 3.0 turned into JSON Schema (nullable, $ref, discriminators), requests matched to the
 * reference's operations, and mismatches named by operation, status and the reference's schema path. First on small
 * documents written here, then on the reference itself.
 */

const UUID = '0190f0b2-6c5e-7000-8000-000000000001';

const DOCUMENT: ReferenceDocument = {
  paths: {
    '/widget/{widgetId}': {
      get: {
        operationId: 'getWidget',
        responses: {
          '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } },
          '404': { $ref: '#/components/responses/404' },
        },
      },
    },
    '/widget/count': {
      get: { operationId: 'countWidgets', responses: { '200': { content: { 'application/json': { schema: { type: 'integer' } } } } } },
    },
    '/widget/{widgetId}/shape': {
      get: {
        operationId: 'getWidgetShape',
        responses: {
          '200': {
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Shape' } },
              'text/plain': { schema: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      Base: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
      Widget: {
        allOf: [
          { $ref: '#/components/schemas/Base' },
          {
            type: 'object',
            required: ['name', 'colour'],
            properties: {
              name: { type: 'string' },
              description: { type: 'string', nullable: true },
              colour: { $ref: '#/components/schemas/Colour' },
              tint: { nullable: true, allOf: [{ $ref: '#/components/schemas/Colour' }] },
              size: { type: 'integer', minimum: 1, exclusiveMinimum: true },
              owner: { type: 'string' },
            },
          },
        ],
      },
      Colour: { type: 'string', enum: ['RED', 'BLUE'] },
      Shape: {
        oneOf: [{ $ref: '#/components/schemas/Circle' }, { $ref: '#/components/schemas/Square' }],
        discriminator: { propertyName: 'kind', mapping: { CIRCLE: '#/components/schemas/Circle', SQUARE: '#/components/schemas/Square' } },
      },
      Circle: { type: 'object', required: ['kind', 'radius'], properties: { kind: { type: 'string' }, radius: { type: 'number' } } },
      Square: { type: 'object', required: ['kind', 'side'], properties: { kind: { type: 'string' }, side: { type: 'number' } } },
    },
    responses: { '404': { description: '' } },
  },
};

function answer(url: string, body: unknown, overrides: Partial<ReceivedAnswer> = {}): ReceivedAnswer {
  return { method: 'GET', url, status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body), ...overrides };
}

function mismatchOf(verdict: ContractVerdict) {
  if (verdict.kind !== 'mismatch') throw new Error(`expected a mismatch, got ${JSON.stringify(verdict)}`);
  return verdict.mismatch;
}

const widget = { id: UUID, name: 'gear', colour: 'RED' };

describe('reference contract checker', () => {
  const contract = createReferenceContract(DOCUMENT, []);

  it('accepts a conforming body, with fields the reference does not define', () => {
    expect(contract.check(answer(`/widget/${UUID}`, { ...widget, slipway_addition: true }))).toEqual({ kind: 'conforms', operationId: 'getWidget' });
  });

  it('follows $ref into components, through allOf, and names the operation, status and reference schema path', () => {
    const mismatch = mismatchOf(contract.check(answer(`/widget/${UUID}`, { id: UUID, colour: 'GREEN' })));
    expect(mismatch).toMatchObject({ operationId: 'getWidget', method: 'GET', path: '/widget/{widgetId}', status: 200 });
    expect(mismatch.violations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instancePath: '', schemaPath: '#/components/schemas/Widget/allOf/1/required' }),
        expect.objectContaining({ instancePath: '/colour', schemaPath: '#/components/schemas/Colour/enum', message: expect.stringContaining('"GREEN"') }),
      ]),
    );
    const message = describeMismatch(mismatch);
    expect(message).toContain('getWidget (GET /widget/{widgetId}) with status 200');
    expect(message).toContain('#/components/schemas/Colour/enum');
  });

  it('allows null only where the reference says nullable, next to a type, an enum or a $ref', () => {
    expect(contract.check(answer(`/widget/${UUID}`, { ...widget, description: null, tint: null })).kind).toBe('conforms');
    expect(contract.check(answer(`/widget/${UUID}`, { ...widget, tint: 'BLUE' })).kind).toBe('conforms');
    const ownerNull = mismatchOf(contract.check(answer(`/widget/${UUID}`, { ...widget, owner: null })));
    expect(ownerNull.violations).toEqual([expect.objectContaining({ instancePath: '/owner', schemaPath: '#/components/schemas/Widget/allOf/1/properties/owner/type' })]);
    expect(mismatchOf(contract.check(answer(`/widget/${UUID}`, { ...widget, colour: null }))).violations[0]?.instancePath).toBe('/colour');
    expect(mismatchOf(contract.check(answer(`/widget/${UUID}`, { ...widget, tint: 'GREEN' }))).violations[0]?.instancePath).toBe('/tint');
  });

  it('reads OpenAPI 3.0 exclusiveMinimum as a boolean beside minimum', () => {
    expect(contract.check(answer(`/widget/${UUID}`, { ...widget, size: 2 })).kind).toBe('conforms');
    expect(mismatchOf(contract.check(answer(`/widget/${UUID}`, { ...widget, size: 1 }))).violations[0]?.instancePath).toBe('/size');
  });

  it('picks a discriminated variant by its property and checks the body against that variant only', () => {
    expect(contract.check(answer(`/widget/${UUID}/shape`, { kind: 'CIRCLE', radius: 2 })).kind).toBe('conforms');
    const wrongVariant = mismatchOf(contract.check(answer(`/widget/${UUID}/shape`, { kind: 'CIRCLE', side: 2 })));
    expect(wrongVariant.violations).toEqual(expect.arrayContaining([expect.objectContaining({ schemaPath: '#/components/schemas/Circle/required' })]));
    const unknownKind = mismatchOf(contract.check(answer(`/widget/${UUID}/shape`, { kind: 'TRIANGLE', side: 2 })));
    expect(unknownKind.violations).toEqual([expect.objectContaining({ instancePath: '/kind', schemaPath: '#/components/schemas/Shape/discriminator/mapping/enum' })]);
  });

  it('matches literal path segments before parameters, decodes segments and ignores the query', () => {
    expect(contract.check(answer('/widget/count?x=1', 3))).toEqual({ kind: 'conforms', operationId: 'countWidgets' });
    expect(contract.check(answer(`/widget/${encodeURIComponent(UUID)}?expand=true`, widget))).toEqual({ kind: 'conforms', operationId: 'getWidget' });
  });

  it('skips what the reference does not define: other operations, methods, statuses, bodies and media types', () => {
    expect(contract.check(answer('/gadget', { anything: true })).kind).toBe('skipped');
    expect(contract.check(answer(`/widget/${UUID}`, widget, { method: 'DELETE', status: 204, body: '' })).kind).toBe('skipped');
    expect(contract.check(answer(`/widget/${UUID}`, { status: 409 }, { status: 409 })).kind).toBe('skipped');
    expect(contract.check(answer(`/widget/${UUID}`, { status: 404, error: 'Not Found' }, { status: 404 })).kind).toBe('skipped');
    expect(contract.check(answer(`/widget/${UUID}/shape`, 'circle', { contentType: 'text/plain; charset=utf-8', body: 'circle' })).kind).toBe('skipped');
  });

  it('refuses an answer that is not JSON where the reference defines a JSON body', () => {
    const empty = mismatchOf(contract.check(answer(`/widget/${UUID}`, widget, { contentType: undefined, body: '' })));
    expect(empty.violations[0]?.message).toContain('no body');
    const text = mismatchOf(contract.check(answer(`/widget/${UUID}`, widget, { contentType: 'text/html', body: '<p>' })));
    expect(text.violations[0]?.message).toContain('text/html');
    expect(contract.check(answer(`/widget/${UUID}`, widget, { contentType: 'text/html', body: '<p>', accept: 'application/json, */*' })).kind).toBe('mismatch');
  });

  it('leaves an answer in another media type to a request that asked for it (content negotiation)', () => {
    expect(contract.check(answer(`/widget/${UUID}`, widget, { contentType: 'application/x-ndjson', body: '{}\n', accept: 'application/x-ndjson' })).kind).toBe('skipped');
    expect(contract.check(answer(`/widget/${UUID}`, { id: UUID }, { accept: 'text/plain' })).kind).toBe('mismatch');
  });

  it('applies an exception by amending the reference at its pointer, and refuses a pointer to nothing', () => {
    const withGreen = createReferenceContract(DOCUMENT, [
      { pointer: '#/components/schemas/Colour', reason: 'test', amend: (schema) => ({ ...schema, enum: ['RED', 'BLUE', 'GREEN'] }) },
    ]);
    expect(withGreen.check(answer(`/widget/${UUID}`, { ...widget, colour: 'GREEN' })).kind).toBe('conforms');
    expect(contract.check(answer(`/widget/${UUID}`, { ...widget, colour: 'GREEN' })).kind).toBe('mismatch');
    const colourOptional = createReferenceContract(DOCUMENT, [
      { pointer: '#/components/schemas/Widget/allOf/1', reason: 'test', amend: (schema) => ({ ...schema, required: ['name'] }) },
    ]);
    expect(colourOptional.check(answer(`/widget/${UUID}`, { id: UUID, name: 'gear' })).kind).toBe('conforms');
    expect(() => createReferenceContract(DOCUMENT, [{ pointer: '#/components/schemas/Nothing', reason: 'test', amend: (schema) => schema }])).toThrow(/no schema there/);
    expect(() => createReferenceContract(DOCUMENT, [{ pointer: '#/components/schemas/Widget/allOf/7', reason: 'test', amend: (schema) => schema }])).toThrow(/no schema there/);
  });
});

describe('the reference document', () => {
  const contract = referenceContract();

  it('compiles, and checks a real operation: a cluster with a kind outside KubernetesEnum and a null description', () => {
    const cluster = {
      id: UUID,
      created_at: '2026-01-01T00:00:00.000Z',
      organization: { id: UUID },
      name: 'production',
      region: 'eu-west-3',
      cloud_provider: 'AWS',
      kubernetes: 'MANAGED',
    };
    const url = `/organization/${UUID}/cluster`;
    expect(contract.check(answer(url, { results: [cluster] }))).toEqual({ kind: 'conforms', operationId: 'listOrganizationCluster' });
    const mismatch = mismatchOf(contract.check(answer(url, { results: [{ ...cluster, kubernetes: 'K3S', description: null }] })));
    expect(mismatch.violations.map((violation) => [violation.instancePath, violation.schemaPath])).toEqual(
      expect.arrayContaining([
        ['/results/0/kubernetes', '#/components/schemas/KubernetesEnum/enum'],
        ['/results/0/description', '#/components/schemas/Cluster/allOf/1/properties/description/type'],
      ]),
    );
  });

  it('holds the exceptions: each names a schema of the reference and says why', () => {
    for (const exception of CONTRACT_EXCEPTIONS) {
      expect(exception.pointer).toMatch(/^#\/(components\/schemas|paths)\//);
      expect(exception.reason.length).toBeGreaterThan(10);
    }
    const cluster = { id: UUID, created_at: '2026-01-01T00:00:00.000Z', organization: { id: UUID }, name: 'here', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' };
    expect(contract.check(answer(`/organization/${UUID}/cluster`, { results: [cluster] })).kind).toBe('conforms');
  });

  it('skips Slipway-only operations', () => {
    expect(contract.check(answer('/operator/v1/tasks', { tasks: [] })).kind).toBe('skipped');
  });
});
