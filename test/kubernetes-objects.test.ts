import { randomUUID } from 'node:crypto';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { Namespace, Secret, Service } from 'kubernetes-models/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { databasePortOf, renderDatabase } from '../src/engine/kubernetes/kubernetes-database.ts';
import { clusterResolver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { renderCronJob, renderLifecycleJob, type JobRender } from '../src/engine/kubernetes/kubernetes-job.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { databaseSettingsOf, jobSettingsOf, workloadSettingsOf } from '../src/engine/kubernetes/kubernetes-settings.ts';
import { namespaceObject, renderConfig, renderWorkload, type KubeObject } from '../src/engine/kubernetes/kubernetes-workload.ts';

/**
 * Every object the Kubernetes driver renders, checked against the schemas of current Kubernetes (kubernetes-models,
 * its JSON schemas run by ajv) — the kinds the 1.20 test apiserver does not serve (autoscaling/v2, policy/v1)
 * included. This is a schema check, not a server: kubernetes-driver.test.ts applies them to a real one.
 */

const MODELS: Record<string, new (object: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'networking.k8s.io/v1/Ingress': Ingress,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'batch/v1/CronJob': CronJob,
  'batch/v1/Job': Job,
};

function validate(object: KubeObject): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (Model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

const service = { id: randomUUID(), name: 'Web Shop_2', organizationId: randomUUID(), projectId: randomUUID(), environmentId: randomUUID() };
const probe = { type: { kind: 'tcp', port: 8080, host: null }, initial_delay_seconds: 1, period_seconds: 10, timeout_seconds: 2, success_threshold: 1, failure_threshold: 3 };
const settings = {
  cpu: 500,
  memory: 512,
  min_running_instances: 2,
  max_running_instances: 5,
  ports: [
    { name: 'http', internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' },
    { name: 'metrics', internal_port: 9090, publicly_accessible: false, protocol: 'TCP' },
  ],
  healthchecks: { readiness_probe: probe, liveness_probe: { ...probe, type: { kind: 'exec', command: ['/bin/check'] } } },
  storage: [] as Array<{ id: string; size: number; mount_point: string }>,
  entrypoint: '/app/server',
  arguments: ['--port', '8080'],
};

function render(overrides: Partial<typeof settings> = {}) {
  return renderWorkload({
    service,
    deploymentId: randomUUID(),
    settings: workloadSettingsOf({ ...settings, ...overrides }),
    image: 'registry.example.com/acme/shop:2.1',
    pullCredentials: { server: 'registry.example.com', username: 'robot', password: 'secret' },
    variables: [
      { key: 'GREETING', value: 'hello', mountPath: null },
      { key: 'CONFIG', value: 'a: 1', mountPath: '/etc/shop/config.yaml' },
    ],
    hostnames: ['shop.example.com'],
    versions: { autoscaling: 'autoscaling/v2', podDisruptionBudget: 'policy/v1' },
    ingressClass: 'nginx',
    restartedAt: undefined,
  });
}

describe('Kubernetes objects of a workload', () => {
  it('renders objects that current Kubernetes schemas accept, every one labelled', () => {
    const objects = [namespaceObject(service), ...render()];
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      `Namespace/${namespaceOf(service.environmentId)}`,
      `Secret/${workloadNameOf(service)}-env`,
      `Secret/${workloadNameOf(service)}-files`,
      `Secret/${workloadNameOf(service)}-pull`,
      `Deployment/${workloadNameOf(service)}`,
      `Service/${workloadNameOf(service)}`,
      `Ingress/${workloadNameOf(service)}`,
      `HorizontalPodAutoscaler/${workloadNameOf(service)}`,
      `PodDisruptionBudget/${workloadNameOf(service)}`,
    ]);
    for (const object of objects) {
      validate(object);
      expect(object.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('slipway');
    }
    const deployment = objects.find((object) => object.kind === 'Deployment') as KubeObject & { spec: Record<string, unknown> };
    // Autoscaled: replicas are the HorizontalPodAutoscaler's.
    expect(deployment.spec.replicas).toBeUndefined();
  });

  it('renders a StatefulSet with labelled claim templates for a workload with storage, and fixed replicas without autoscaling', () => {
    const objects = render({ storage: [{ id: randomUUID(), size: 10, mount_point: '/data' }], min_running_instances: 1, max_running_instances: 1 });
    for (const object of objects) validate(object);
    const statefulSet = objects.find((object) => object.kind === 'StatefulSet') as KubeObject & { spec: { replicas: number; volumeClaimTemplates: Array<{ metadata: { labels: Record<string, string> } }> } };
    expect(statefulSet.spec.replicas).toBe(1);
    expect(statefulSet.spec.volumeClaimTemplates[0]?.metadata.labels['slipway.dev/service-id']).toBe(service.id);
    expect(objects.map((object) => object.kind)).not.toContain('HorizontalPodAutoscaler');
    expect(objects.map((object) => object.kind)).not.toContain('PodDisruptionBudget');
  });

  it('names objects with DNS labels that stay apart when two names make the same label', () => {
    const a = workloadNameOf({ id: randomUUID(), name: 'My App' });
    const b = workloadNameOf({ id: randomUUID(), name: 'my_app' });
    expect(a).toMatch(/^my-app-[0-9a-f]{8}$/);
    expect(b).toMatch(/^my-app-[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(workloadNameOf({ id: '0123abcd-0000-0000-0000-000000000000', name: '42 ünïcode!' })).toBe('unicode-0123abcd');
  });

  it('refuses settings it cannot run, naming the field', () => {
    expect(() => workloadSettingsOf({ ...settings, ports: [{ internal_port: 'eighty' }] })).toThrow(/\/ports\/0/);
  });

  it("resolves a peer's internal hostname to its Service's DNS name, only where it stands whole", () => {
    const environmentId = randomUUID();
    const apiId = randomUUID();
    const resolve = clusterResolver(environmentId, [{ service_id: apiId, hostname: `api.${environmentId}.slipway.internal` }]);
    const target = `${workloadNameOf({ id: apiId, name: 'api' })}.${namespaceOf(environmentId)}.svc.cluster.local`;
    expect(resolve(`http://API.${environmentId}.slipway.internal:8080/x`)).toBe(`http://${target}:8080/x`);
    expect(resolve(`my-api.${environmentId}.slipway.internal`)).toBe(`my-api.${environmentId}.slipway.internal`);
    expect(resolve(`api.${environmentId}.slipway.internal.evil.example`)).toBe(`api.${environmentId}.slipway.internal.evil.example`);
  });
});

describe('Kubernetes objects of a database', () => {
  const engines = [
    ['POSTGRESQL', '17', 'postgres:17', 'POSTGRES_PASSWORD'],
    ['MYSQL', '8.4', 'mysql:8.4', 'MYSQL_ROOT_PASSWORD'],
    ['MONGODB', '8.0', 'mongo:8.0', 'MONGO_INITDB_ROOT_PASSWORD'],
    ['REDIS', '7', 'redis:7', 'REDIS_PASSWORD'],
  ] as const;
  for (const [type, version, image, passwordKey] of engines) {
    it(`renders ${type} as a StatefulSet of its official image, its credentials, a Service on its port and labelled claims`, () => {
      const objects = renderDatabase({
        service,
        deploymentId: randomUUID(),
        settings: databaseSettingsOf({ type, version, mode: 'CONTAINER', accessibility: 'PRIVATE', cpu: 250, memory: 256, storage: 20, instance_type: null }),
        database: { type, version, username: type === 'REDIS' ? 'default' : 'u01', password: 'pw', database_name: 'main', shared: false },
        restartedAt: undefined,
      });
      const name = workloadNameOf(service);
      expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([`Secret/${name}-credentials`, `StatefulSet/${name}`, `Service/${name}`, `Service/${name}-headless`]);
      for (const object of objects) {
        validate(object);
        expect(object.metadata.labels?.['slipway.dev/service-id']).toBe(service.id);
      }
      const statefulSet = objects[1] as KubeObject & { spec: { replicas: number; template: { spec: { containers: Array<{ image: string; args?: string[]; readinessProbe: { tcpSocket: { port: number } } }> } }; volumeClaimTemplates: Array<{ metadata: { labels: Record<string, string> }; spec: { resources: { requests: { storage: string } } } }> } };
      expect(statefulSet.spec.replicas).toBe(1);
      expect(statefulSet.spec.template.spec.containers[0]?.image).toBe(image);
      expect(statefulSet.spec.template.spec.containers[0]?.readinessProbe.tcpSocket.port).toBe(databasePortOf(type));
      expect(statefulSet.spec.volumeClaimTemplates[0]?.metadata.labels['slipway.dev/service-id']).toBe(service.id);
      expect(statefulSet.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage).toBe('20Gi');
      expect(Object.keys((objects[0] as KubeObject & { data: Record<string, string> }).data)).toContain(passwordKey);
      if (type === 'REDIS') expect(statefulSet.spec.template.spec.containers[0]?.args).toEqual(['--requirepass', '$(REDIS_PASSWORD)', '--appendonly', 'yes']);
      expect((objects[2] as KubeObject & { spec: { ports: Array<{ port: number }> } }).spec.ports[0]?.port).toBe(databasePortOf(type));
    });
  }
});

describe('Kubernetes objects of a job', () => {
  function jobRender(schedule: Record<string, unknown>): JobRender {
    const deploymentId = randomUUID();
    return {
      service,
      deploymentId,
      settings: jobSettingsOf({ cpu: 250, memory: 256, max_nb_restart: 2, max_duration_seconds: 600, source: { kind: 'image', image_name: 'acme/tasks', tag: '3', registry_id: randomUUID() }, schedule }),
      image: 'registry.example.com/acme/tasks:3',
      config: renderConfig({ service, deploymentId, pullCredentials: { server: 'registry.example.com', username: 'robot', password: 'secret' }, variables: [{ key: 'A', value: '1', mountPath: null }, { key: 'F', value: 'x', mountPath: '/etc/f' }] }),
    };
  }

  it('renders a batch/v1 CronJob with its time zone, Forbid concurrency and labelled job template', () => {
    const render = jobRender({ kind: 'CRON', cronjob: { arguments: ['run'], entrypoint: '/bin/task', timezone: 'Europe/Paris', scheduled_at: '*/5 * * * *' } });
    const { cronJob, timeZoneIgnored } = renderCronJob(render, 'batch/v1', true);
    expect(timeZoneIgnored).toBe(false);
    for (const object of [...render.config.objects, cronJob]) validate(object);
    expect(cronJob.spec).toMatchObject({ schedule: '*/5 * * * *', timeZone: 'Europe/Paris', concurrencyPolicy: 'Forbid', suspend: true });
    const template = (cronJob.spec as { jobTemplate: { metadata: { labels: Record<string, string> }; spec: { backoffLimit: number; activeDeadlineSeconds: number; template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ command: string[]; args: string[] }> } } } } }).jobTemplate;
    expect(template.metadata.labels['slipway.dev/service-id']).toBe(service.id);
    expect(template.spec.template.metadata.labels['slipway.dev/service-id']).toBe(service.id);
    expect(template.spec).toMatchObject({ backoffLimit: 2, activeDeadlineSeconds: 600 });
    expect(template.spec.template.spec.containers[0]).toMatchObject({ command: ['/bin/task'], args: ['run'] });
    // batch/v1beta1 (1.20) has no timeZone: left out, and said.
    const old = renderCronJob(render, 'batch/v1beta1', false);
    expect(old.timeZoneIgnored).toBe(true);
    expect(old.cronJob.spec).not.toHaveProperty('timeZone');
  });

  it('renders the Job of a lifecycle event, never restarted in place, with its deadline and retries', () => {
    const render = jobRender({ kind: 'LIFECYCLE', on_start: { arguments: ['migrate'], entrypoint: null }, on_stop: null, on_delete: null });
    const job = renderLifecycleJob(render, 'on_start', { arguments: ['migrate'], entrypoint: null });
    validate(job);
    expect(job.metadata.name).toBe(`${workloadNameOf(service)}-on-start`);
    expect(job.spec).toMatchObject({ backoffLimit: 2, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 86_400, template: { spec: { restartPolicy: 'Never', imagePullSecrets: [{ name: `${workloadNameOf(service)}-pull` }] } } });
  });

  it('refuses job settings it cannot run, naming the field', () => {
    expect(() => jobSettingsOf({ cpu: 1, memory: 1, max_nb_restart: 0, max_duration_seconds: 1, source: { kind: 'image' }, schedule: { kind: 'CRON' } })).toThrow(/\/source|\/schedule/);
  });
});
