import type { TSchema } from 'typebox';
import type { ServiceKind } from '../variables/variables.builtins.ts';

/**
 * The seven service kinds share one table (`services`: common columns + a JSON `settings` column) and one set of
 * generic routes; what differs per kind is described by a ServiceKindDefinition: its paths and operation ids (the
 * reference's where it has them), its request and answer shapes, and how a request body becomes stored settings.
 * The services module registers every definition of SERVICE_KIND_DEFINITIONS; the kinds know nothing of the database.
 */

/** A stored service as a kind sees it when it answers (the services module reads the row). */
export interface StoredService {
  id: string;
  organizationId: string;
  projectId: string;
  environmentId: string;
  kind: ServiceKind;
  name: string;
  description: string | null;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/**
 * What validating a request may ask of other modules, all within the service's organization. Unknown or other
 * organizations' ids answer "false"/missing, and the kind throws notFound naming the field.
 */
export interface ServiceKindContext {
  organizationId: string;
  environmentId: string;
  gitTokenExists(gitTokenId: string): Promise<boolean>;
  containerRegistryExists(registryId: string): Promise<boolean>;
  helmRepositoryExists(repositoryId: string): Promise<boolean>;
  /** The ids of the list that name no labels group of the organization. */
  missingLabelsGroups(ids: string[]): Promise<string[]>;
  missingAnnotationsGroups(ids: string[]): Promise<string[]>;
}

/** What a kind reads from a body: the service's own name and description, and the settings to store for the rest. */
export interface KindWrite {
  name: string;
  description: string | null;
  settings: Record<string, unknown>;
}

/** What other modules need to know of a service's settings, whatever its kind. */
export interface ServiceReferences {
  gitTokenId: string | null;
  containerRegistryId: string | null;
  helmRepositoryId: string | null;
  labelsGroupIds: string[];
  annotationsGroupIds: string[];
  /** The git branch it builds from (PLATFORM_BRANCH_NAME), when it builds from git. */
  branch: string | null;
  /** SPEC.md: a service is reachable from the public internet only when a port is configured public. */
  publiclyReachable: boolean;
}

export interface ServiceKindDefinition {
  kind: ServiceKind;
  /** `/environment/{environmentId}/<collection>` and `/<item>/{<idParam>}`, e.g. application / applicationId. */
  collection: string;
  item: string;
  idParam: 'applicationId' | 'containerId' | 'databaseId' | 'jobId' | 'helmId' | 'terraformId' | 'agenticWorkflowId';
  /** Operation ids: list, create, get, edit, delete (the reference's spelling, e.g. listJobs, createJob, getJob). */
  operations: { list: string; create: string; get: string; edit: string; delete: string };
  /** The noun the action and sub-resource operation ids use: deploy<Noun>, stop<Noun>, get<Noun>Status, … */
  operationNoun: string;
  tags: string[];
  createBody: TSchema;
  editBody: TSchema;
  response: TSchema;
  /** Checks what the schema cannot (references, cron, ports) and returns what to store; throws 4xx AppErrors. */
  fromCreate(body: unknown, context: ServiceKindContext): Promise<KindWrite>;
  /** The same for an edit, given what is stored (the reference's edit bodies are whole objects for most kinds). */
  fromEdit(current: StoredService, body: unknown, context: ServiceKindContext): Promise<KindWrite>;
  toResponse(service: StoredService): Record<string, unknown>;
  references(settings: Record<string, unknown>): ServiceReferences;
}
