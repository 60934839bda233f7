import type { components } from '../../../src/cli/api-types.generated.ts';

/**
 * The service kinds the console manages, with the API's path noun of each (`/application/{id}/deploy`, …) and the
 * key of their statuses in `/environment/{id}/statuses`. Helm, Terraform and agentic workflows are listed by the API
 * too; the console shows them once it has screens for them.
 */
export type ServiceKindName = 'application' | 'container' | 'database' | 'job';

export interface ServiceKind {
  name: ServiceKindName;
  /** The API's service_type. */
  type: 'APPLICATION' | 'CONTAINER' | 'DATABASE' | 'JOB';
  label: string;
  /** The key in the environment's statuses answer. */
  statusKey: 'applications' | 'containers' | 'databases' | 'jobs';
  /** Whether it has variables of its own (databases have none: their built-ins are the environment's). */
  hasVariables: boolean;
  /** Whether it answers links (a URL). */
  hasLinks: boolean;
  description: string;
}

export const KINDS: readonly ServiceKind[] = [
  { name: 'application', type: 'APPLICATION', label: 'Application', statusKey: 'applications', hasVariables: true, hasLinks: true, description: 'Built from a git repository, run with its ports and health check.' },
  { name: 'container', type: 'CONTAINER', label: 'Container', statusKey: 'containers', hasVariables: true, hasLinks: true, description: 'An image from a container registry, run as it is.' },
  { name: 'database', type: 'DATABASE', label: 'Database', statusKey: 'databases', hasVariables: false, hasLinks: false, description: 'PostgreSQL, MySQL, MongoDB or Redis, with its credentials as variables.' },
  { name: 'job', type: 'JOB', label: 'Job', statusKey: 'jobs', hasVariables: true, hasLinks: false, description: 'A command on a schedule (cron) or at the environment’s start, stop and deletion (lifecycle).' },
];

export function kindNamed(name: string): ServiceKind | undefined {
  return KINDS.find((kind) => kind.name === name);
}

export type Application = components['schemas']['Application'];
export type ContainerService = components['schemas']['ContainerResponse'];
export type DatabaseService = components['schemas']['Database'];
export type JobService = components['schemas']['JobResponse'];
export type AnyService = Application | ContainerService | DatabaseService | JobService;
