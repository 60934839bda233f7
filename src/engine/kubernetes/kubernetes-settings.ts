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
});
export type WorkloadSettings = Static<typeof WorkloadSettings>;

/** The workload settings of a spec, checked; throws naming the field that does not match. */
export function workloadSettingsOf(settings: unknown): WorkloadSettings {
  const problem = schemaProblem(WorkloadSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the service's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as WorkloadSettings;
}
