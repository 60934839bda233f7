import type { TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { createSchemaCompilers } from '../src/http/validation.ts';
import { AppError } from '../src/lib/errors.ts';
import { isUuid, newId } from '../src/lib/ids.ts';
import { kindDefinition, SERVICE_KIND_DEFINITIONS, type LinkedRecords, type ServiceKindContext, type StoredService } from '../src/modules/services/services.kinds.ts';
import type { ServiceKind } from '../src/modules/variables/variables.builtins.ts';

/**
 * The kinds' validation, below the HTTP layer: a body first passes the kind's schema through the same validator
 * compiler the server uses (so defaults and strictness are the server's), then fromCreate/fromEdit, and the stored
 * settings answer through toResponse, which must satisfy the kind's response schema. The context is an in-memory
 * implementation of the ServiceKindContext port holding the ids "the organization" has.
 */

const compile = createSchemaCompilers().validatorCompiler;

function validator(schema: TSchema, httpPart: 'body' | 'querystring') {
  return compile({ schema, httpPart, method: 'POST', url: '/' }) as unknown as ((data: unknown) => boolean) & { errors?: unknown[] | null };
}

/** Runs the body through the route's schema (applying defaults), or returns the schema's errors. */
function schemaChecked(schema: TSchema, body: unknown): { ok: true; body: unknown } | { ok: false; errors: unknown[] } {
  const copy = structuredClone(body);
  const validate = validator(schema, 'body');
  return validate(copy) ? { ok: true, body: copy } : { ok: false, errors: validate.errors ?? [] };
}

const known = {
  gitTokens: new Set([newId()]),
  registries: new Set([newId()]),
  helmRepositories: new Set([newId()]),
  labels: new Set([newId()]),
  annotations: new Set([newId()]),
};
const first = (ids: Set<string>): string => [...ids][0] as string;

const context: ServiceKindContext = {
  organizationId: newId(),
  environmentId: newId(),
  gitTokenExists: async (id) => known.gitTokens.has(id),
  containerRegistryExists: async (id) => known.registries.has(id),
  helmRepositoryExists: async (id) => known.helmRepositories.has(id),
  missingLabelsGroups: async (ids) => ids.filter((id) => !known.labels.has(id)),
  missingAnnotationsGroups: async (ids) => ids.filter((id) => !known.annotations.has(id)),
};

/** The known groups and registries as the services module reads them to answer (services.crud.ts). */
const CREATED_AT = '2026-01-01T00:00:00.000Z';
const linked: LinkedRecords = {
  labelsGroups: new Map(
    [...known.labels].map((id) => [id, { id, created_at: CREATED_AT, updated_at: CREATED_AT, name: 'team', labels: [{ key: 'team', value: 'web', propagate_to_cloud_provider: false }] }]),
  ),
  annotationsGroups: new Map(
    [...known.annotations].map((id) => [id, { id, created_at: CREATED_AT, updated_at: CREATED_AT, name: 'notes', annotations: [{ key: 'note', value: 'x' }], scopes: ['DEPLOYMENTS'] }]),
  ),
  containerRegistries: new Map([...known.registries].map((id) => [id, { id, name: 'hub', url: 'https://registry-1.docker.io', kind: 'DOCKER_HUB' }])),
  helmRepositories: new Map([...known.helmRepositories].map((id) => [id, { id, name: 'charts', url: 'https://charts.example.com' }])),
};

interface Outcome {
  status: 'ok' | 'schema' | 'bad_request' | 'not_found';
  stored?: StoredService;
  problems?: string[];
  message?: string;
}

async function attempt(run: () => Promise<{ name: string; description: string | null; settings: Record<string, unknown> }>, kind: ServiceKind, existing?: StoredService): Promise<Outcome> {
  try {
    const write = await run();
    const now = new Date().toISOString();
    const stored: StoredService = {
      id: existing?.id ?? newId(),
      organizationId: context.organizationId,
      projectId: existing?.projectId ?? newId(),
      environmentId: context.environmentId,
      kind,
      name: write.name,
      description: write.description,
      // The services module stores settings as JSON text: what a kind reads back has made that round trip.
      settings: JSON.parse(JSON.stringify(write.settings)) as Record<string, unknown>,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    return { status: 'ok', stored };
  } catch (error) {
    if (!(error instanceof AppError) || (error.kind !== 'bad_request' && error.kind !== 'not_found')) throw error;
    return { status: error.kind, problems: (error.details ?? []).map((detail) => detail.field), message: error.message };
  }
}

async function create(kind: ServiceKind, body: unknown): Promise<Outcome> {
  const definition = kindDefinition(kind);
  const checked = schemaChecked(definition.createBody, body);
  if (!checked.ok) return { status: 'schema' };
  return attempt(() => definition.fromCreate(checked.body, context), kind);
}

async function edit(current: StoredService, body: unknown): Promise<Outcome> {
  const definition = kindDefinition(current.kind);
  const checked = schemaChecked(definition.editBody, body);
  if (!checked.ok) return { status: 'schema' };
  return attempt(() => definition.fromEdit(current, checked.body, context), current.kind, current);
}

function created(outcome: Outcome): StoredService {
  if (outcome.status !== 'ok' || outcome.stored === undefined) throw new Error(`expected success, got ${outcome.status}: ${outcome.message ?? ''} ${outcome.problems?.join(', ') ?? ''}`);
  return outcome.stored;
}

/** The answer as the route would send it, checked against the kind's response schema. */
function answer(service: StoredService): Record<string, unknown> {
  const definition = kindDefinition(service.kind);
  const response = definition.toResponse(service, linked);
  const validate = validator(definition.response, 'body');
  expect(validate(structuredClone(response)), JSON.stringify(validate.errors)).toBe(true);
  const list = validator(definition.listResponse, 'body');
  expect(list({ results: [structuredClone(response)] }), JSON.stringify(list.errors)).toBe(true);
  return response;
}

const git = { url: 'https://github.com/acme/shop-api.git', provider: 'GITHUB' };

describe('service kind registry', () => {
  it('defines each kind once, with distinct paths and operation ids', () => {
    const kinds = SERVICE_KIND_DEFINITIONS.map((definition) => definition.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    const operations = SERVICE_KIND_DEFINITIONS.flatMap((definition) => Object.values(definition.operations));
    expect(new Set(operations).size).toBe(operations.length);
    expect(new Set(SERVICE_KIND_DEFINITIONS.map((definition) => definition.idParam)).size).toBe(kinds.length);
    expect(kindDefinition('APPLICATION').operations).toEqual({
      list: 'listApplication',
      create: 'createApplication',
      get: 'getApplication',
      edit: 'editApplication',
      delete: 'deleteApplication',
    });
  });
});

describe('APPLICATION', () => {
  it('stores a minimal application with the reference defaults and answers the reference shape', async () => {
    const service = created(await create('APPLICATION', { name: 'shop-api', git_repository: git, healthchecks: {} }));
    const response = answer(service);
    expect(response).toMatchObject({
      name: 'shop-api',
      description: '',
      environment: { id: context.environmentId },
      service_type: 'APPLICATION',
      build_mode: 'DOCKER',
      dockerfile_path: 'Dockerfile',
      cpu: 500,
      memory: 512,
      gpu: 0,
      min_running_instances: 1,
      max_running_instances: 1,
      auto_preview: true,
      auto_deploy: true,
      ports: [],
      storage: [],
      arguments: [],
      healthchecks: { readiness_probe: null, liveness_probe: null },
      git_repository: { provider: 'GITHUB', url: 'https://github.com/acme/shop-api.git', owner: 'acme', name: 'shop-api', branch: 'main', root_path: '/', git_token_id: null },
    });
    expect(kindDefinition('APPLICATION').references(service.settings)).toEqual({
      gitTokenId: null,
      containerRegistryId: null,
      helmRepositoryId: null,
      labelsGroupIds: [],
      annotationsGroupIds: [],
      branch: 'main',
      publiclyReachable: false,
      internalPorts: [],
    });
  });

  it('keeps references, ports, probes and storage as given and reports them', async () => {
    const service = created(
      await create('APPLICATION', {
        name: 'Front',
        description: 'the web front',
        git_repository: { ...git, branch: 'release/2.0', root_path: '/apps//front/', git_token_id: first(known.gitTokens) },
        ports: [
          { internal_port: 8080, publicly_accessible: true, name: 'web' },
          { internal_port: 9000, publicly_accessible: false, protocol: 'GRPC' },
          { internal_port: 5432, publicly_accessible: true, protocol: 'TCP', external_port: 15432 },
        ],
        healthchecks: {
          readiness_probe: { type: { http: { path: '/ready' } }, period_seconds: 5, timeout_seconds: 2 },
          liveness_probe: { type: { tcp: { port: 9000 } } },
        },
        storage: [{ type: 'FAST_SSD', size: 10, mount_point: '/data/' }],
        labels_groups: [{ id: first(known.labels) }, { id: first(known.labels) }],
        annotations_groups: [{ id: first(known.annotations) }],
        min_running_instances: 2,
        max_running_instances: 4,
      }),
    );
    const response = answer(service) as { ports: { id: string; is_default: boolean; external_port?: number; name: string }[]; git_repository: unknown; healthchecks: unknown; storage: unknown };
    expect(response.ports.map((port) => [port.name, port.is_default, port.external_port])).toEqual([
      ['web', true, 443],
      ['p9000', false, undefined],
      ['p5432', false, 15432],
    ]);
    expect(response.ports.every((port) => isUuid(port.id))).toBe(true);
    expect(response.git_repository).toMatchObject({ branch: 'release/2.0', root_path: '/apps/front', git_token_id: first(known.gitTokens) });
    expect(response.healthchecks).toMatchObject({
      readiness_probe: { type: { http: { path: '/ready', port: 8080, scheme: 'HTTP' }, tcp: null }, period_seconds: 5, timeout_seconds: 2, failure_threshold: 9 },
      liveness_probe: { type: { tcp: { port: 9000, host: null }, http: null } },
    });
    expect(response.storage).toMatchObject([{ type: 'FAST_SSD', size: 10, mount_point: '/data' }]);
    expect(kindDefinition('APPLICATION').references(service.settings)).toMatchObject({
      gitTokenId: first(known.gitTokens),
      labelsGroupIds: [first(known.labels)],
      annotationsGroupIds: [first(known.annotations)],
      branch: 'release/2.0',
      publiclyReachable: true,
      // Public or not, every port is one the other services of the environment reach it on.
      internalPorts: [8080, 9000, 5432],
    });
  });

  it('refuses what the schema cannot express with a 400 naming the field', async () => {
    const base = { name: 'api', git_repository: git, healthchecks: {} };
    const cases: [string, unknown, string[]][] = [
      ['duplicate internal port', { ...base, ports: [{ internal_port: 80, publicly_accessible: false }, { internal_port: 80, publicly_accessible: false }] }, ['/ports/1/internal_port']],
      ['two default ports', { ...base, ports: [{ internal_port: 80, publicly_accessible: false, is_default: true }, { internal_port: 81, publicly_accessible: false, is_default: true }] }, ['/ports']],
      ['public TCP without external port', { ...base, ports: [{ internal_port: 5000, publicly_accessible: true, protocol: 'TCP' }] }, ['/ports/0/external_port']],
      ['public HTTP on another port than 443', { ...base, ports: [{ internal_port: 80, publicly_accessible: true, external_port: 8443 }] }, ['/ports/0/external_port']],
      ['path on a TCP port', { ...base, ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'TCP', public_path: '/x' }] }, ['/ports/0/public_path']],
      ['probe on an unknown port', { ...base, ports: [{ internal_port: 80, publicly_accessible: false }], healthchecks: { liveness_probe: { type: { tcp: { port: 81 } } } } }, ['/healthchecks/liveness_probe/type/tcp/port']],
      ['network probe without any port', { ...base, healthchecks: { readiness_probe: { type: { http: {} } } } }, ['/healthchecks/readiness_probe/type/http/port']],
      ['probe with two types', { ...base, healthchecks: { readiness_probe: { type: { exec: { command: ['true'] }, grpc: { port: 1 } } } } }, ['/healthchecks/readiness_probe/type']],
      ['probe timing out after its period', { ...base, healthchecks: { readiness_probe: { type: { exec: { command: ['true'] } }, period_seconds: 5, timeout_seconds: 5 } } }, ['/healthchecks/readiness_probe/timeout_seconds']],
      ['max below min instances', { ...base, min_running_instances: 3, max_running_instances: 2 }, ['/max_running_instances']],
      ['nested mount points', { ...base, storage: [{ type: 'FAST_SSD', size: 1, mount_point: '/data' }, { type: 'FAST_SSD', size: 1, mount_point: '/data/cache' }] }, ['/storage/1/mount_point']],
      ['mount point outside', { ...base, storage: [{ type: 'FAST_SSD', size: 1, mount_point: '/../etc' }] }, ['/storage/0/mount_point']],
      ['ssh url', { ...base, git_repository: { ...git, url: 'ssh://git@github.com/acme/api.git' } }, ['/git_repository/url']],
      ['credentials in the url', { ...base, git_repository: { ...git, url: 'https://user:secret@github.com/acme/api.git' } }, ['/git_repository/url']],
      ['url without repository', { ...base, git_repository: { ...git, url: 'https://github.com/' } }, ['/git_repository/url']],
      ['invalid branch', { ...base, git_repository: { ...git, branch: 'feature..x' } }, ['/git_repository/branch']],
      ['root path escaping', { ...base, git_repository: { ...git, root_path: '/a/../../b' } }, ['/git_repository/root_path']],
      ['dockerfile outside', { ...base, dockerfile_path: '../Dockerfile' }, ['/dockerfile_path']],
    ];
    for (const [label, body, fields] of cases) {
      const outcome = await create('APPLICATION', body);
      expect(outcome.status, label).toBe('bad_request');
      expect(outcome.problems, label).toEqual(fields);
    }
  });

  it('refuses through the schema: bad names, ports out of range, unknown fields, oversize lists', async () => {
    const base = { name: 'api', git_repository: git, healthchecks: {} };
    const cases: [string, unknown][] = [
      ['name with a space', { ...base, name: 'my api' }],
      ['name with an underscore', { ...base, name: 'my_api' }],
      ['name starting with a dash', { ...base, name: '-api' }],
      ['name of 64 characters', { ...base, name: 'a'.repeat(64) }],
      ['port 0', { ...base, ports: [{ internal_port: 0, publicly_accessible: false }] }],
      ['port 65536', { ...base, ports: [{ internal_port: 65_536, publicly_accessible: false }] }],
      ['external port 70000', { ...base, ports: [{ internal_port: 80, external_port: 70_000, publicly_accessible: true, protocol: 'TCP' }] }],
      ['unknown protocol', { ...base, ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'SCTP' }] }],
      ['unknown field', { ...base, autoscaling: { mode: 'KEDA' } }],
      ['no healthchecks', { name: 'api', git_repository: git }],
      ['no git repository', { name: 'api', healthchecks: {} }],
      ['unknown provider', { ...base, git_repository: { ...git, provider: 'GITEA' } }],
      ['cpu too small', { ...base, cpu: 1 }],
      ['too many ports', { ...base, ports: Array.from({ length: 21 }, (_, index) => ({ internal_port: 1000 + index, publicly_accessible: false })) }],
      ['storage too large', { ...base, storage: [{ type: 'FAST_SSD', size: 100_000, mount_point: '/data' }] }],
      ['string as number', { ...base, cpu: '500' }],
    ];
    for (const [label, body] of cases) expect((await create('APPLICATION', body)).status, label).toBe('schema');
  });

  it('answers 404 naming references the organization does not have', async () => {
    const base = { name: 'api', git_repository: git, healthchecks: {} };
    const unknownToken = await create('APPLICATION', { ...base, git_repository: { ...git, git_token_id: newId() } });
    expect(unknownToken.status).toBe('not_found');
    expect(unknownToken.message).toContain('git_token_id');
    const unknownLabels = newId();
    const labels = await create('APPLICATION', { ...base, labels_groups: [{ id: first(known.labels) }, { id: unknownLabels }] });
    expect(labels.status).toBe('not_found');
    expect(labels.message).toContain(unknownLabels);
    expect((await create('APPLICATION', { ...base, annotations_groups: [{ id: newId() }] })).status).toBe('not_found');
  });

  it('edits keep what is left out, port and volume ids survive, volumes do not shrink', async () => {
    const original = created(
      await create('APPLICATION', {
        name: 'api',
        git_repository: { ...git, branch: 'develop' },
        ports: [{ internal_port: 8080, publicly_accessible: true }],
        storage: [{ type: 'FAST_SSD', size: 20, mount_point: '/data' }],
        healthchecks: {},
        cpu: 1000,
      }),
    );
    const before = answer(original) as { ports: { id: string }[]; storage: { id: string }[] };
    const portId = before.ports[0]?.id;
    const volumeId = before.storage[0]?.id;

    const renamed = created(
      await edit(original, {
        name: 'api-v2',
        healthchecks: {},
        ports: [{ id: portId, internal_port: 8081, publicly_accessible: false }, { id: portId, internal_port: 9090, publicly_accessible: false }],
      }),
    );
    const after = answer(renamed) as { name: string; cpu: number; git_repository: { branch: string }; ports: { id: string; internal_port: number }[]; storage: { id: string }[] };
    expect(after.name).toBe('api-v2');
    expect(after.cpu).toBe(1000);
    expect(after.git_repository.branch).toBe('develop');
    expect(after.ports[0]).toMatchObject({ id: portId, internal_port: 8081 });
    expect(after.ports[1]?.id).not.toBe(portId);
    expect(after.storage[0]?.id).toBe(volumeId);
    expect(kindDefinition('APPLICATION').references(renamed.settings).publiclyReachable).toBe(false);

    const shrunk = await edit(original, { healthchecks: {}, storage: [{ id: volumeId, type: 'FAST_SSD', size: 10, mount_point: '/data' }] });
    expect(shrunk.status).toBe('bad_request');
    expect(shrunk.problems).toEqual(['/storage/0/size']);

    // A port removal re-checks the probes: a probe on a port that no longer exists is refused.
    const withProbe = created(await edit(original, { healthchecks: { liveness_probe: { type: { tcp: {} } } } }));
    expect(answer(withProbe)).toMatchObject({ healthchecks: { liveness_probe: { type: { tcp: { port: 8080 } } } } });
    const orphanProbe = await edit(withProbe, { ports: [], healthchecks: { liveness_probe: { type: { tcp: { port: 8080 } } } } });
    expect(orphanProbe.status).toBe('bad_request');
  });
});

describe('CONTAINER', () => {
  const image = () => ({ name: 'web', registry_id: first(known.registries), image_name: 'library/nginx', tag: '1.27-alpine', healthchecks: {} });

  it('stores an image of a registry of the organization, with the workload fields of an application', async () => {
    const service = created(await create('CONTAINER', { ...image(), ports: [{ internal_port: 80, publicly_accessible: true }] }));
    expect(answer(service)).toMatchObject({
      service_type: 'CONTAINER',
      registry_id: first(known.registries),
      registry: { id: first(known.registries), name: 'hub', url: 'https://registry-1.docker.io', kind: 'DOCKER_HUB' },
      image_name: 'library/nginx',
      tag: '1.27-alpine',
      cpu: 500,
      ports: [{ internal_port: 80, external_port: 443, is_default: true }],
    });
    expect(kindDefinition('CONTAINER').references(service.settings)).toMatchObject({ containerRegistryId: first(known.registries), publiclyReachable: true, gitTokenId: null, branch: null });
  });

  it('refuses unknown registries (404), bad image names and tags (schema), and re-checks on edit', async () => {
    expect((await create('CONTAINER', { ...image(), registry_id: newId() })).status).toBe('not_found');
    for (const image_name of ['Nginx', 'nginx:latest', '/nginx', 'a//b', 'nginx ']) expect((await create('CONTAINER', { ...image(), image_name })).status, image_name).toBe('schema');
    for (const tag of ['', '.hidden', 'a b', 'x'.repeat(129), 'sha256:abc']) expect((await create('CONTAINER', { ...image(), tag })).status, tag).toBe('schema');
    const service = created(await create('CONTAINER', { ...image(), cpu: 2000 }));
    expect((await edit(service, { ...image(), registry_id: newId() })).status).toBe('not_found');
    const retagged = created(await edit(service, { ...image(), tag: '1.28' }));
    expect(answer(retagged)).toMatchObject({ tag: '1.28', cpu: 2000 });
    expect((await edit(service, { healthchecks: {} })).status).toBe('schema');
  });
});

describe('DATABASE', () => {
  it('stores type, version, mode and accessibility with the reference defaults', async () => {
    const service = created(await create('DATABASE', { name: 'orders-db', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' }));
    expect(answer(service)).toMatchObject({ service_type: 'DATABASE', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE', cpu: 250, storage: 10, port: 5432 });
    const definition = kindDefinition('DATABASE');
    expect(definition.references(service.settings).publiclyReachable).toBe(false);
    expect(definition.database?.(service.settings, service.name)).toEqual({ type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE', port: 5432, dbName: 'orders_db' });
    const redis = created(await create('DATABASE', { name: 'cache', type: 'REDIS', version: '7', mode: 'CONTAINER', accessibility: 'PUBLIC' }));
    expect(definition.references(redis.settings).publiclyReachable).toBe(true);
    expect(definition.database?.(redis.settings, redis.name)).toMatchObject({ port: 6379, dbName: '0' });
    expect(kindDefinition('APPLICATION').database).toBeUndefined();
  });

  it('refuses unknown types, versions and modes, and mode/sizing mismatches', async () => {
    const base = { name: 'db', type: 'MYSQL', version: '8.0', mode: 'CONTAINER' };
    for (const body of [{ ...base, type: 'ORACLE' }, { ...base, mode: 'SERVERLESS' }, { ...base, accessibility: 'INTERNAL' }, { ...base, version: 'latest' }, { ...base, storage: 0 }, { ...base, storage: 20_000 }, { ...base, cpu: 5 }]) {
      expect((await create('DATABASE', body)).status, JSON.stringify(body)).toBe('schema');
    }
    const unknownVersion = await create('DATABASE', { ...base, version: '5.7' });
    expect(unknownVersion).toMatchObject({ status: 'bad_request', problems: ['/version'] });
    expect(await create('DATABASE', { ...base, mode: 'MANAGED' })).toMatchObject({ status: 'bad_request', problems: ['/instance_type'] });
    expect(await create('DATABASE', { ...base, instance_type: 'db.t3.micro' })).toMatchObject({ status: 'bad_request', problems: ['/instance_type'] });
    expect((await create('DATABASE', { ...base, mode: 'MANAGED', instance_type: 'db.t3.micro' })).status).toBe('ok');
  });

  it('edits upgrade the version, grow the storage, and keep type and mode', async () => {
    const service = created(await create('DATABASE', { name: 'db', type: 'POSTGRESQL', version: '15', mode: 'CONTAINER', storage: 20 }));
    const upgraded = created(await edit(service, { version: '17', storage: 30 }));
    expect(answer(upgraded)).toMatchObject({ version: '17', storage: 30, type: 'POSTGRESQL', mode: 'CONTAINER', cpu: 250 });
    expect(await edit(upgraded, { version: '16' })).toMatchObject({ status: 'bad_request', problems: ['/version'] });
    expect(await edit(upgraded, { storage: 10 })).toMatchObject({ status: 'bad_request', problems: ['/storage'] });
    expect((await edit(upgraded, { type: 'MYSQL' })).status).toBe('schema');
    expect((await edit(upgraded, { mode: 'MANAGED' })).status).toBe('schema');
  });
});

describe('JOB', () => {
  const imageSource = () => ({ image: { image_name: 'acme/report', tag: 'v1', registry_id: first(known.registries) } });
  const cron = (scheduled_at: string, timezone?: string) => ({ cronjob: { scheduled_at, ...(timezone !== undefined ? { timezone } : {}), arguments: ['--full'] } });

  it('stores a cron job and answers job_type CRON', async () => {
    const service = created(await create('JOB', { name: 'nightly', source: imageSource(), schedule: cron('  0 3 * * 1-5 ', 'Europe/Paris'), healthchecks: {} }));
    expect(answer(service)).toMatchObject({
      service_type: 'JOB',
      job_type: 'CRON',
      schedule: { cronjob: { scheduled_at: '0 3 * * 1-5', timezone: 'Europe/Paris', arguments: ['--full'] } },
      source: { image: { image_name: 'acme/report', tag: 'v1', registry_id: first(known.registries) } },
      max_duration_seconds: 300,
      port: null,
    });
    expect(kindDefinition('JOB').references(service.settings)).toMatchObject({ containerRegistryId: first(known.registries), gitTokenId: null, publiclyReachable: false });
    const daily = created(await create('JOB', { name: 'daily', source: imageSource(), schedule: cron('@daily'), healthchecks: {} }));
    expect(answer(daily)).toMatchObject({ schedule: { cronjob: { scheduled_at: '@daily', timezone: 'Etc/UTC' } } });
  });

  it('stores a lifecycle job built from git and answers job_type LIFECYCLE', async () => {
    const service = created(
      await create('JOB', {
        name: 'migrate',
        source: { docker: { git_repository: { ...git, branch: 'main', git_token_id: first(known.gitTokens) }, dockerfile_path: 'jobs/Dockerfile' } },
        schedule: { on_start: { arguments: ['migrate'] }, lifecycle_type: 'GENERIC' },
        port: 8080,
        healthchecks: { readiness_probe: { type: { http: { path: '/health' } } } },
      }),
    );
    expect(answer(service)).toMatchObject({
      job_type: 'LIFECYCLE',
      schedule: { on_start: { arguments: ['migrate'] }, lifecycle_type: 'GENERIC' },
      source: { docker: { dockerfile_path: 'jobs/Dockerfile', dockerfile_raw: null, git_repository: { url: git.url, branch: 'main' } } },
      healthchecks: { readiness_probe: { type: { http: { port: 8080, path: '/health' } } } },
    });
    expect(kindDefinition('JOB').references(service.settings)).toMatchObject({ gitTokenId: first(known.gitTokens), branch: 'main', containerRegistryId: null });
  });

  it('refuses cron expressions that do not parse or never fire, bad time zones, and mixed or missing schedules and sources', async () => {
    const base = { name: 'job', source: imageSource(), healthchecks: {} };
    const badRequests: [string, unknown, string[]][] = [
      ['six fields', { ...base, schedule: cron('0 0 3 * * *') }, ['/schedule/cronjob/scheduled_at']],
      ['four fields', { ...base, schedule: cron('0 3 * *') }, ['/schedule/cronjob/scheduled_at']],
      ['minute 61', { ...base, schedule: cron('61 * * * *') }, ['/schedule/cronjob/scheduled_at']],
      ['words', { ...base, schedule: cron('every day at noon') }, ['/schedule/cronjob/scheduled_at']],
      ['31 February', { ...base, schedule: cron('0 0 31 2 *') }, ['/schedule/cronjob/scheduled_at']],
      ['unknown time zone', { ...base, schedule: cron('0 3 * * *', 'Mars/Olympus') }, ['/schedule/cronjob/timezone']],
      ['cron and lifecycle', { ...base, schedule: { ...cron('0 3 * * *'), on_start: {} } }, ['/schedule']],
      ['no schedule at all', { ...base, schedule: {} }, ['/schedule']],
      ['two sources', { ...base, source: { ...imageSource(), docker: { git_repository: git } }, schedule: cron('@hourly') }, ['/source']],
      ['no source', { ...base, source: {}, schedule: cron('@hourly') }, ['/source']],
      ['inline and path Dockerfile', { ...base, source: { docker: { git_repository: git, dockerfile_path: 'Dockerfile', dockerfile_raw: 'FROM scratch' } }, schedule: cron('@hourly') }, ['/source/docker/dockerfile_raw']],
      ['probe without port', { ...base, schedule: cron('@hourly'), healthchecks: { liveness_probe: { type: { tcp: {} } } } }, ['/healthchecks/liveness_probe/type/tcp/port']],
    ];
    for (const [label, body, fields] of badRequests) expect(await create('JOB', body), label).toMatchObject({ status: 'bad_request', problems: fields });
    expect((await create('JOB', { ...base, schedule: cron('@hourly'), source: { image: { ...imageSource().image, registry_id: newId() } } })).status).toBe('not_found');
    expect((await create('JOB', { ...base, schedule: cron('@hourly'), port: 0 })).status).toBe('schema');
    expect((await create('JOB', { name: 'job', healthchecks: {}, schedule: cron('@hourly') })).status).toBe('schema');
  });

  it('edits keep what is left out and may turn a cron job into a lifecycle job', async () => {
    const service = created(await create('JOB', { name: 'job', source: imageSource(), schedule: cron('@hourly'), healthchecks: {}, max_nb_restart: 3 }));
    const changed = created(await edit(service, { name: 'job', source: imageSource(), schedule: { on_delete: { entrypoint: '/bin/cleanup' } }, healthchecks: {} }));
    expect(answer(changed)).toMatchObject({ job_type: 'LIFECYCLE', max_nb_restart: 3, schedule: { on_delete: { entrypoint: '/bin/cleanup', arguments: [] }, lifecycle_type: 'GENERIC' } });
  });
});

describe('HELM', () => {
  const chart = () => ({ helm_repository: { repository: first(known.helmRepositories), chart_name: 'redis', chart_version: 'v19.6.1' } });

  it('stores a chart of a repository of the organization with its overrides and public ports', async () => {
    const service = created(
      await create('HELM', {
        name: 'cache',
        source: chart(),
        arguments: ['--atomic', '--wait-for-jobs'],
        values_override: { set: [['replica.replicaCount', '2']], set_json: [['resources', '{"limits":{"cpu":"1"}}']], file: { raw: { values: [{ name: 'override.yaml', content: 'auth:\n  enabled: false\n' }] } } },
        ports: [{ service_name: 'cache-master', internal_port: 6379, external_port: 16379, protocol: 'TCP' }],
      }),
    );
    expect(answer(service)).toMatchObject({
      service_type: 'HELM',
      timeout_sec: 600,
      source: { repository: { repository: { id: first(known.helmRepositories), name: 'charts', url: 'https://charts.example.com' }, chart_name: 'redis', chart_version: '19.6.1' } },
      values_override: { set: [['replica.replicaCount', '2']], set_string: [], file: { raw: { values: [{ name: 'override.yaml' }] } } },
      ports: [{ port_type: 'SERVICE_NAME', service_name: 'cache-master', internal_port: 6379, external_port: 16379, is_default: true }],
    });
    expect((answer(service).ports as unknown[])[0]).not.toHaveProperty('namespace');
    expect(kindDefinition('HELM').references(service.settings)).toMatchObject({ helmRepositoryId: first(known.helmRepositories), publiclyReachable: true, gitTokenId: null });
    const fromGit = created(await create('HELM', { name: 'charts', source: { git_repository: { ...git, root_path: '/charts/app' } } }));
    expect(kindDefinition('HELM').references(fromGit.settings)).toMatchObject({ branch: 'main', helmRepositoryId: null, publiclyReachable: false });
  });

  it('refuses bad sources, reserved flags, broken overrides and ports', async () => {
    const base = { name: 'chart', source: chart() };
    const cases: [string, unknown, string[]][] = [
      ['two sources', { ...base, source: { ...chart(), git_repository: git } }, ['/source']],
      ['no source', { ...base, source: {} }, ['/source']],
      ['namespace flag', { ...base, arguments: ['--namespace=kube-system', '--atomic', '--kubeconfig=/etc/k'] }, ['/arguments/0', '/arguments/2']],
      ['set_json not JSON', { ...base, values_override: { set_json: [['a', '{nope']] } }, ['/values_override/set_json/0/1']],
      ['values file not YAML', { ...base, values_override: { file: { raw: { values: [{ name: 'a.yaml', content: 'a: [1' }] } } } }, ['/values_override/file/raw/values/0/content']],
      ['values file a list', { ...base, values_override: { file: { raw: { values: [{ name: 'a.yaml', content: '- 1\n- 2' }] } } } }, ['/values_override/file/raw/values/0/content']],
      ['TCP port without external port', { ...base, ports: [{ service_name: 'db', internal_port: 5432, protocol: 'TCP' }] }, ['/ports/0/external_port']],
      ['same service port twice', { ...base, ports: [{ service_name: 'web', internal_port: 80 }, { service_name: 'web', internal_port: 80, name: 'other' }] }, ['/ports/1']],
    ];
    for (const [label, body, fields] of cases) expect(await create('HELM', body), label).toMatchObject({ status: 'bad_request', problems: fields });
    expect((await create('HELM', { ...base, source: { helm_repository: { ...chart().helm_repository, repository: newId() } } })).status).toBe('not_found');
    for (const chart_version of ['latest', '1.2', '01.2.3']) {
      expect((await create('HELM', { ...base, source: { helm_repository: { ...chart().helm_repository, chart_version } } })).status, chart_version).toBe('schema');
    }
    expect((await create('HELM', { ...base, values_override: { set: [['a b', 'x']] } })).status).toBe('schema');
  });
});

describe('TERRAFORM', () => {
  const files = () => ({ git_repository: { ...git, root_path: '/infra/prod' } });

  it('stores a module from git with its variables, backend and engine', async () => {
    const service = created(
      await create('TERRAFORM', {
        name: 'infra',
        terraform_files_source: files(),
        terraform_variables_source: { tf_var_file_paths: ['./prod.tfvars', 'common/shared.tfvars.json'], tf_vars: [{ key: 'region', value: 'eu-west-3' }] },
        engine: 'OPEN_TOFU',
        provider_version: { read_from_terraform_block: false, explicit_version: '1.8.2' },
        action_extra_arguments: { plan: ['-parallelism=4'] },
      }),
    );
    expect(answer(service)).toMatchObject({
      service_type: 'TERRAFORM',
      terraform_files_source: { git_repository: { root_path: '/infra/prod', branch: 'main' } },
      terraform_variables_source: { tf_var_file_paths: ['prod.tfvars', 'common/shared.tfvars.json'], tf_vars: [{ key: 'region', value: 'eu-west-3' }] },
      backend: { kubernetes: {} },
      engine: 'OPEN_TOFU',
      provider_version: { read_from_terraform_block: false, explicit_version: '1.8.2' },
      job_resources: { cpu_milli: 500, ram_mib: 512, storage_gib: 1 },
      action_extra_arguments: { plan: ['-parallelism=4'], apply: [], destroy: [] },
    });
    expect(kindDefinition('TERRAFORM').references(service.settings)).toMatchObject({ branch: 'main', publiclyReachable: false });
  });

  it('refuses escaping var files, duplicate variables, secret flags, two backends, missing versions and reserved flags', async () => {
    const base = { name: 'infra', terraform_files_source: files() };
    const cases: [string, unknown, string[]][] = [
      ['var file outside', { ...base, terraform_variables_source: { tf_var_file_paths: ['../x.tfvars'] } }, ['/terraform_variables_source/tf_var_file_paths/0']],
      ['duplicate variable', { ...base, terraform_variables_source: { tf_vars: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }] } }, ['/terraform_variables_source/tf_vars/1/key']],
      ['two backends', { ...base, backend: { kubernetes: {}, user_provided: {} } }, ['/backend']],
      ['no explicit version', { ...base, provider_version: { read_from_terraform_block: false } }, ['/provider_version/explicit_version']],
      ['reserved flag', { ...base, action_extra_arguments: { apply: ['-auto-approve'], destroy: ['--state=/tmp/x'] } }, ['/action_extra_arguments/apply/0', '/action_extra_arguments/destroy/0']],
      ['root path escaping', { ...base, terraform_files_source: { git_repository: { ...git, root_path: '../..' } } }, ['/terraform_files_source/git_repository/root_path']],
    ];
    for (const [label, body, fields] of cases) expect(await create('TERRAFORM', body), label).toMatchObject({ status: 'bad_request', problems: fields });
    expect((await create('TERRAFORM', { ...base, terraform_variables_source: { tf_vars: [{ key: 'token', value: 'x', secret: true }] } })).status).toBe('schema');
    expect((await create('TERRAFORM', { ...base, terraform_variables_source: { tf_var_file_paths: ['vars.txt'] } })).status).toBe('schema');
    expect((await create('TERRAFORM', { ...base, engine: 'PULUMI' })).status).toBe('schema');
    expect((await create('TERRAFORM', { name: 'infra' })).status).toBe('schema');
  });
});

describe('AGENTIC_WORKFLOW', () => {
  const model = () => ({ provider: 'ANTHROPIC', model: 'claude-sonnet-4-5', api_key_variable: 'ANTHROPIC_API_KEY' });

  it('stores the model reference, tools, workspace and schedule, never a key', async () => {
    const service = created(
      await create('AGENTIC_WORKFLOW', {
        name: 'triage',
        model: model(),
        instructions: 'Label new issues.',
        tools: [
          { name: 'list_issues', type: 'HTTP', url: 'https://api.example.com/issues', method: 'GET' },
          { name: 'tracker', type: 'MCP', url: 'https://mcp.example.com/sse' },
        ],
        git_repository: git,
        schedule: { scheduled_at: '*/15 * * * *' },
      }),
    );
    expect(answer(service)).toMatchObject({
      service_type: 'AGENTIC_WORKFLOW',
      model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4-5', base_url: null, api_key_variable: 'ANTHROPIC_API_KEY' },
      tools: [{ name: 'list_issues', method: 'GET' }, { name: 'tracker', method: null }],
      schedule: { scheduled_at: '*/15 * * * *', timezone: 'Etc/UTC' },
      max_steps: 50,
      git_repository: { branch: 'main' },
    });
    expect(kindDefinition('AGENTIC_WORKFLOW').references(service.settings)).toMatchObject({ branch: 'main', publiclyReachable: false });
    const local = created(await create('AGENTIC_WORKFLOW', { name: 'local', model: { provider: 'OLLAMA', model: 'llama3.1:8b', base_url: 'http://ollama.internal:11434' }, instructions: 'x' }));
    expect(answer(local)).toMatchObject({ schedule: null, git_repository: null, model: { api_key_variable: null } });
  });

  it('refuses incomplete model references, duplicate tools, credentials in URLs and bad schedules', async () => {
    const base = { name: 'flow', model: model(), instructions: 'Do it.' };
    const cases: [string, unknown, string[]][] = [
      ['no key variable', { ...base, model: { provider: 'OPENAI', model: 'gpt-4o' } }, ['/model/api_key_variable']],
      ['no base url', { ...base, model: { provider: 'OPENAI_COMPATIBLE', model: 'm', api_key_variable: 'KEY' } }, ['/model/base_url']],
      ['reserved key variable', { ...base, model: { ...model(), api_key_variable: 'PLATFORM_SECRET' } }, ['/model/api_key_variable']],
      ['duplicate tool', { ...base, tools: [{ name: 'a', type: 'MCP', url: 'https://x.example' }, { name: 'a', type: 'MCP', url: 'https://y.example' }] }, ['/tools/1/name']],
      ['credentials in tool url', { ...base, tools: [{ name: 'a', type: 'HTTP', url: 'https://user:pw@x.example' }] }, ['/tools/0/url']],
      ['method on MCP', { ...base, tools: [{ name: 'a', type: 'MCP', url: 'https://x.example', method: 'GET' }] }, ['/tools/0/method']],
      ['bad cron', { ...base, schedule: { scheduled_at: '* * *' } }, ['/schedule/scheduled_at']],
      ['bad timezone', { ...base, schedule: { scheduled_at: '@daily', timezone: 'Nowhere/City' } }, ['/schedule/timezone']],
    ];
    for (const [label, body, fields] of cases) expect(await create('AGENTIC_WORKFLOW', body), label).toMatchObject({ status: 'bad_request', problems: fields });
    expect((await create('AGENTIC_WORKFLOW', { ...base, model: { ...model(), api_key: 'sk-123' } })).status).toBe('schema');
    expect((await create('AGENTIC_WORKFLOW', { ...base, tools: [{ name: 'Bad-Name', type: 'MCP', url: 'https://x.example' }] })).status).toBe('schema');
    expect((await create('AGENTIC_WORKFLOW', { ...base, instructions: '' })).status).toBe('schema');
  });
});
