import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/**
 * The agent routes' own parameters and the cluster's agent status. The shapes that cross to the agent and back are
 * the protocol's (src/protocol/agent-protocol.ts), shared with the agent's client and its drivers.
 */

export const AgentTaskParams = Type.Object({ taskId: Uuid }, { additionalProperties: false });

export const LeaseAgentTasksQuery = Type.Object(
  {
    wait_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 25, description: 'How long to wait for work when there is none.' })),
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);

export const AgentWorkloadParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });

export const AgentRoutesQuery = Type.Object(
  { service_ids: Type.Array(Uuid, { maxItems: 1000, description: 'The services whose routes the agent holds.' }) },
  { additionalProperties: false },
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
    cluster: Type.Optional(
      Type.Object(
        {
          kubernetes_version: Nullable(Type.String()),
          node_count: Nullable(Type.Integer({ description: 'Null when the agent may not list the nodes.' })),
          missing_permissions: Type.Array(Type.String(), { description: 'The permissions the agent needs and lacks, as `verb resource scope`.' }),
        },
        { description: 'What a Kubernetes agent last reported of its cluster; absent for an agent that reports none.' },
      ),
    ),
  },
  { $id: 'ClusterAgentStatus' },
);

export const AgentTaskSpecQuery = Type.Object({ lease_id: Uuid }, { additionalProperties: false });
