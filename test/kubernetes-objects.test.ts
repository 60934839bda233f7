import { randomUUID } from 'node:crypto';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { renderAgenticWorkflow } from '../src/engine/kubernetes/kubernetes-agentic-workflow.ts';
import { renderImageBuild } from '../src/engine/kubernetes/kubernetes-build.ts';
import { databasePortOf, renderDatabase } from '../src/engine/kubernetes/kubernetes-database.ts';
import { clusterResolver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { renderCronJob, renderLifecycleJob, type JobRender } from '../src/engine/kubernetes/kubernetes-job.ts';
import { prepareChart } from '../src/engine/kubernetes/kubernetes-helm-chart.ts';
import { renderHelmIngress } from '../src/engine/kubernetes/kubernetes-helm.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { databaseSettingsOf, jobSettingsOf, workloadSettingsOf } from '../src/engine/kubernetes/kubernetes-settings.ts';
import { renderTerraform, terraformJobNameOf } from '../src/engine/kubernetes/kubernetes-terraform.ts';
import type { ServiceDeploymentSpec, SpecGitSource } from '../src/protocol/agent-protocol.ts';
import { namespaceObject, renderConfig, renderWorkload, type KubeObject } from '../src/engine/kubernetes/kubernetes-workload.ts';
import { defaultAdvancedSettings } from '../src/modules/services/services.advanced-settings.ts';

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
  'v1/ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
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

function render(overrides: Partial<typeof settings> & { advanced_settings?: Record<string, unknown> } = {}, clusterIssuer?: string) {
  return renderWorkload({
    clusterIssuer,
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

  it('carries the advanced settings into the pods, the rollout, the autoscaler and the Ingress, and certifies the hostnames through cert-manager', () => {
    const advanced = {
      ...defaultAdvancedSettings('CONTAINER'),
      'deployment.termination_grace_period_seconds': 15,
      'deployment.update_strategy.rolling_update.max_surge_percent': 50,
      'deployment.antiaffinity.pod': 'Requirred',
      'deployment.topology_spread.zone': 'ScheduleAnyway',
      'deployment.affinity.node.required': { 'node.kubernetes.io/pool': 'web' },
      'security.service_account_name': 'shop',
      'security.read_only_root_filesystem': true,
      'hpa.cpu.average_utilization_percent': 75,
      'hpa.memory.average_utilization_percent': 80,
      'network.ingress.proxy_body_size_mb': 25,
      'network.ingress.force_ssl_redirect': false,
      'network.ingress.enable_cors': true,
    };
    const objects = render({ advanced_settings: advanced }, 'letsencrypt');
    for (const object of objects) validate(object);
    type Pod = { spec: { template: { spec: Record<string, unknown> & { containers: Array<Record<string, unknown>> } }; strategy: unknown } };
    const deployment = objects.find((object) => object.kind === 'Deployment') as unknown as Pod;
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '50%' } });
    expect(deployment.spec.template.spec).toMatchObject({
      terminationGracePeriodSeconds: 15,
      serviceAccountName: 'shop',
      automountServiceAccountToken: false,
      nodeSelector: { 'node.kubernetes.io/pool': 'web' },
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }] } },
      topologySpreadConstraints: [{ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }],
    });
    expect(deployment.spec.template.spec.containers[0]?.securityContext).toEqual({ readOnlyRootFilesystem: true });
    const autoscaler = objects.find((object) => object.kind === 'HorizontalPodAutoscaler') as unknown as { spec: { metrics: Array<{ resource: { name: string; target: { averageUtilization: number } } }> } };
    expect(autoscaler.spec.metrics.map((metric) => [metric.resource.name, metric.resource.target.averageUtilization])).toEqual([['cpu', 75], ['memory', 80]]);
    const ingress = objects.find((object) => object.kind === 'Ingress') as unknown as { metadata: { annotations: Record<string, string> }; spec: { tls: unknown } };
    expect(ingress.spec.tls).toEqual([{ hosts: ['shop.example.com'], secretName: `${workloadNameOf(service)}-tls` }]);
    expect(ingress.metadata.annotations).toMatchObject({
      'cert-manager.io/cluster-issuer': 'letsencrypt',
      'nginx.ingress.kubernetes.io/proxy-body-size': '25m',
      'nginx.ingress.kubernetes.io/force-ssl-redirect': 'false',
      'nginx.ingress.kubernetes.io/enable-cors': 'true',
      'nginx.ingress.kubernetes.io/cors-allow-origin': '*',
    });
    // Without an issuer: no TLS section, no certificate asked for, no redirect to HTTPS that could not be served.
    const plain = render({ advanced_settings: advanced }).find((object) => object.kind === 'Ingress') as unknown as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    expect(plain.spec.tls).toBeUndefined();
    expect(plain.metadata.annotations['cert-manager.io/cluster-issuer']).toBeUndefined();
    expect(plain.metadata.annotations['nginx.ingress.kubernetes.io/force-ssl-redirect']).toBeUndefined();
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

describe('Kubernetes objects of an image build', () => {
  const build = (builder: 'kaniko' | 'buildkit', dockerfileRaw: string | null) =>
    renderImageBuild({
      service,
      deploymentId: randomUUID(),
      source: {
        git: { url: 'https://git.example.com/acme/shop.git', branch: 'main', commit_id: 'f'.repeat(40), root_path: '/web', credentials: { provider: 'GITLAB', token: 'glpat-secret' } },
        commitId: 'f'.repeat(40),
        rootPath: 'web',
        dockerfilePath: 'docker/Dockerfile',
        dockerfileRaw,
        targetStage: 'runtime',
      },
      options: { builder, registry: 'registry.example.com/slipway', registryAuth: JSON.stringify({ auths: { 'registry.example.com': { auth: 'cm9ib3Q6cHVzaA==' } } }) },
    });

  it('renders a labelled build Job (Kaniko or rootless BuildKit) and its Secret, the token only in the Secret', () => {
    for (const [builder, raw] of [['kaniko', null], ['buildkit', 'FROM alpine:3.20\n']] as const) {
      const { job, secret } = build(builder, raw);
      if (secret === undefined) throw new Error('a build with a login has a Secret');
      for (const object of [job, secret]) validate(object);
      expect(job.metadata.name).toBe(`${workloadNameOf(service)}-build-fffffff`);
      expect(job.metadata.name.length).toBeLessThanOrEqual(63);
      const template = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template;
      expect(template.metadata.labels['slipway.dev/service-id']).toBe(service.id);
      expect(JSON.stringify(job)).not.toContain('glpat-secret');
      expect(Buffer.from((secret as KubeObject & { data: Record<string, string> }).data.password ?? '', 'base64').toString('utf8')).toBe('glpat-secret');
    }
  });
});

describe('Kubernetes objects of a Terraform service and an agentic workflow', () => {
  const labelled = (object: KubeObject) => expect(object.metadata.labels?.['slipway.dev/service-id'], `${object.kind}/${object.metadata.name}`).toBe(service.id);
  const spec = (kind: string, settings: Record<string, unknown>, git: SpecGitSource | null): ServiceDeploymentSpec => ({
    service: { id: service.id, kind, name: service.name, organizationId: service.organizationId, environmentId: service.environmentId, clusterId: randomUUID(), settings },
    git_commit_id: 'e'.repeat(40),
    image_tag: null,
    variables: [],
    environment: { id: service.environmentId, name: 'prod', mode: 'PRODUCTION', project_id: service.projectId },
    image: null,
    git,
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
  });
  const git: SpecGitSource = { url: 'https://git.example.com/acme/infra.git', branch: 'main', commit_id: 'e'.repeat(40), root_path: '/', credentials: { provider: 'GITHUB', token: 'ghp-secret' } };

  it('renders the Terraform run, its ServiceAccount, Role and RoleBinding, its Secrets and destroy record, labelled', () => {
    const settings = {
      tf_var_file_paths: ['prod.tfvars'],
      tf_vars: [],
      backend: 'kubernetes',
      engine: 'OPEN_TOFU',
      engine_version: '1.9.0',
      timeout_sec: 1800,
      job_resources: { cpu_milli: 500, ram_mib: 512, storage_gib: 2 },
      use_cluster_credentials: false,
      action_extra_arguments: { plan: [], apply: [], destroy: [] },
    };
    const deploymentId = randomUUID();
    const variables = [{ key: 'TF_VAR_token', value: 'tf-secret', mountPath: null }];
    const { objects, job } = renderTerraform({ service, deploymentId, spec: spec('TERRAFORM', settings, git), variables }, 'apply');
    for (const object of [...objects, job]) {
      validate(object);
      labelled(object);
    }
    const name = workloadNameOf(service);
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual(
      [`Role/${name}-terraform`, `RoleBinding/${name}-terraform`, `Secret/${name}-env`, `Secret/${name}-terraform-destroy`, `Secret/${name}-terraform-git`, `ServiceAccount/${name}-terraform`].sort(),
    );
    expect(job.metadata.name).toBe(terraformJobNameOf(service, 'apply', deploymentId));
    expect(terraformJobNameOf({ id: service.id, name: 'n'.repeat(60) }, 'destroy', deploymentId).length).toBeLessThanOrEqual(63);
    expect((job.spec as { template: { spec: { containers: Array<{ image: string }> } } }).template.spec.containers[0]?.image).toBe('ghcr.io/opentofu/opentofu:1.9.0');
    expect(JSON.stringify(job)).not.toContain('ghp-secret');
    expect(JSON.stringify(job)).not.toContain('tf-secret');
  });

  it('renders a workflow as a Job, or a CronJob on its schedule, with its config Secret, labelled', () => {
    const settings = (schedule: { scheduled_at: string; timezone: string } | null) => ({
      model: { provider: 'OPENAI', model: 'gpt-4.1', base_url: null, api_key_variable: 'OPENAI_API_KEY' },
      instructions: 'Summarise the week.',
      tools: [],
      git_repository: { url: git.url },
      schedule,
      max_steps: 10,
      max_duration_seconds: 600,
      cpu: 250,
      memory: 256,
    });
    for (const schedule of [null, { scheduled_at: '0 9 * * 1', timezone: 'Europe/Paris' }]) {
      const { objects, workload } = renderAgenticWorkflow({
        service,
        deploymentId: randomUUID(),
        spec: spec('AGENTIC_WORKFLOW', settings(schedule), git),
        variables: [{ key: 'OPENAI_API_KEY', value: 'sk-secret', mountPath: null }],
        runnerImage: 'registry.example.com/runner:1',
        cronJobVersion: 'batch/v1',
      });
      for (const object of [...objects, workload]) {
        validate(object);
        labelled(object);
      }
      expect(workload.kind).toBe(schedule === null ? 'Job' : 'CronJob');
      expect(JSON.stringify(workload)).not.toContain('sk-secret');
      expect(JSON.stringify(workload)).not.toContain('ghp-secret');
    }
  });
});

describe('a HELM chart made Slipway\'s', () => {
  it('keeps rendered objects valid while labelling them, their pod, job and claim templates, and renders a valid Ingress', () => {
    const podTemplate = { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } };
    const rendered: KubeObject[] = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shop-web', labels: { app: 'shop' } }, spec: { selector: { matchLabels: { app: 'shop' } }, template: podTemplate } },
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'shop-db' },
        spec: {
          serviceName: 'shop-db',
          selector: { matchLabels: { app: 'shop' } },
          template: podTemplate,
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
        },
      },
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'shop-report' }, spec: { schedule: '0 6 * * *', jobTemplate: { spec: { template: { ...podTemplate, spec: { ...podTemplate.spec, restartPolicy: 'Never' } } } } } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'shop-web' }, spec: { selector: { app: 'shop' }, ports: [{ port: 80, protocol: 'TCP' }] } },
    ];
    const chart = prepareChart(rendered, { service, namespace: namespaceOf(service.environmentId), allowClusterWide: false, upgrade: false, namespaced: () => true });
    const ingress = renderHelmIngress({
      service,
      ports: [{ internal_port: 80, service_name: 'shop-web', namespace: null, protocol: 'HTTP', is_default: true }],
      hostnames: ['shop.example.com'],
      options: { className: 'nginx', clusterIssuer: 'letsencrypt' },
      settings: { advanced_settings: defaultAdvancedSettings('HELM') },
    });
    expect(ingress).toBeDefined();
    expect((ingress?.spec as { tls?: unknown }).tls).toEqual([{ hosts: ['shop.example.com'], secretName: `${workloadNameOf(service)}-tls` }]);
    const serviceLabel = { 'slipway.dev/service-id': service.id, 'app.kubernetes.io/managed-by': 'slipway' };
    for (const object of [...chart.objects, ingress as KubeObject]) {
      validate(object);
      expect(object.metadata.namespace).toBe(namespaceOf(service.environmentId));
      expect(object.metadata.labels).toMatchObject(serviceLabel);
    }
    type Labelled = { metadata?: { labels?: Record<string, string> } };
    type Templates = { selector?: unknown; template?: Labelled; volumeClaimTemplates?: Labelled[]; jobTemplate?: Labelled & { spec?: { template?: Labelled } } };
    const [deployment, statefulSet, cronJob] = chart.objects.map((object) => object.spec as Templates);
    expect(deployment?.template?.metadata?.labels).toMatchObject({ ...serviceLabel, app: 'shop' });
    expect(deployment?.selector).toEqual({ matchLabels: { app: 'shop' } });
    expect(statefulSet?.volumeClaimTemplates?.[0]?.metadata?.labels).toMatchObject(serviceLabel);
    expect(cronJob?.jobTemplate?.metadata?.labels).toMatchObject(serviceLabel);
    expect(cronJob?.jobTemplate?.spec?.template?.metadata?.labels).toMatchObject(serviceLabel);
  });
});
