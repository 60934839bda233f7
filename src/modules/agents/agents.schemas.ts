import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schema.ts';
import { WORKLOAD_HEALTH_STATES } from '../../engine/deployment-states.ts';
import { AGENT_PROGRESS_EVENTS, AGENT_SUBJECT_TYPES } from './agents.service.ts';

/** Wire shapes of the agent protocol, version 1 (docs/agent-protocol.md). */

const Seq = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const AgentTaskParams = Type.Object({ taskId: Uuid }, { additionalProperties: false });

export const LeaseAgentTasksQuery = Type.Object(
  {
    wait_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 25, description: 'How long to wait for work when there is none.' })),
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);

const AgentTaskFields = {
  id: Uuid,
  subject_type: Type.Enum(AGENT_SUBJECT_TYPES),
  subject_id: Uuid,
  deployment_id: Uuid,
  action: Type.String(),
  payload: Type.Object({}, { additionalProperties: true }),
  lease_id: Type.String({ description: 'Send it back with every report; empty once the task has ended.' }),
  lease_expires_at: Type.String({ description: 'Renewed by every accepted report; empty once the task has ended.' }),
  attempt: Type.Integer({ description: 'How many times the task has been leased (more than 1 after a lost lease).' }),
  last_report_seq: Type.Integer(),
  last_log_seq: Type.Integer(),
  accepts_logs: Type.Boolean({ description: 'Whether the subject keeps log lines (service deployments do; environments do not).' }),
};

export const AgentTask = Type.Object(AgentTaskFields, { $id: 'AgentTask' });
export const AgentTaskLease = Type.Object({ tasks: Type.Array(AgentTask) }, { $id: 'AgentTaskLease' });

export const AgentTaskState = Type.Object(
  {
    ...AgentTaskFields,
    status: Type.Enum(['PENDING', 'LEASED', 'DONE']),
    outcome: Nullable(Type.Enum(['SUCCEEDED', 'FAILED', 'CANCELED'])),
    subject_status: Nullable(Type.String({ description: 'Where the environment or service stands; CANCELING asks the agent to stop.' })),
  },
  { $id: 'AgentTaskState' },
);

export const AgentProgressReport = Type.Object(
  {
    lease_id: Uuid,
    seq: Seq,
    event: Type.Enum(AGENT_PROGRESS_EVENTS),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const AgentProgressAnswer = Type.Object(
  {
    applied: Type.Boolean({ description: 'False for a retried report already applied.' }),
    task_status: Type.String(),
    subject_status: Nullable(Type.String()),
  },
  { $id: 'AgentProgressAnswer' },
);

export const AgentLogBatch = Type.Object(
  {
    lease_id: Uuid,
    lines: Type.Array(
      Type.Object(
        {
          seq: Seq,
          at: Timestamp,
          stream: Type.Enum(['stdout', 'stderr', 'system']),
          line: Type.String({ maxLength: 16_384 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

export const AgentLogAnswer = Type.Object({ accepted: Type.Integer() }, { $id: 'AgentLogAnswer' });

export const AgentWorkloadParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });

export const AgentWorkloadHealth = Type.Object(
  {
    health: Type.Enum(WORKLOAD_HEALTH_STATES),
    restarts: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

export const AgentWorkloadHealthAnswer = Type.Object({ recorded: Type.Boolean() }, { $id: 'AgentWorkloadHealthAnswer' });

export const AgentRoutesQuery = Type.Object(
  { service_ids: Type.Array(Uuid, { maxItems: 1000, description: 'The services whose routes the agent holds.' }) },
  { additionalProperties: false },
);

export const AgentRoutes = Type.Object(
  {
    routes: Type.Array(
      Type.Object({ service_id: Uuid, hostnames: Type.Array(Type.String()) }, { additionalProperties: false }),
      { description: 'One entry per asked service running on the cluster; the others are left out.' },
    ),
  },
  { $id: 'AgentRoutes' },
);

export const AgentWorkloadLogBatch = Type.Object(
  {
    lines: Type.Array(
      Type.Object(
        { at: Timestamp, stream: Type.Enum(['stdout', 'stderr', 'system']), line: Type.String({ maxLength: 16_384 }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

export const AgentHeartbeat = Type.Object(
  {
    agent_version: Type.String({ minLength: 1, maxLength: 64 }),
    driver: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z][a-z0-9-]*$' }),
    hostname: Type.Optional(Type.String({ maxLength: 255 })),
    started_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AgentHeartbeatAnswer = Type.Object(
  { server_time: Timestamp, heartbeat_interval_seconds: Type.Number(), lease_seconds: Type.Number() },
  { $id: 'AgentHeartbeatAnswer' },
);

export const ClusterAgentStatus = Type.Object(
  {
    connected: Type.Boolean({ description: 'An agent has heartbeated for this cluster.' }),
    reachable: Type.Boolean({ description: 'Its last heartbeat is recent (within three intervals).' }),
    last_seen_at: Nullable(Timestamp),
    agent_version: Nullable(Type.String()),
    driver: Nullable(Type.String()),
    hostname: Nullable(Type.String()),
    open_tasks: Type.Integer({ description: 'Tasks dispatched to the cluster and not yet settled.' }),
  },
  { $id: 'ClusterAgentStatus' },
);

export const AgentTaskSpecQuery = Type.Object({ lease_id: Uuid }, { additionalProperties: false });

export const AgentTaskSpec = Type.Object(
  {
    task_id: Uuid,
    deployment_id: Uuid,
    spec: Type.Object({}, { additionalProperties: true, description: "The subject's deployed settings and its variables, secrets opened." }),
  },
  { $id: 'AgentTaskSpec' },
);
