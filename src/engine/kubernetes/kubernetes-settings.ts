import { Type, type Static } from 'typebox';
import { Nullable } from '../../protocol/wire.ts';
import { ProtocolViolation } from '../../protocol/agent-protocol.ts';
import { schemaProblem } from '../../protocol/wire.ts';

/**
 * What the Kubernetes driver reads of a long-running workload's settings (APPLICATION and CONTAINER, as the services
 * module stores them: services.kind-workload.ts), checked when a task arrives: a spec that does not match fails the
 * task naming the field, instead of rendering objects from a guess.
 */

const Port = Type.Object({
  name: Type.Optional(Type.String()),
  internal_port: Type.Integer({ minimum: 1, maximum: 65_535 }),
  publicly_accessible: Type.Boolean(),
  protocol: Type.String(),
});

const ProbeType = Type.Union([
  Type.Object({ kind: Type.Literal('tcp'), port: Type.Integer(), host: Type.Optional(Nullable(Type.String())) }),
  Type.Object({ kind: Type.Literal('http'), port: Type.Integer(), path: Type.String(), scheme: Type.Union([Type.Literal('HTTP'), Type.Literal('HTTPS')]) }),
  Type.Object({ kind: Type.Literal('exec'), command: Type.Array(Type.String(), { minItems: 1 }) }),
  Type.Object({ kind: Type.Literal('grpc'), port: Type.Integer(), service: Type.Optional(Nullable(Type.String())) }),
]);

const Probe = Type.Object({
  type: ProbeType,
  initial_delay_seconds: Type.Integer({ minimum: 0 }),
  period_seconds: Type.Integer({ minimum: 1 }),
  timeout_seconds: Type.Integer({ minimum: 1 }),
  success_threshold: Type.Integer({ minimum: 1 }),
  failure_threshold: Type.Integer({ minimum: 1 }),
});
export type Probe = Static<typeof Probe>;

const Volume = Type.Object({ id: Type.String(), size: Type.Integer({ minimum: 1 }), mount_point: Type.String({ minLength: 1 }) });

export const WorkloadSettings = Type.Object({
  /** Millicores. */
  cpu: Type.Integer({ minimum: 1 }),
  /** MiB. */
  memory: Type.Integer({ minimum: 1 }),
  min_running_instances: Type.Integer({ minimum: 0 }),
  max_running_instances: Type.Integer({ minimum: 0 }),
  ports: Type.Array(Port),
  healthchecks: Type.Object({ readiness_probe: Nullable(Probe), liveness_probe: Nullable(Probe) }),
  storage: Type.Array(Volume),
  entrypoint: Type.Optional(Nullable(Type.String())),
  arguments: Type.Optional(Type.Array(Type.String())),
  /** CONTAINER: the image in the organization's registry. */
  image_name: Type.Optional(Type.String()),
  tag: Type.Optional(Type.String()),
  /** Every advanced setting of the kind, defaults included (src/engine/advanced-settings.ts reads them). */
  advanced_settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type WorkloadSettings = Static<typeof WorkloadSettings>;

/** The workload settings of a spec, checked; throws naming the field that does not match. */
export function workloadSettingsOf(settings: unknown): WorkloadSettings {
  const problem = schemaProblem(WorkloadSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the service's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as WorkloadSettings;
}

/**
 * What the driver reads of a DATABASE's settings (services.kind-database.ts): its engine, version and mode are also
 * in the spec's `database` section with the credentials; the size of the server and of its volume are here only.
 */
export const DatabaseSettings = Type.Object({
  type: Type.Union([Type.Literal('POSTGRESQL'), Type.Literal('MYSQL'), Type.Literal('MONGODB'), Type.Literal('REDIS')]),
  version: Type.String({ minLength: 1 }),
  mode: Type.Union([Type.Literal('CONTAINER'), Type.Literal('MANAGED')]),
  /** Millicores. */
  cpu: Type.Integer({ minimum: 1 }),
  /** MiB. */
  memory: Type.Integer({ minimum: 1 }),
  /** GiB. */
  storage: Type.Integer({ minimum: 1 }),
});
export type DatabaseSettings = Static<typeof DatabaseSettings>;

export function databaseSettingsOf(settings: unknown): DatabaseSettings {
  const problem = schemaProblem(DatabaseSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the database's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as DatabaseSettings;
}

/** What an APPLICATION's image build reads of its settings (services.kind-application.ts): where its Dockerfile is. */
export const ApplicationBuildSettings = Type.Object({
  dockerfile_path: Type.Optional(Nullable(Type.String())),
  docker_target_build_stage: Type.Optional(Nullable(Type.String())),
});
export type ApplicationBuildSettings = Static<typeof ApplicationBuildSettings>;

export function applicationBuildSettingsOf(settings: unknown): ApplicationBuildSettings {
  const problem = schemaProblem(ApplicationBuildSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the application's build settings are not what the Kubernetes driver builds: ${problem}`);
  return settings as ApplicationBuildSettings;
}

/** A job's command as the services module stores it: the image's entrypoint replaced when set, its arguments. */
const JobCommand = Type.Object({ arguments: Type.Array(Type.String()), entrypoint: Nullable(Type.String()) });

/**
 * What the driver reads of a JOB's settings (services.kind-job.ts, JobSettings): its source (an image of a registry,
 * or a Dockerfile in git, built in the cluster: kubernetes-build.ts), and its schedule, a cron job or the
 * commands of lifecycle events.
 */
export const JobSettings = Type.Object({
  cpu: Type.Integer({ minimum: 1 }),
  memory: Type.Integer({ minimum: 1 }),
  max_nb_restart: Type.Integer({ minimum: 0 }),
  max_duration_seconds: Type.Integer({ minimum: 1 }),
  source: Type.Union([
    Type.Object({ kind: Type.Literal('image'), image_name: Type.String(), tag: Type.String(), registry_id: Type.String() }),
    Type.Object({
      kind: Type.Literal('docker'),
      dockerfile_path: Type.Optional(Nullable(Type.String())),
      dockerfile_raw: Type.Optional(Nullable(Type.String())),
      docker_target_build_stage: Type.Optional(Nullable(Type.String())),
    }),
  ]),
  schedule: Type.Union([
    Type.Object({
      kind: Type.Literal('CRON'),
      cronjob: Type.Object({ arguments: Type.Array(Type.String()), entrypoint: Nullable(Type.String()), timezone: Type.String(), scheduled_at: Type.String({ minLength: 1 }) }),
    }),
    Type.Object({
      kind: Type.Literal('LIFECYCLE'),
      on_start: Nullable(JobCommand),
      on_stop: Nullable(JobCommand),
      on_delete: Nullable(JobCommand),
    }),
  ]),
});
export type JobSettings = Static<typeof JobSettings>;
export type JobCommand = Static<typeof JobCommand>;

export function jobSettingsOf(settings: unknown): JobSettings {
  const problem = schemaProblem(JobSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the job's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as JobSettings;
}
