import { AuthorizationV1Api, type KubeConfig, type V1ResourceRule } from '@kubernetes/client-node';

/**
 * What the Kubernetes agent needs of the apiserver, as one table: the install manifests' ClusterRole is made from it
 * (kubernetes-install.ts) and the agent reviews its own rules against it at start (reviewPermissions), so the two
 * cannot disagree. docs/kubernetes.md, "Permissions", says the same in words.
 *
 * Scope `cluster` is what the agent needs across the cluster (cluster-scoped resources, or a resource in every
 * namespace at once); `namespace` is what it needs inside the environments' namespaces. Those namespaces are created
 * by the agent as environments arrive, so no RoleBinding can wait in them: both scopes are granted by one ClusterRole
 * bound cluster-wide, and the scope only says why the permission is there.
 */

export type PermissionScope = 'cluster' | 'namespace';

export interface NeededPermission {
  scope: PermissionScope;
  /** The API group ('' for the core group). */
  group: string;
  /** The resource, or `resource/subresource`. */
  resource: string;
  verbs: readonly string[];
}

const MANAGE = ['get', 'list', 'watch', 'create', 'patch', 'delete'] as const;
const READ = ['get', 'list', 'watch'] as const;

export const AGENT_PERMISSIONS: readonly NeededPermission[] = [
  // Environments' namespaces: created by apply, deleted with their last service.
  { scope: 'cluster', group: '', resource: 'namespaces', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  // The runtime follows every Slipway pod's log and status (kubernetes-runtime.ts); a job's run is read by its pods.
  { scope: 'cluster', group: '', resource: 'pods', verbs: ['list', 'watch'] },
  { scope: 'cluster', group: '', resource: 'pods/log', verbs: ['get'] },
  // The node count the agent reports.
  { scope: 'cluster', group: '', resource: 'nodes', verbs: ['list'] },
  // A stop names the service only: its workload and cron job are found by label across namespaces.
  { scope: 'cluster', group: 'apps', resource: 'deployments', verbs: ['list'] },
  { scope: 'cluster', group: 'apps', resource: 'statefulsets', verbs: ['list'] },
  { scope: 'cluster', group: 'batch', resource: 'cronjobs', verbs: ['list'] },
  // Each cron run (a Job of a CronJob) is reported as it starts and ends, marked reported (kubernetes-job-runs.ts).
  { scope: 'cluster', group: 'batch', resource: 'jobs', verbs: ['list', 'watch', 'patch'] },
  // `update` too: a TERRAFORM run's Role grants it on the namespace's Secrets, and RBAC lets the agent grant only
  // what it holds (kubernetes-terraform.ts).
  { scope: 'namespace', group: '', resource: 'secrets', verbs: [...MANAGE, 'update'] },
  { scope: 'namespace', group: '', resource: 'services', verbs: MANAGE },
  // A teardown deletes the claims of a StatefulSet by their labels.
  { scope: 'namespace', group: '', resource: 'persistentvolumeclaims', verbs: ['list', 'delete'] },
  { scope: 'namespace', group: '', resource: 'events', verbs: READ },
  { scope: 'namespace', group: 'apps', resource: 'deployments', verbs: MANAGE },
  { scope: 'namespace', group: 'apps', resource: 'statefulsets', verbs: MANAGE },
  // Stop and start go through the scale subresource.
  { scope: 'namespace', group: 'apps', resource: 'deployments/scale', verbs: ['get', 'patch'] },
  { scope: 'namespace', group: 'apps', resource: 'statefulsets/scale', verbs: ['get', 'patch'] },
  { scope: 'namespace', group: 'networking.k8s.io', resource: 'ingresses', verbs: MANAGE },
  { scope: 'namespace', group: 'autoscaling', resource: 'horizontalpodautoscalers', verbs: MANAGE },
  { scope: 'namespace', group: 'policy', resource: 'poddisruptionbudgets', verbs: MANAGE },
  { scope: 'namespace', group: 'batch', resource: 'cronjobs', verbs: MANAGE },
  { scope: 'namespace', group: 'batch', resource: 'jobs', verbs: MANAGE },
  // A TERRAFORM run's identity: its ServiceAccount, and a Role and RoleBinding on the namespace's Secrets and Leases
  // (the state backend's lock), which the agent must hold itself to grant; prune and teardown look through them all.
  { scope: 'namespace', group: '', resource: 'serviceaccounts', verbs: MANAGE },
  { scope: 'namespace', group: 'rbac.authorization.k8s.io', resource: 'roles', verbs: MANAGE },
  { scope: 'namespace', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', verbs: MANAGE },
  { scope: 'namespace', group: 'coordination.k8s.io', resource: 'leases', verbs: [...MANAGE, 'update'] },
  // With --cert-manager-issuer, where cert-manager's Certificates of Slipway's Ingresses stand is reported to the
  // control plane (kubernetes-certificates.ts); granting it on a cluster without cert-manager is harmless.
  { scope: 'cluster', group: 'cert-manager.io', resource: 'certificates', verbs: ['list'] },
];

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * The ClusterRole's rules for a table of permissions: the verbs of each resource merged across scopes, then one rule
 * per API group and verb set (the fewest rules that grant exactly the table).
 */
export function policyRulesOf(permissions: readonly NeededPermission[] = AGENT_PERMISSIONS): PolicyRule[] {
  const verbsOf = new Map<string, { group: string; resource: string; verbs: Set<string> }>();
  for (const permission of permissions) {
    const key = `${permission.group}/${permission.resource}`;
    const entry = verbsOf.get(key) ?? { group: permission.group, resource: permission.resource, verbs: new Set<string>() };
    for (const verb of permission.verbs) entry.verbs.add(verb);
    verbsOf.set(key, entry);
  }
  const rules = new Map<string, PolicyRule>();
  for (const { group, resource, verbs } of verbsOf.values()) {
    const sorted = [...verbs].sort();
    const key = `${group}|${sorted.join(',')}`;
    const rule = rules.get(key) ?? { apiGroups: [group], resources: [], verbs: sorted };
    rule.resources.push(resource);
    rules.set(key, rule);
  }
  return [...rules.values()];
}

/** One permission as a person reads it: `list nodes`, `patch deployments.apps/scale in namespaces`. */
export function describePermission(verb: string, permission: Pick<NeededPermission, 'scope' | 'group' | 'resource'>): string {
  const [resource = '', subresource] = permission.resource.split('/');
  const name = `${resource}${permission.group === '' ? '' : `.${permission.group}`}${subresource === undefined ? '' : `/${subresource}`}`;
  return `${verb} ${name} ${permission.scope === 'cluster' ? 'cluster-wide' : 'in namespaces'}`;
}

function ruleGrants(rule: V1ResourceRule, group: string, resource: string, verb: string): boolean {
  // A rule limited to named objects grants nothing on the resource as a whole.
  if ((rule.resourceNames ?? []).length > 0) return false;
  const groups = rule.apiGroups ?? [];
  if (!groups.includes('*') && !groups.includes(group)) return false;
  if (!rule.verbs.includes('*') && !rule.verbs.includes(verb)) return false;
  const [base = '', subresource] = resource.split('/');
  return (rule.resources ?? []).some(
    (granted) => granted === '*' || granted === resource || (subresource !== undefined && (granted === `*/${subresource}` || granted === `${base}/*`)),
  );
}

/**
 * Which needed permissions a set of rules (a SelfSubjectRulesReview's) leaves out, each as describePermission says
 * it, in the table's order.
 */
export function missingPermissions(rules: readonly V1ResourceRule[], permissions: readonly NeededPermission[] = AGENT_PERMISSIONS): string[] {
  const missing: string[] = [];
  for (const permission of permissions) {
    for (const verb of permission.verbs) {
      if (!rules.some((rule) => ruleGrants(rule, permission.group, permission.resource, verb))) missing.push(describePermission(verb, permission));
    }
  }
  return missing;
}

/**
 * A namespace no environment uses and nobody binds roles in: its review shows what the agent holds in a namespace it
 * has just created — the rules of its ClusterRoleBindings — which is what it has in every environment's namespace.
 * It need not exist.
 */
export const PERMISSION_PROBE_NAMESPACE = 'slipway-permission-probe';

export interface PermissionReview {
  /** What the agent lacks, as describePermission says it; empty when it has everything. */
  missing: string[];
  /** The authorizer could not list every rule (a webhook authorizer, say): what is missing was asked one by one. */
  incomplete: boolean;
}

/**
 * The agent's own permissions, from the apiserver: a SelfSubjectRulesReview in the probe namespace (the
 * cluster-wide rules, and what a fresh namespace grants), compared with the table. When the authorizer says its
 * answer is incomplete, each permission the rules leave out is asked again with a SelfSubjectAccessReview — cluster
 * scope without a namespace, namespace scope in the probe namespace — so only what is really refused is reported.
 */
export async function reviewPermissions(config: KubeConfig, permissions: readonly NeededPermission[] = AGENT_PERMISSIONS): Promise<PermissionReview> {
  const authorization = config.makeApiClient(AuthorizationV1Api);
  const review = await authorization.createSelfSubjectRulesReview({
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: PERMISSION_PROBE_NAMESPACE } },
  });
  const rules = review.status?.resourceRules ?? [];
  const incomplete = review.status?.incomplete ?? false;
  if (!incomplete) return { missing: missingPermissions(rules, permissions), incomplete };
  const missing: string[] = [];
  for (const permission of permissions) {
    for (const verb of permission.verbs) {
      if (rules.some((rule) => ruleGrants(rule, permission.group, permission.resource, verb))) continue;
      const [resource, subresource] = permission.resource.split('/');
      const access = await authorization.createSelfSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              group: permission.group,
              resource,
              verb,
              ...(subresource === undefined ? {} : { subresource }),
              ...(permission.scope === 'namespace' ? { namespace: PERMISSION_PROBE_NAMESPACE } : {}),
            },
          },
        },
      });
      if (access.status?.allowed !== true) missing.push(describePermission(verb, permission));
    }
  }
  return { missing, incomplete };
}
