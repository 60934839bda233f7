import { stringify } from 'yaml';
import { policyRulesOf } from './kubernetes-permissions.ts';
import type { KubeObject } from './kubernetes-workload.ts';

/**
 * What installs the Kubernetes agent in a cluster (docs/kubernetes.md, "Installing the agent"): its namespace, its
 * ServiceAccount, a ClusterRole holding exactly the permissions the agent needs (kubernetes-permissions.ts, the same
 * table the agent reviews itself against) bound cluster-wide, a Secret with the control plane's URL and the
 * one-time enrollment token, a claim for the agent's state and a Deployment of one agent. The Helm chart in
 * charts/slipway-agent renders the same objects from the values installHelmValues answers.
 *
 * The install's objects are not labelled `app.kubernetes.io/managed-by: slipway`: that label marks the workloads the
 * agent manages (and whose pods its runtime follows); the agent's own objects belong to whoever installs it.
 */

export const AGENT_INSTALL_NAME = 'slipway-agent';
export const DEFAULT_AGENT_NAMESPACE = 'slipway-system';
export const DEFAULT_AGENT_IMAGE_REPOSITORY = 'ghcr.io/slipway/slipway';
/** Where the enrollment Secret is mounted in the agent's container: the token is read from a file, never an argument. */
export const ENROLLMENT_TOKEN_FILE = '/var/run/slipway/enrollment/token';
const ENROLLMENT_DIR = '/var/run/slipway/enrollment';
/** The claim's mount: the agent's credential after enrollment lives here, so a restarted pod needs no new token. */
const STATE_DIR = '/var/lib/slipway';
const HEALTH_PORT = 8081;
/** A user and group no image ships: the agent writes only its claim and /tmp. */
const AGENT_UID = 65532;

export interface AgentResources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
}

/** What the install is made of: the chart's values, key for key (charts/slipway-agent/values.yaml). */
export interface AgentInstallValues {
  controlPlaneUrl: string;
  clusterId: string;
  /** The one-time enrollment token, put in the install's Secret; empty when existingSecret holds it. */
  enrollmentToken: string;
  /** A Secret the operator made with keys `control-plane-url` and `enrollment-token`; empty: the install makes one. */
  existingSecret: string;
  namespace: { name: string; create: boolean };
  image: { repository: string; tag: string; pullPolicy: 'Always' | 'IfNotPresent' | 'Never' };
  resources: AgentResources;
  persistence: { size: string; storageClassName: string };
}

export interface AgentInstallInput {
  controlPlaneUrl: string;
  clusterId: string;
  enrollmentToken: string;
  /** Slipway's version: the image's default tag. */
  version: string;
  namespace?: string | undefined;
  /**
   * Render the Namespace (default true). Helm keeps its release record in the namespace, so it must exist before the
   * chart installs: the chart's values leave it to `helm install --create-namespace`.
   */
  createNamespace?: boolean | undefined;
  image?: string | undefined;
}

export const DEFAULT_AGENT_RESOURCES: AgentResources = { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } };

/** The values for one cluster's install, defaults filled in; `image` given whole (`repo:tag`) overrides both parts. */
export function installHelmValues(input: AgentInstallInput): AgentInstallValues {
  const image = input.image === undefined ? { repository: DEFAULT_AGENT_IMAGE_REPOSITORY, tag: input.version } : splitImage(input.image);
  return {
    controlPlaneUrl: input.controlPlaneUrl,
    clusterId: input.clusterId,
    enrollmentToken: input.enrollmentToken,
    existingSecret: '',
    namespace: { name: input.namespace ?? DEFAULT_AGENT_NAMESPACE, create: input.createNamespace ?? true },
    image: { ...image, pullPolicy: 'IfNotPresent' },
    resources: DEFAULT_AGENT_RESOURCES,
    persistence: { size: '1Gi', storageClassName: '' },
  };
}

function splitImage(image: string): { repository: string; tag: string } {
  const colon = image.lastIndexOf(':');
  // A colon before the last slash is a registry's port, not a tag.
  if (colon === -1 || colon < image.lastIndexOf('/')) return { repository: image, tag: 'latest' };
  return { repository: image.slice(0, colon), tag: image.slice(colon + 1) };
}

/** The labels of every object of the install (the chart adds Helm's own). */
export function installLabels(clusterId: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': AGENT_INSTALL_NAME,
    'app.kubernetes.io/component': 'agent',
    'app.kubernetes.io/part-of': 'slipway',
    'slipway.dev/cluster-id': clusterId,
  };
}

/** The install's objects, in the order they can be applied. */
export function renderAgentInstall(values: AgentInstallValues): KubeObject[] {
  const labels = installLabels(values.clusterId);
  const namespace = values.namespace.name;
  const secretName = values.existingSecret === '' ? `${AGENT_INSTALL_NAME}-enrollment` : values.existingSecret;
  const meta = (name: string) => ({ name, namespace, labels });
  const objects: KubeObject[] = [];
  if (values.namespace.create) objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } });
  objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(AGENT_INSTALL_NAME) });
  objects.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: AGENT_INSTALL_NAME, labels }, rules: policyRulesOf() });
  objects.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: AGENT_INSTALL_NAME, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: AGENT_INSTALL_NAME },
    subjects: [{ kind: 'ServiceAccount', name: AGENT_INSTALL_NAME, namespace }],
  });
  if (values.existingSecret === '') {
    objects.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(secretName),
      type: 'Opaque',
      stringData: { 'control-plane-url': values.controlPlaneUrl, 'enrollment-token': values.enrollmentToken },
    });
  }
  objects.push({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: meta(`${AGENT_INSTALL_NAME}-state`),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: values.persistence.size } },
      ...(values.persistence.storageClassName === '' ? {} : { storageClassName: values.persistence.storageClassName }),
    },
  });
  objects.push(agentDeployment(values, labels, secretName));
  return objects;
}

function agentDeployment(values: AgentInstallValues, labels: Record<string, string>, secretName: string): KubeObject {
  const probe = (path: string, periodSeconds: number) => ({ httpGet: { path, port: 'health' }, periodSeconds, timeoutSeconds: 5, failureThreshold: 3 });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: AGENT_INSTALL_NAME, namespace: values.namespace.name, labels },
    spec: {
      // One agent per cluster, and its claim is ReadWriteOnce: the old pod goes before the new one starts.
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { 'app.kubernetes.io/name': AGENT_INSTALL_NAME, 'app.kubernetes.io/component': 'agent' } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: AGENT_INSTALL_NAME,
          securityContext: { runAsNonRoot: true, runAsUser: AGENT_UID, runAsGroup: AGENT_UID, fsGroup: AGENT_UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'agent',
              image: `${values.image.repository}:${values.image.tag}`,
              imagePullPolicy: values.image.pullPolicy,
              command: ['slipway'],
              args: [
                'agent',
                '--driver',
                'kubernetes',
                '--control-plane',
                '$(SLIPWAY_CONTROL_PLANE)',
                '--enrollment-token-file',
                ENROLLMENT_TOKEN_FILE,
                '--state-dir',
                `${STATE_DIR}/agent`,
                '--health-address',
                `0.0.0.0:${HEALTH_PORT}`,
              ],
              env: [
                { name: 'SLIPWAY_CONTROL_PLANE', valueFrom: { secretKeyRef: { name: secretName, key: 'control-plane-url' } } },
                { name: 'SLIPWAY_DATA_DIR', value: STATE_DIR },
                { name: 'HOME', value: '/tmp' },
              ],
              ports: [{ name: 'health', containerPort: HEALTH_PORT, protocol: 'TCP' }],
              livenessProbe: probe('/healthz', 10),
              readinessProbe: probe('/readyz', 5),
              resources: values.resources,
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'enrollment', mountPath: ENROLLMENT_DIR, readOnly: true },
                { name: 'state', mountPath: STATE_DIR },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'enrollment', secret: { secretName, items: [{ key: 'enrollment-token', path: 'token' }] } },
            { name: 'state', persistentVolumeClaim: { claimName: `${AGENT_INSTALL_NAME}-state` } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

/** The install as one multi-document YAML, what `kubectl apply -f -` takes. */
export function installManifestsYaml(values: AgentInstallValues): string {
  return renderAgentInstall(values)
    .map((object) => stringify(object, { lineWidth: 0 }))
    .join('---\n');
}

/** The chart's values as YAML, what `helm install -f` takes. */
export function installHelmValuesYaml(values: AgentInstallValues): string {
  return stringify(values, { lineWidth: 0 });
}
