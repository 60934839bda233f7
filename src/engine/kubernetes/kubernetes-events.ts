import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { AgentClusterEvent, AgentClusterEventReport } from '../../protocol/agent-protocol.ts';
import { kubernetesErrorMessage } from './kubernetes-cluster.ts';
import { MANAGED_BY, SLIPWAY } from './kubernetes-names.ts';
import { runReportLoop } from './kubernetes-report-loop.ts';

/**
 * The Kubernetes events of Slipway's namespaces (core/v1 Events: a pod backing off, an image that cannot be pulled, a
 * rollout scaling), reported to the control plane so `get-cluster-kubernetes-events` answers them
 * (docs/cluster-insight.md).
 *
 * Every period (15 s by default) the agent lists the namespaces Slipway made (by label) and the events of each — lists
 * rather than a watch, as the certificate reports do (kubernetes-certificates.ts): as cheap, and nothing to keep
 * alive. It sends the events that are new or repeated since its last accepted report (an event's `count` or last
 * occurrence moved), in batches of the protocol's size; after a failed report it sends them all again.
 */

const DEFAULT_PERIOD_MS = 15_000;
/** The protocol's batch size (AgentClusterEventReport's maxItems). */
const BATCH = 500;

function clip(text: string | undefined, max: number): string {
  const value = (text ?? '').trim();
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

function timestampOf(...values: Array<Date | string | undefined | null>): string | undefined {
  for (const value of values) {
    if (value === undefined || value === null) continue;
    const at = new Date(value);
    if (!Number.isNaN(at.getTime())) return at.toISOString();
  }
  return undefined;
}

/**
 * An event as the protocol carries it; undefined for one without a uid or any time (nothing to key or place it by).
 * Events of the newer events.k8s.io form keep their series in `series` and their time in `eventTime`.
 */
export function clusterEventOf(event: CoreV1Event): AgentClusterEvent | undefined {
  const uid = event.metadata?.uid;
  const first = timestampOf(event.firstTimestamp, event.eventTime, event.metadata?.creationTimestamp);
  const last = timestampOf(event.lastTimestamp, event.series?.lastObservedTime, event.eventTime, first);
  if (uid === undefined || first === undefined || last === undefined) return undefined;
  const node = event.source?.host ?? (event.involvedObject.kind === 'Node' ? event.involvedObject.name : undefined);
  return {
    uid: clip(uid, 128),
    kind: clip(event.involvedObject.kind, 128),
    namespace: clip(event.involvedObject.namespace ?? event.metadata?.namespace, 253),
    name: clip(event.involvedObject.name, 253),
    reason: clip(event.reason, 253),
    message: clip(event.message, 4000),
    type: clip(event.type ?? 'Normal', 32),
    reporting_component: clip(event.reportingComponent || event.source?.component, 253),
    ...(node === undefined || node === '' ? {} : { node_name: clip(node, 253) }),
    count: Math.max(1, event.series?.count ?? event.count ?? 1),
    first_occurrence: first,
    last_occurrence: last < first ? first : last,
  };
}

export interface ClusterEventReportsOptions {
  config: KubeConfig;
  /** Sends one batch (AgentControlPlane.reportClusterEvents); a throw means the control plane may not have it. */
  report(report: AgentClusterEventReport): Promise<unknown>;
  onTrouble(message: string): void;
  periodMs?: number | undefined;
}

export function startClusterEventReports(options: ClusterEventReportsOptions): { stop(): Promise<void> } {
  const core = options.config.makeApiClient(CoreV1Api);
  const periodMs = options.periodMs ?? DEFAULT_PERIOD_MS;
  /** What the control plane accepted last, per event uid: its count and last occurrence. */
  let reported = new Map<string, string>();

  async function round(): Promise<void> {
    const namespaces = await core.listNamespace({ labelSelector: `${MANAGED_BY}=${SLIPWAY}` });
    const now = new Map<string, string>();
    const fresh: AgentClusterEvent[] = [];
    for (const namespace of namespaces.items) {
      const name = namespace.metadata?.name;
      if (name === undefined) continue;
      for (const item of (await core.listNamespacedEvent({ namespace: name })).items) {
        const event = clusterEventOf(item);
        if (event === undefined) continue;
        const seen = `${event.count}|${event.last_occurrence}`;
        now.set(event.uid, seen);
        if (reported.get(event.uid) !== seen) fresh.push(event);
      }
    }
    for (let start = 0; start < fresh.length; start += BATCH) {
      await options.report({ events: fresh.slice(start, start + BATCH) });
    }
    // Events Kubernetes expired are forgotten here too; the control plane keeps its own copy.
    reported = now;
  }

  return runReportLoop({
    periodMs,
    round,
    onFailure(error) {
      // Part of it may have landed, or none: the next round sends everything it lists again.
      reported = new Map();
      try {
        options.onTrouble(`reporting the cluster's Kubernetes events failed (again in ${periodMs} ms): ${kubernetesErrorMessage(error)}`);
      } catch {
        // A complaint that cannot be told is not worth stopping for.
      }
    },
  });
}
