import type { Queryable } from '../../db/db.schema.ts';
import { readJson } from '../../db/db.json.ts';
import {
  readAgentCertificates,
  readAgentPresence,
  readAgentTasks,
  readClusterForDiagnosis,
  readClusterOperator,
  readClusterServices,
  readServiceCertificates,
} from './cluster-settings.repo.ts';
import type { AnalysisFormat, AnalysisKind } from './cluster-settings.schemas.ts';

/**
 * The diagnosis a cluster analysis runs (docs/cluster-network.md, "Cluster analysis"): what the control plane knows of
 * the cluster, judged. Every analysis checks the cluster's health — its state, its agent's heartbeat and version, the
 * work waiting for or failed on the agent, certificates and failed workloads; DEPRECATED_API_CHECK adds the Kubernetes
 * API versions Slipway's driver applies against the target version, COST_RECOMMENDATION the capacity the cluster keeps
 * against what runs on it. The findings are written as log lines in the requested format.
 */

export type FindingLevel = 'INFO' | 'WARNING' | 'ERROR';

export interface Finding {
  check: string;
  level: FindingLevel;
  detail: string;
}

export interface DiagnosisInput {
  clusterId: string;
  kind: AnalysisKind;
  targetKubernetesVersion: string | null;
  now: Date;
  serverVersion: string;
  /** The agents' heartbeat interval: three missed beats and the agent counts as unreachable. */
  heartbeatIntervalMs: number;
  /** Kubernetes versions Slipway deploys, oldest first. */
  supportedKubernetesVersions: readonly string[];
}

/** Tasks waiting this long for an agent are worth a warning: a healthy agent takes work within seconds. */
const PENDING_TASK_WARNING_MS = 5 * 60_000;
/** Failures looked back on. */
const FAILED_TASK_WINDOW_MS = 24 * 3_600_000;
/** A certificate expiring sooner than this is reported: renewal starts 30 days ahead and should have happened. */
const CERTIFICATE_EXPIRY_WARNING_MS = 14 * 86_400_000;

/**
 * The Kubernetes API versions Slipway's drivers apply (src/engine, src/agent), with the release that removes each
 * (none of them is scheduled for removal; older versions the driver no longer writes are listed so that a cluster whose
 * objects were applied by hand or by charts is warned through the reference).
 */
const APPLIED_APIS: ReadonlyArray<{ apiVersion: string; kinds: string }> = [
  { apiVersion: 'v1', kinds: 'Namespace, Service, Secret, ConfigMap, ServiceAccount, PersistentVolumeClaim' },
  { apiVersion: 'apps/v1', kinds: 'Deployment, StatefulSet' },
  { apiVersion: 'batch/v1', kinds: 'Job, CronJob' },
  { apiVersion: 'networking.k8s.io/v1', kinds: 'Ingress' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kinds: 'Role, RoleBinding' },
  { apiVersion: 'coordination.k8s.io/v1', kinds: 'Lease' },
  { apiVersion: 'authorization.k8s.io/v1', kinds: 'SelfSubjectAccessReview' },
];

/** API versions removed by Kubernetes releases (the upstream deprecation guide), for the target version check. */
const REMOVED_APIS: ReadonlyArray<{ apiVersion: string; kinds: string; removedIn: string; replacement: string }> = [
  { apiVersion: 'extensions/v1beta1', kinds: 'Ingress', removedIn: '1.22', replacement: 'networking.k8s.io/v1' },
  { apiVersion: 'networking.k8s.io/v1beta1', kinds: 'Ingress', removedIn: '1.22', replacement: 'networking.k8s.io/v1' },
  { apiVersion: 'batch/v1beta1', kinds: 'CronJob', removedIn: '1.25', replacement: 'batch/v1' },
  { apiVersion: 'policy/v1beta1', kinds: 'PodDisruptionBudget, PodSecurityPolicy', removedIn: '1.25', replacement: 'policy/v1 (PodSecurityPolicy: none)' },
  { apiVersion: 'autoscaling/v2beta2', kinds: 'HorizontalPodAutoscaler', removedIn: '1.26', replacement: 'autoscaling/v2' },
  { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kinds: 'FlowSchema, PriorityLevelConfiguration', removedIn: '1.29', replacement: 'flowcontrol.apiserver.k8s.io/v1' },
  { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', kinds: 'FlowSchema, PriorityLevelConfiguration', removedIn: '1.32', replacement: 'flowcontrol.apiserver.k8s.io/v1' },
];

function minorOf(version: string): number[] {
  return version.split('.').map(Number);
}

function versionAtLeast(version: string, floor: string): boolean {
  const [major = 0, minor = 0] = minorOf(version);
  const [floorMajor = 0, floorMinor = 0] = minorOf(floor);
  return major > floorMajor || (major === floorMajor && minor >= floorMinor);
}

function ageText(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

/** The cluster's findings; undefined when the cluster no longer exists. */
export async function diagnoseCluster(db: Queryable, input: DiagnosisInput): Promise<Finding[] | undefined> {
  const cluster = await readClusterForDiagnosis(db, input.clusterId);
  if (cluster === undefined || cluster.status === 'DELETED') return undefined;
  const now = input.now.getTime();
  const findings: Finding[] = [];
  const add = (check: string, level: FindingLevel, detail: string) => findings.push({ check, level, detail });

  // The cluster's own state.
  if (cluster.status.endsWith('_ERROR') || cluster.status === 'INVALID_CREDENTIALS') {
    add('cluster-state', 'ERROR', `the cluster is ${cluster.status}${cluster.status_message === null ? '' : `: ${cluster.status_message}`}`);
  } else {
    add('cluster-state', 'INFO', `the cluster is ${cluster.status} (${cluster.kubernetes} on ${cluster.cloud_provider}, Kubernetes ${cluster.version})`);
  }

  // The agent: heartbeat, version, what it reported of the cluster.
  const presence = await readAgentPresence(db, input.clusterId);
  const unreachableAfter = 3 * input.heartbeatIntervalMs;
  if (presence === undefined) {
    add('agent-heartbeat', 'ERROR', 'no agent has ever connected: install the agent (getClusterOperatorBootstrap) or start the local agent');
  } else {
    const age = now - Date.parse(presence.last_seen_at);
    if (age > unreachableAfter) {
      add('agent-heartbeat', 'ERROR', `the agent (${presence.driver}${presence.hostname === null ? '' : ` on ${presence.hostname}`}) was last seen ${ageText(age)} ago: it is unreachable`);
    } else {
      add('agent-heartbeat', 'INFO', `the agent (${presence.driver}) was last seen ${ageText(Math.max(0, age))} ago`);
    }
    if (presence.agent_version !== input.serverVersion) {
      add('agent-version', 'WARNING', `the agent runs Slipway ${presence.agent_version}, the control plane ${input.serverVersion}: upgrade the agent to the control plane's version`);
    } else {
      add('agent-version', 'INFO', `the agent runs the control plane's version (${input.serverVersion})`);
    }
    const missing = presence.missing_permissions === null ? [] : readJson<string[]>(presence.missing_permissions);
    if (missing.length > 0) {
      add('agent-permissions', 'ERROR', `the agent lacks ${missing.length} Kubernetes permission(s): ${missing.slice(0, 5).join('; ')}${missing.length > 5 ? '; …' : ''}`);
    }
    if (presence.kubernetes_version !== null && !presence.kubernetes_version.startsWith(`${cluster.version}.`) && presence.kubernetes_version !== cluster.version) {
      add('kubernetes-version', 'WARNING', `the agent reports Kubernetes ${presence.kubernetes_version} where the cluster is recorded at ${cluster.version}`);
    }
  }
  if (cluster.kubernetes === 'SELF_MANAGED') {
    const operator = await readClusterOperator(db, input.clusterId);
    if (operator === undefined) add('operator', 'ERROR', 'the cluster operator has not enrolled: run the installation (getInstallationHelmValues)');
    else if (operator.reported_status !== null && operator.reported_status !== 'READY') {
      add('operator', 'WARNING', `the cluster operator reports ${operator.reported_status}`);
    }
  }

  // Work for the agent: waiting, held, failed recently.
  const tasks = await readAgentTasks(db, input.clusterId, new Date(now - FAILED_TASK_WINDOW_MS).toISOString());
  const pending = tasks.filter((task) => task.status === 'PENDING');
  const leased = tasks.filter((task) => task.status === 'LEASED');
  const failed = tasks.filter((task) => task.status === 'DONE' && task.outcome === 'FAILED');
  const oldestPending = pending[0];
  if (oldestPending !== undefined) {
    const waited = now - Date.parse(oldestPending.requested_at ?? oldestPending.created_at);
    const level: FindingLevel = waited > PENDING_TASK_WARNING_MS ? 'WARNING' : 'INFO';
    add('agent-tasks', level, `${pending.length} task(s) wait for the agent, the oldest (${oldestPending.action} of ${oldestPending.subject_type.toLowerCase()} ${oldestPending.subject_id}) for ${ageText(Math.max(0, waited))}`);
  } else {
    add('agent-tasks', 'INFO', 'no task waits for the agent');
  }
  if (leased.length > 0) add('agent-tasks', 'INFO', `${leased.length} task(s) are being carried out`);
  const retried = tasks.filter((task) => task.leases > 1 && task.status !== 'DONE');
  if (retried.length > 0) add('agent-tasks', 'WARNING', `${retried.length} task(s) were taken more than once (an agent lost them): check the agent's restarts`);
  if (failed.length > 0) {
    const last = failed[failed.length - 1];
    add('agent-tasks', 'ERROR', `${failed.length} task(s) failed in the last 24 h${last === undefined ? '' : `, the last one ${last.action} of ${last.subject_type.toLowerCase()} ${last.subject_id}`}`);
  }

  // Workloads.
  const services = await readClusterServices(db, input.clusterId);
  const failedWorkloads = services.filter((service) => service.workload_health === 'FAILED' || (service.status ?? '').endsWith('_ERROR'));
  for (const service of failedWorkloads.slice(0, 20)) {
    const reason = service.workload_health === 'FAILED' ? `its workload FAILED${service.workload_message === null ? '' : `: ${service.workload_message}`}` : `it is ${service.status}`;
    add('workloads', 'ERROR', `${service.kind.toLowerCase()} ${service.name} in environment ${service.environment_name}: ${reason}`);
  }
  if (failedWorkloads.length > 20) add('workloads', 'ERROR', `and ${failedWorkloads.length - 20} more failed service(s)`);
  const restarting = services.filter((service) => service.workload_health === 'RESTARTING');
  for (const service of restarting.slice(0, 10)) {
    add('workloads', 'WARNING', `${service.kind.toLowerCase()} ${service.name} in environment ${service.environment_name} is restarting (${service.workload_restarts ?? 0} restarts)`);
  }
  if (failedWorkloads.length === 0 && restarting.length === 0) add('workloads', 'INFO', `${services.length} service(s), none failed or restarting`);

  // Certificates: those the cluster's cert-manager reports, and those the control plane obtains for its services.
  const certificates = [
    ...(await readAgentCertificates(db, input.clusterId)).map((row) => ({ hostname: row.hostname, status: row.status, error: row.error, expiresAt: row.expires_at })),
    ...(await readServiceCertificates(db, services.map((service) => service.id))).map((row) => ({
      hostname: row.hostname,
      status: row.status,
      error: row.last_error,
      expiresAt: row.not_after,
    })),
  ];
  let certificateProblems = 0;
  for (const certificate of certificates) {
    if (certificate.status === 'ERROR') {
      certificateProblems += 1;
      add('certificates', 'ERROR', `${certificate.hostname}: ${certificate.error ?? 'issuance failed'}`);
    } else if (certificate.expiresAt !== null && Date.parse(certificate.expiresAt) - now < CERTIFICATE_EXPIRY_WARNING_MS) {
      certificateProblems += 1;
      const left = Date.parse(certificate.expiresAt) - now;
      add('certificates', left <= 0 ? 'ERROR' : 'WARNING', left <= 0 ? `${certificate.hostname} expired` : `${certificate.hostname} expires in ${ageText(left)} and was not renewed`);
    }
  }
  const pendingCertificates = certificates.filter((certificate) => certificate.status === 'PENDING').length;
  if (pendingCertificates > 0) add('certificates', 'INFO', `${pendingCertificates} certificate(s) are being issued`);
  if (certificateProblems === 0) add('certificates', 'INFO', `${certificates.length} certificate(s), none failed or expiring within 14 days`);

  if (input.kind === 'DEPRECATED_API_CHECK') deprecatedApiFindings(cluster.version, input, add);
  else costFindings(cluster, presence?.node_count ?? null, services, add);
  return findings;
}

function deprecatedApiFindings(current: string, input: DiagnosisInput, add: (check: string, level: FindingLevel, detail: string) => void): void {
  const next = input.supportedKubernetesVersions[input.supportedKubernetesVersions.indexOf(current) + 1];
  const target = input.targetKubernetesVersion ?? next ?? current;
  add('deprecated-apis', 'INFO', `checking the APIs Slipway applies against Kubernetes ${target} (the cluster runs ${current})`);
  if (!input.supportedKubernetesVersions.includes(target)) {
    add('deprecated-apis', 'WARNING', `Slipway does not deploy Kubernetes ${target}: it deploys ${input.supportedKubernetesVersions.join(', ')}`);
  }
  if (versionAtLeast(current, target) && target !== current) {
    add('deprecated-apis', 'WARNING', `the target ${target} is older than the cluster's ${current}: Kubernetes is never downgraded`);
  }
  for (const api of APPLIED_APIS) {
    const removal = REMOVED_APIS.find((removed) => removed.apiVersion === api.apiVersion && versionAtLeast(target, removed.removedIn));
    if (removal === undefined) add('deprecated-apis', 'INFO', `${api.apiVersion} (${api.kinds}): served by ${target}`);
    else add('deprecated-apis', 'ERROR', `${api.apiVersion} (${api.kinds}) is removed in ${removal.removedIn}: use ${removal.replacement}`);
  }
  const removedByUpgrade = REMOVED_APIS.filter((removed) => versionAtLeast(target, removed.removedIn) && !versionAtLeast(current, removed.removedIn));
  for (const removed of removedByUpgrade) {
    add('deprecated-apis', 'WARNING', `upgrading removes ${removed.apiVersion} (${removed.kinds}): objects applied by charts or by hand with it must move to ${removed.replacement}`);
  }
}

function costFindings(
  cluster: { min_running_nodes: number; max_running_nodes: number; instance_type: string | null; kubernetes: string },
  nodeCount: number | null,
  services: ReadonlyArray<{ status: string | null; environment_id: string }>,
  add: (check: string, level: FindingLevel, detail: string) => void,
): void {
  const running = services.filter((service) => service.status === 'DEPLOYED' || service.status === 'RESTARTED');
  const stoppedEnvironments = new Set<string>();
  const activeEnvironments = new Set(running.map((service) => service.environment_id));
  for (const service of services) if (!activeEnvironments.has(service.environment_id)) stoppedEnvironments.add(service.environment_id);
  add('capacity', 'INFO', `${running.length} of ${services.length} service(s) run; nodes ${cluster.min_running_nodes} to ${cluster.max_running_nodes}${cluster.instance_type === null ? '' : ` of ${cluster.instance_type}`}${nodeCount === null ? '' : `, ${nodeCount} reported by the agent`}`);
  if (cluster.kubernetes === 'LOCAL') {
    add('capacity', 'INFO', 'a LOCAL cluster runs on this host: it has no nodes to scale');
  } else {
    if (nodeCount !== null && nodeCount >= cluster.max_running_nodes) {
      add('capacity', 'WARNING', `the cluster runs at its maximum of ${cluster.max_running_nodes} node(s): new workloads may not be scheduled; raise max_running_nodes`);
    }
    if (running.length === 0 && cluster.min_running_nodes > 1) {
      add('cost', 'WARNING', `no service runs but at least ${cluster.min_running_nodes} nodes are kept: lower min_running_nodes to 1, or stop the cluster`);
    } else if (nodeCount !== null && nodeCount > cluster.min_running_nodes && running.length < nodeCount) {
      add('cost', 'INFO', `${nodeCount} node(s) for ${running.length} running service(s): the autoscaler may consolidate them`);
    }
  }
  if (stoppedEnvironments.size > 0) {
    add('cost', 'INFO', `${stoppedEnvironments.size} environment(s) have no running service: delete those no longer needed, or give them deployment rules that stop them out of hours`);
  }
}

function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The findings as the lines of the requested format, each with its level (header lines are INFO). */
export function formatFindings(findings: readonly Finding[], format: AnalysisFormat): Array<{ level: FindingLevel; message: string }> {
  switch (format) {
    case 'JSON':
      return findings.map((finding) => ({ level: finding.level, message: JSON.stringify(finding) }));
    case 'CSV':
      return [
        { level: 'INFO', message: 'check,level,detail' },
        ...findings.map((finding) => ({ level: finding.level, message: [finding.check, finding.level, finding.detail].map(csvField).join(',') })),
      ];
    case 'TABLE': {
      const checkWidth = Math.max('CHECK'.length, ...findings.map((finding) => finding.check.length));
      const row = (check: string, level: string, detail: string) => `${check.padEnd(checkWidth)}  ${level.padEnd(7)}  ${detail}`;
      const errors = findings.filter((finding) => finding.level === 'ERROR').length;
      const warnings = findings.filter((finding) => finding.level === 'WARNING').length;
      return [
        { level: 'INFO', message: row('CHECK', 'LEVEL', 'DETAIL') },
        ...findings.map((finding) => ({ level: finding.level, message: row(finding.check, finding.level, finding.detail) })),
        { level: errors > 0 ? 'ERROR' : warnings > 0 ? 'WARNING' : 'INFO', message: `${findings.length} finding(s): ${errors} error(s), ${warnings} warning(s)` },
      ];
    }
  }
}
