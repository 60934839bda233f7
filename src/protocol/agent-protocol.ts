import { Type, type Static, type TSchema } from 'typebox';
import { Nullable, schemaProblem, Timestamp, Uuid } from './wire.ts';

/**
 * The agent protocol, version 1 (docs/agent-protocol.md): every shape that crosses between the control plane and a
 * cluster's agent, once. The control plane's routes declare them (so /openapi.json describes them), the service that
 * produces a task's spec is typed by them, and the agent's client and every driver parse what arrives with them —
 * a malformed answer fails the task with the field that is wrong, never a TypeError deep inside a deployment.
 *
 * This layer imports nothing of Slipway's but the wire primitives: the control plane (modules/agents, services) and
 * the agent (agent/, engine/) both import it, neither imports the other.
 */

export const AGENT_PROTOCOL_VERSION = 1;

/** Whose state machine a task's reports move: an environment's, a service's, or a deleted service's teardown. */
export const AGENT_SUBJECT_TYPES = ['ENVIRONMENT', 'SERVICE', 'SERVICE_TEARDOWN'] as const;
export type AgentSubjectType = (typeof AGENT_SUBJECT_TYPES)[number];

/** The phases an agent reports: take → (built) → succeed | fail, or cancel_done once asked to stop. */
export const AGENT_PROGRESS_EVENTS = ['take', 'built', 'succeed', 'fail', 'cancel_done'] as const;
export type AgentProgressEvent = (typeof AGENT_PROGRESS_EVENTS)[number];

/** How a deployed workload runs, reported by its agent outside any task. */
export const WORKLOAD_HEALTH_STATES = ['RUNNING', 'RESTARTING', 'FAILED'] as const;
export type WorkloadHealth = (typeof WORKLOAD_HEALTH_STATES)[number];

const Seq = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const LogStream = Type.Enum(['stdout', 'stderr', 'system']);

// ---------------------------------------------------------------- task payloads (what the lease carries)

/** An environment's task: its services' own tasks came first; the agent only closes the environment's phases. */
export const EnvironmentTaskPayload = Type.Object({
  environment_id: Uuid,
  action: Type.String(),
  requested_at: Type.Optional(Timestamp),
});
export type EnvironmentTaskPayload = Static<typeof EnvironmentTaskPayload>;

/** A service's deploy, redeploy, restart or stop: the spec (`GET tasks/{id}/spec`) says what to run. */
export const ServiceTaskPayload = Type.Object({
  service_id: Uuid,
  service_type: Type.String(),
  environment_id: Uuid,
  deployment_id: Uuid,
  action: Type.String(),
  requested_at: Type.Optional(Timestamp),
  /**
   * The position of the service's deployment stage in its environment (0 first): a start is offered only after the
   * starts of earlier stages requested before it are done (docs/deployment-stages.md). Absent in tasks written before
   * stages existed, which count databases as 0 and the rest as 1.
   */
  deployment_stage_order: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type ServiceTaskPayload = Static<typeof ServiceTaskPayload>;

/**
 * A deleted service's teardown: the payload and the driver's own record say what to remove. Only a lifecycle JOB with
 * an on_delete command has a spec (`GET tasks/{id}/spec`, its last deployment's, for on_delete to run with).
 */
export const ServiceTeardownPayload = Type.Object({
  service_id: Uuid,
  service_type: Type.String(),
  environment_id: Uuid,
  name: Type.String(),
});
export type ServiceTeardownPayload = Static<typeof ServiceTeardownPayload>;

// ---------------------------------------------------------------- tasks

const AgentTaskFields = {
  id: Uuid,
  subject_type: Type.Enum(AGENT_SUBJECT_TYPES),
  subject_id: Uuid,
  deployment_id: Uuid,
  action: Type.String(),
  payload: Type.Object({}, { additionalProperties: true, description: 'EnvironmentTaskPayload, ServiceTaskPayload or ServiceTeardownPayload, by subject_type.' }),
  lease_id: Type.String({ description: 'Send it back with every report; empty once the task has ended.' }),
  lease_expires_at: Type.String({ description: 'Renewed by every accepted report; empty once the task has ended.' }),
  attempt: Type.Integer({ description: 'How many times the task has been leased (more than 1 after a lost lease).' }),
  last_report_seq: Type.Integer(),
  last_log_seq: Type.Integer(),
  accepts_logs: Type.Boolean({ description: 'Whether the subject keeps log lines (service deployments do; environments do not).' }),
  /**
   * The trace the agent's work on the task continues: the W3C traceparent of the control plane's job run that
   * dispatched it. Absent when the control plane records no traces; an agent that records none ignores it.
   */
  traceparent: Type.Optional(
    Type.String({
      pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
      description: "W3C traceparent of the dispatching job's span (OpenTelemetry); absent when the control plane records no traces.",
    }),
  ),
};

export const AgentTask = Type.Object(AgentTaskFields, { $id: 'AgentTask' });
export type AgentTask = Static<typeof AgentTask>;

export const AgentTaskLease = Type.Object({ tasks: Type.Array(AgentTask) }, { $id: 'AgentTaskLease' });
export type AgentTaskLease = Static<typeof AgentTaskLease>;

export const AgentTaskState = Type.Object(
  {
    ...AgentTaskFields,
    status: Type.Enum(['PENDING', 'LEASED', 'DONE']),
    outcome: Nullable(Type.Enum(['SUCCEEDED', 'FAILED', 'CANCELED'])),
    subject_status: Nullable(Type.String({ description: 'Where the environment or service stands; CANCELING asks the agent to stop.' })),
  },
  { $id: 'AgentTaskState' },
);
export type AgentTaskState = Static<typeof AgentTaskState>;

// ---------------------------------------------------------------- reports and logs

export const AgentProgressReport = Type.Object(
  {
    lease_id: Uuid,
    seq: Seq,
    event: Type.Enum(AGENT_PROGRESS_EVENTS),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);
export type AgentProgressReport = Static<typeof AgentProgressReport>;

export const AgentProgressAnswer = Type.Object(
  {
    applied: Type.Boolean({ description: 'False for a retried report already applied.' }),
    task_status: Type.String(),
    subject_status: Nullable(Type.String()),
  },
  { $id: 'AgentProgressAnswer' },
);
export type AgentProgressAnswer = Static<typeof AgentProgressAnswer>;

export const AgentLogLine = Type.Object(
  { seq: Seq, at: Timestamp, stream: LogStream, line: Type.String({ maxLength: 16_384 }) },
  { additionalProperties: false },
);
export type AgentLogLine = Static<typeof AgentLogLine>;

export const AgentLogBatch = Type.Object(
  { lease_id: Uuid, lines: Type.Array(AgentLogLine, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
export type AgentLogBatch = Static<typeof AgentLogBatch>;

export const AgentLogAnswer = Type.Object({ accepted: Type.Integer() }, { $id: 'AgentLogAnswer' });
export type AgentLogAnswer = Static<typeof AgentLogAnswer>;

// ---------------------------------------------------------------- workloads outside tasks

export const AgentWorkloadHealth = Type.Object(
  {
    health: Type.Enum(WORKLOAD_HEALTH_STATES),
    restarts: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);
export type AgentWorkloadHealth = Static<typeof AgentWorkloadHealth>;

export const AgentWorkloadHealthAnswer = Type.Object({ recorded: Type.Boolean() }, { $id: 'AgentWorkloadHealthAnswer' });
export type AgentWorkloadHealthAnswer = Static<typeof AgentWorkloadHealthAnswer>;

export const AgentWorkloadLogLine = Type.Object(
  {
    at: Timestamp,
    stream: LogStream,
    line: Type.String({ maxLength: 16_384 }),
    /** The instance (process) of the workload that printed it, when the agent knows; readers filter by it. */
    instance: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);
export type AgentWorkloadLogLine = Static<typeof AgentWorkloadLogLine>;

export const AgentWorkloadLogBatch = Type.Object({ lines: Type.Array(AgentWorkloadLogLine, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });

// ---------------------------------------------------------------- certificates a cluster obtains itself

/** Where a hostname's certificate stands on a cluster that certifies its own Ingresses (cert-manager). */
export const AGENT_CERTIFICATE_STATES = ['PENDING', 'ISSUED', 'ERROR'] as const;

/** The longest certificate error an agent sends (cert-manager's messages can quote whole ACME answers). */
export const AGENT_CERTIFICATE_ERROR_MAX = 1000;

export const AgentCertificateState = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 253 }),
    status: Type.Enum(AGENT_CERTIFICATE_STATES),
    /** Why it is not issued: set with ERROR only. */
    error: Nullable(Type.String({ maxLength: AGENT_CERTIFICATE_ERROR_MAX })),
    /** When the certificate serving the hostname expires: set with ISSUED (cert-manager's `status.notAfter`). */
    expires_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type AgentCertificateState = Static<typeof AgentCertificateState>;

/**
 * Changes of the certificates of the cluster's hostnames (docs/kubernetes.md, "Ingress and HTTPS"): `certificates`
 * says where each listed hostname stands now, `gone` lists hostnames the cluster no longer certifies. An agent sends
 * every state it knows after it starts or reconnects, then what changes.
 */
export const AgentCertificateReport = Type.Object(
  {
    certificates: Type.Array(AgentCertificateState, { maxItems: 500 }),
    gone: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 500 })),
  },
  { additionalProperties: false },
);
export type AgentCertificateReport = Static<typeof AgentCertificateReport>;

export const AgentCertificateReportAnswer = Type.Object(
  {
    recorded: Type.Integer({ description: 'Hostnames whose state was written (or removed, for `gone`).' }),
    ignored: Type.Integer({ description: "Hostnames that are no service's of this cluster: nothing was written for them." }),
  },
  { $id: 'AgentCertificateReportAnswer' },
);
export type AgentCertificateReportAnswer = Static<typeof AgentCertificateReportAnswer>;

// ---------------------------------------------------------------- the cluster's own events and log lines

/** The steps the reference's cluster logs name; an agent's line names one, or Unknown. */
export const CLUSTER_LOG_STEPS = [
  'LoadConfiguration',
  'Create',
  'Created',
  'CreateError',
  'Pause',
  'Paused',
  'PauseError',
  'Delete',
  'Deleted',
  'DeleteError',
  'RetrieveClusterConfig',
  'RetrieveClusterResources',
  'ValidateSystemRequirements',
  'UnderMigration',
  'Unknown',
] as const;
export const CLUSTER_LOG_TYPES = ['info', 'warning', 'error'] as const;

/** One Kubernetes event (core/v1 Event) of Slipway's namespaces, as the agent saw it; `uid` is the event object's. */
export const AgentClusterEvent = Type.Object(
  {
    uid: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.String({ maxLength: 128, description: "The involved object's kind (Pod, Deployment, …)." }),
    namespace: Type.String({ maxLength: 253 }),
    name: Type.String({ maxLength: 253, description: "The involved object's name." }),
    reason: Type.String({ maxLength: 253 }),
    message: Type.String({ maxLength: 4000 }),
    type: Type.String({ maxLength: 32, description: 'Normal or Warning.' }),
    reporting_component: Type.String({ maxLength: 253 }),
    node_name: Type.Optional(Type.String({ maxLength: 253, description: 'The node the event was reported from, when it says.' })),
    count: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
    first_occurrence: Timestamp,
    last_occurrence: Timestamp,
  },
  { additionalProperties: false },
);
export type AgentClusterEvent = Static<typeof AgentClusterEvent>;

/** A line of the agent's own work on its cluster (installing, checking, what went wrong outside any task). */
export const AgentClusterLogLine = Type.Object(
  {
    at: Timestamp,
    type: Type.Enum(CLUSTER_LOG_TYPES),
    step: Type.Optional(Type.Enum(CLUSTER_LOG_STEPS)),
    message: Type.String({ minLength: 1, maxLength: 4000 }),
  },
  { additionalProperties: false },
);
export type AgentClusterLogLine = Static<typeof AgentClusterLogLine>;

/**
 * What the agent tells of its cluster outside any task (docs/cluster-insight.md): Kubernetes events, new or repeated
 * (a repeat of a known uid updates it), and its own log lines. Safe to resend: events are keyed by uid, and a line
 * sent twice is kept twice at worst.
 */
export const AgentClusterEventReport = Type.Object(
  {
    events: Type.Optional(Type.Array(AgentClusterEvent, { maxItems: 500 })),
    logs: Type.Optional(Type.Array(AgentClusterLogLine, { maxItems: 500 })),
  },
  { additionalProperties: false },
);
export type AgentClusterEventReport = Static<typeof AgentClusterEventReport>;

export const AgentClusterEventReportAnswer = Type.Object(
  { events: Type.Integer({ description: 'Events written (new or updated).' }), logs: Type.Integer({ description: 'Log lines written.' }) },
  { $id: 'AgentClusterEventReportAnswer' },
);
export type AgentClusterEventReportAnswer = Static<typeof AgentClusterEventReportAnswer>;

export const ServiceRoute = Type.Object({ service_id: Uuid, hostnames: Type.Array(Type.String()) }, { additionalProperties: false });
export type ServiceRoute = Static<typeof ServiceRoute>;

export const AgentRoutes = Type.Object(
  { routes: Type.Array(ServiceRoute, { description: 'One entry per asked service running on the cluster; the others are left out.' }) },
  { $id: 'AgentRoutes' },
);
export type AgentRoutes = Static<typeof AgentRoutes>;

// ---------------------------------------------------------------- presence

/**
 * The cluster as the agent found it: its Kubernetes version, how many nodes it has (null when the agent may not list
 * them) and the permissions the agent needs and lacks (docs/kubernetes.md, "Permissions"), each as `verb resource scope`.
 */
export const AgentClusterFacts = Type.Object(
  {
    kubernetes_version: Nullable(Type.String({ maxLength: 64 })),
    node_count: Nullable(Type.Integer({ minimum: 0 })),
    missing_permissions: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 }),
    /**
     * The cert-manager ClusterIssuer its Ingresses name (`--cert-manager-issuer`): the cluster obtains its hostnames'
     * certificates itself and reports their state (AgentCertificateReport). Absent without one.
     */
    cert_manager_issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  },
  { additionalProperties: false },
);
export type AgentClusterFacts = Static<typeof AgentClusterFacts>;

export const AgentHeartbeat = Type.Object(
  {
    agent_version: Type.String({ minLength: 1, maxLength: 64 }),
    driver: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z][a-z0-9-]*$' }),
    hostname: Type.Optional(Type.String({ maxLength: 255 })),
    started_at: Timestamp,
    /** What the agent sees of the cluster it deploys onto (the Kubernetes driver's; the local driver sends none). */
    cluster: Type.Optional(AgentClusterFacts),
  },
  { additionalProperties: false },
);
export type AgentHeartbeat = Static<typeof AgentHeartbeat>;

export const AgentHeartbeatAnswer = Type.Object(
  { server_time: Timestamp, heartbeat_interval_seconds: Type.Number(), lease_seconds: Type.Number() },
  { $id: 'AgentHeartbeatAnswer' },
);
export type AgentHeartbeatAnswer = Static<typeof AgentHeartbeatAnswer>;

export const AgentEnrollment = Type.Object({ cluster_id: Uuid, credential: Type.String() }, { $id: 'AgentEnrollment' });
export type AgentEnrollment = Static<typeof AgentEnrollment>;

// ---------------------------------------------------------------- the deployment spec of a service task

/** One variable as the workload gets it: secrets opened (the spec is served to the lease holder only). */
export const SpecVariable = Type.Object({
  key: Type.String(),
  value: Type.String(),
  /** A file variable: the path its content is mounted at; null for an environment variable. */
  mount_path: Nullable(Type.String()),
  scope: Type.String(),
  secret: Type.Boolean(),
});
export type SpecVariable = Static<typeof SpecVariable>;

export const SpecGitSource = Type.Object({
  url: Type.String({ minLength: 1 }),
  branch: Nullable(Type.String()),
  commit_id: Nullable(Type.String()),
  root_path: Nullable(Type.String()),
  /** The organization's git token, opened: only for the lease holder. */
  credentials: Nullable(Type.Object({ provider: Type.Enum(['BITBUCKET', 'GITHUB', 'GITLAB']), token: Type.String() })),
});
export type SpecGitSource = Static<typeof SpecGitSource>;

export const SpecDatabase = Type.Object({
  type: Type.String(),
  version: Type.String(),
  username: Type.String(),
  password: Type.String(),
  database_name: Type.String(),
  /** PostgreSQL on the installation's shared server (SLIPWAY_LOCAL_POSTGRES_URL) when the driver has one, rather than a server of its own. */
  shared: Type.Boolean(),
});
export type SpecDatabase = Static<typeof SpecDatabase>;

/**
 * Where the other services of its environment reach a service: its internal hostname and the ports it declares, as
 * intent. Placement is the driver's: it decides which address the hostname stands for on its cluster (the local
 * driver, a loopback address of its own; Kubernetes, a Service) and serves the declared ports there.
 */
export const SpecInternalEndpoint = Type.Object({
  /** `<name>.<environment id>.slipway.internal`: what the built-in variables name it by. */
  hostname: Type.String({ minLength: 1, maxLength: 253 }),
  ports: Type.Array(Type.Integer({ minimum: 1, maximum: 65_535 })),
});
export type SpecInternalEndpoint = Static<typeof SpecInternalEndpoint>;

/** One service of the environment that has an internal hostname, for a driver that must resolve those names itself. */
export const SpecPeer = Type.Object({ service_id: Uuid, hostname: Type.String({ minLength: 1, maxLength: 253 }) });

/**
 * The image a CONTAINER (or an image JOB) runs: its full reference in the organization's registry, and the
 * registry's login for pulling it (opened: the spec is served to the lease holder only), null for a public one.
 */
export const SpecImage = Type.Object({
  reference: Type.String({ minLength: 1 }),
  pull_credentials: Nullable(Type.Object({ server: Type.String({ minLength: 1 }), username: Type.String(), password: Type.String() })),
});
export type SpecImage = Static<typeof SpecImage>;
export type SpecPeer = Static<typeof SpecPeer>;

/**
 * The chart a HELM service installs from one of the organization's Helm repositories: the repository's URL and kind
 * (an HTTPS chart repository, or an OCI registry: `oci://host/path`), its login (opened: the spec is served to the
 * lease holder only), the chart's name and version. Null for every other kind and for a chart from git (`git`).
 */
export const SpecHelmChart = Type.Object({
  repository_url: Type.String({ minLength: 1 }),
  kind: Type.Enum(['HTTPS', 'OCI']),
  credentials: Nullable(Type.Object({ username: Type.String(), password: Type.String() })),
  skip_tls_verification: Type.Boolean(),
  chart_name: Type.String({ minLength: 1 }),
  chart_version: Type.String({ minLength: 1 }),
});
export type SpecHelmChart = Static<typeof SpecHelmChart>;

export const ServiceDeploymentSpec = Type.Object(
  {
    service: Type.Object({
      id: Uuid,
      kind: Type.String(),
      name: Type.String(),
      organizationId: Uuid,
      environmentId: Uuid,
      clusterId: Uuid,
      /** The kind's settings as deployed (services.kind-*.ts): open here, each driver reads what it runs. */
      settings: Type.Object({}, { additionalProperties: true }),
    }),
    git_commit_id: Nullable(Type.String()),
    image_tag: Nullable(Type.String()),
    variables: Type.Array(SpecVariable),
    environment: Type.Object({ id: Uuid, name: Type.String(), mode: Type.String(), project_id: Uuid }),
    image: Nullable(SpecImage),
    git: Nullable(SpecGitSource),
    database: Nullable(SpecDatabase),
    helm_chart: Type.Optional(Nullable(SpecHelmChart)),
    routing: Type.Object({
      /** The public hostnames the service is reached at (its own, then verified custom domains); empty when private. */
      hostnames: Type.Array(Type.String()),
      internal: Nullable(SpecInternalEndpoint),
      /** Every service of the environment with an internal hostname (this one included): the names variables may hold. */
      peers: Type.Array(SpecPeer),
    }),
  },
  { $id: 'ServiceDeploymentSpec' },
);
export type ServiceDeploymentSpec = Static<typeof ServiceDeploymentSpec>;

export const AgentTaskSpec = Type.Object(
  {
    task_id: Uuid,
    deployment_id: Uuid,
    spec: ServiceDeploymentSpec,
  },
  { $id: 'AgentTaskSpec' },
);
export type AgentTaskSpec = Static<typeof AgentTaskSpec>;

// ---------------------------------------------------------------- the calls

/**
 * The protocol's calls, as the agent runtime makes them: over HTTP (src/agent/agent.client.ts) for an agent of its
 * own, or directly (src/modules/agents/agents.in-process.ts) for the agent `slipway server` runs for its LOCAL
 * clusters. Either way a refusal of the control plane is a ControlPlaneRefusal with the status the API answers.
 */
export interface AgentControlPlane {
  /** Long-poll for up to `max` tasks (default: the control plane's, 5). */
  leaseTasks(waitSeconds: number, signal?: AbortSignal, max?: number): Promise<AgentTaskLease>;
  getTask(taskId: string): Promise<AgentTaskState>;
  getTaskSpec(taskId: string, leaseId: string): Promise<AgentTaskSpec>;
  reportProgress(taskId: string, report: AgentProgressReport): Promise<AgentProgressAnswer>;
  appendLogs(taskId: string, batch: AgentLogBatch): Promise<AgentLogAnswer>;
  appendWorkloadLogs(serviceId: string, lines: AgentWorkloadLogLine[]): Promise<AgentLogAnswer>;
  reportWorkloadHealth(serviceId: string, report: AgentWorkloadHealth): Promise<AgentWorkloadHealthAnswer>;
  resolveRoutes(serviceIds: readonly string[]): Promise<AgentRoutes>;
  /** Only agents whose cluster certifies its own hostnames (Kubernetes with cert-manager) report certificates. */
  reportCertificates?(report: AgentCertificateReport): Promise<AgentCertificateReportAnswer>;
  /** Kubernetes events of Slipway's namespaces and the agent's own lines about its cluster (docs/cluster-insight.md). */
  reportClusterEvents?(report: AgentClusterEventReport): Promise<AgentClusterEventReportAnswer>;
  heartbeat(beat: AgentHeartbeat): Promise<AgentHeartbeatAnswer>;
}

/** A refusal of the control plane (4xx), with its error body's message: the agent does not retry it. */
export class ControlPlaneRefusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

// ---------------------------------------------------------------- parsing what arrives

/** A protocol answer that is not what the protocol says, naming where it is wrong. */
export class ProtocolViolation extends Error {}

/**
 * Checks `value` against one of the shapes above and answers it typed; throws ProtocolViolation naming the first
 * wrong field (`/spec/service/id must match format "uuid"`). Extra fields pass: a newer control plane may send more.
 */
export function parseProtocol<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  const problem = schemaProblem(schema, value);
  if (problem === undefined) return value as Static<T>;
  throw new ProtocolViolation(`the ${what} is not what agent protocol ${AGENT_PROTOCOL_VERSION} says: ${problem}`);
}

/** A task's payload, by its subject type. */
export function parseTaskPayload(task: Pick<AgentTask, 'subject_type' | 'payload'>): EnvironmentTaskPayload | ServiceTaskPayload | ServiceTeardownPayload {
  switch (task.subject_type) {
    case 'ENVIRONMENT':
      return parseProtocol(EnvironmentTaskPayload, task.payload, 'environment task payload');
    case 'SERVICE':
      return parseProtocol(ServiceTaskPayload, task.payload, 'service task payload');
    case 'SERVICE_TEARDOWN':
      return parseProtocol(ServiceTeardownPayload, task.payload, 'teardown task payload');
  }
}
