import { createHash } from 'node:crypto';

/**
 * How the Kubernetes driver names what it makes (docs/kubernetes.md, "Objects"): one namespace per environment, one
 * set of objects per service named after it, and the labels by which every object is found again — to prune what a
 * deployment no longer holds, to tear a service down, to watch its pods. Names are derived, never stored: the same
 * spec always names the same objects.
 */

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const SLIPWAY = 'slipway';
export const LABEL_ORGANIZATION = 'slipway.dev/organization-id';
export const LABEL_PROJECT = 'slipway.dev/project-id';
export const LABEL_ENVIRONMENT = 'slipway.dev/environment-id';
export const LABEL_SERVICE = 'slipway.dev/service-id';
/** The hash of a workload's variables and files on its pod template: a change rolls the pods. */
export const ANNOTATION_CONFIG_HASH = 'slipway.dev/config-hash';
/** Set on the pod template by a restart: new pods, nothing else changed. */
export const ANNOTATION_RESTARTED_AT = 'slipway.dev/restarted-at';
/**
 * Which deployment of the service ran a Job (an image build, a lifecycle or Terraform run). Long-lived objects do not
 * carry it: a deployment that changes nothing of a service must not rewrite its objects (an environment redeploy
 * after one variable change touches that service's objects only: the server-side apply of the same intent is a no-op).
 */
export const ANNOTATION_DEPLOYMENT = 'slipway.dev/deployment-id';
export const FIELD_MANAGER = 'slipway';

export interface ServiceIdentity {
  id: string;
  name: string;
  organizationId: string;
  projectId: string | undefined;
  environmentId: string;
}

/** The namespace of an environment: `slipway-<environment id>` (47 characters, a valid DNS label). */
export function namespaceOf(environmentId: string): string {
  return `slipway-${environmentId.toLowerCase()}`;
}

/**
 * A service's object name: its name made a DNS-1035 label (lower case letters, digits and dashes, starting with a
 * letter), cut to leave room for 8 characters of its id, so that two names that become the same label stay apart.
 */
export function workloadNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  const label = service.name
    .normalize('NFKD')
    // Accents go (é → e) rather than becoming dashes.
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+/g, '-')
    .slice(0, 40)
    .replace(/-+$/, '');
  const suffix = service.id.replaceAll('-', '').slice(0, 8).toLowerCase();
  return `${label === '' ? 's' : label}-${suffix}`;
}

/** The labels every object of the service carries (pod templates and volume claim templates included). */
export function serviceLabels(service: ServiceIdentity): Record<string, string> {
  return {
    [MANAGED_BY]: SLIPWAY,
    [LABEL_ORGANIZATION]: service.organizationId,
    ...(service.projectId === undefined ? {} : { [LABEL_PROJECT]: service.projectId }),
    [LABEL_ENVIRONMENT]: service.environmentId,
    [LABEL_SERVICE]: service.id,
  };
}

/** What selects the service's pods: its id only, which never changes (a selector is immutable). */
export function podSelector(serviceId: string): Record<string, string> {
  return { [LABEL_SERVICE]: serviceId };
}

/** The label selector (`key=value,…`) of everything Slipway made for one service. */
export function serviceSelector(serviceId: string): string {
  return `${MANAGED_BY}=${SLIPWAY},${LABEL_SERVICE}=${serviceId}`;
}

/** Where the other services of its environment reach a service: its Service's in-cluster DNS name. */
export function clusterHostnameOf(service: Pick<ServiceIdentity, 'id' | 'name' | 'environmentId'>): string {
  return `${workloadNameOf(service)}.${namespaceOf(service.environmentId)}.svc.cluster.local`;
}

/** A short, stable digest of content (variables, files), for annotations and content-addressed names. */
export function contentHash(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}
