import type { Kysely } from 'kysely';
import { readJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import type { GitTokenAssociatedService } from '../git-tokens/git-tokens.service.ts';
import type { GroupAssociatedItem } from '../labels-groups/labels-groups.service.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceReferences } from './services.kinds.ts';
import {
  countServicesByProject,
  countServicesReferencing,
  listServicesReferencing,
  listServicesReferencingWithPlacement,
  type ReferenceKind,
  type ServiceReferenceRow,
} from './services.repo.ts';
import type { ServicesDeps } from './services.service.ts';

/**
 * What services use of other modules' things (a part of the services service, assembled in services.service.ts):
 * the reference rows a write stores from its kind's references, and the usage ports of the modules that own those
 * things — git tokens, container registries, Helm repositories, labels and annotations groups — with the count of
 * services per project.
 */

/** The rows `service_references` holds for a service's settings: each thing once. */
export function referenceRows(serviceId: string, references: ServiceReferences): ServiceReferenceRow[] {
  const rows: ServiceReferenceRow[] = [];
  const add = (kind: ReferenceKind, id: string | null) => {
    if (id !== null && !rows.some((row) => row.kind === kind && row.reference_id === id)) rows.push({ service_id: serviceId, kind, reference_id: id });
  };
  add('GIT_TOKEN', references.gitTokenId);
  add('CONTAINER_REGISTRY', references.containerRegistryId);
  add('HELM_REPOSITORY', references.helmRepositoryId);
  for (const id of references.labelsGroupIds) add('LABELS_GROUP', id);
  for (const id of references.annotationsGroupIds) add('ANNOTATIONS_GROUP', id);
  return rows;
}

/**
 * The git-token answer's service type: jobs are told apart by their schedule (cron or lifecycle events); containers
 * and databases never build from git.
 */
function gitServiceType(kind: ServiceKind, settings: Record<string, unknown>): GitTokenAssociatedService['service_type'] | undefined {
  switch (kind) {
    case 'APPLICATION':
    case 'HELM':
    case 'TERRAFORM':
    case 'AGENTIC_WORKFLOW':
      return kind;
    case 'JOB': {
      const schedule = settings['schedule'];
      const cron = typeof schedule === 'object' && schedule !== null && (schedule as Record<string, unknown>)['cronjob'] !== undefined;
      return cron ? 'CRON' : 'LIFECYCLE';
    }
    default:
      return undefined;
  }
}

export function createServiceReferences(deps: Pick<ServicesDeps, 'db'>) {
  const { db } = deps;

  async function itemsReferencing(organizationId: string, kind: ReferenceKind, id: string): Promise<GroupAssociatedItem[]> {
    return (await listServicesReferencing(db, organizationId, kind, id)).map((row) => ({ item_id: row.id, item_name: row.name, item_type: row.kind }));
  }

  return {
    /** The git tokens module's usage port (getGitTokenAssociatedServices, and its 409 on deleting a used token). */
    async servicesUsingGitToken(organizationId: string, gitTokenId: string): Promise<GitTokenAssociatedService[]> {
      const rows = await listServicesReferencingWithPlacement(db, organizationId, 'GIT_TOKEN', gitTokenId);
      const out: GitTokenAssociatedService[] = [];
      for (const row of rows) {
        const type = gitServiceType(row.kind as ServiceKind, readJson<Record<string, unknown>>(row.settings));
        if (type === undefined) continue;
        out.push({
          project_id: row.project_id,
          project_name: row.project_name,
          environment_id: row.environment_id,
          environment_name: row.environment_name,
          service_id: row.id,
          service_name: row.name,
          service_type: type,
        });
      }
      return out;
    },

    countsByGitToken: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'GIT_TOKEN', ids),
    countsByRegistry: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'CONTAINER_REGISTRY', ids),
    countsByRepository: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'HELM_REPOSITORY', ids),
    servicesUsingLabelsGroup: (organizationId: string, groupId: string) => itemsReferencing(organizationId, 'LABELS_GROUP', groupId),
    servicesUsingAnnotationsGroup: (organizationId: string, groupId: string) => itemsReferencing(organizationId, 'ANNOTATIONS_GROUP', groupId),
  };
}

/** The projects module's content port, services side: services per project (getOrganizationProjectStats). */
export function serviceCountsOf(db: Kysely<DB>) {
  return { countsByProject: (projectIds: string[]) => countServicesByProject(db, projectIds) };
}
