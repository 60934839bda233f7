import type { TSchema } from 'typebox';
import type { DatabaseType, ServiceKind } from '../variables/variables.builtins.ts';
import { agenticWorkflowKind } from './services.kind-agentic-workflow.ts';
import { applicationKind } from './services.kind-application.ts';
import { containerKind } from './services.kind-container.ts';
import { databaseKind } from './services.kind-database.ts';
import { helmKind } from './services.kind-helm.ts';
import { jobKind } from './services.kind-job.ts';
import { terraformKind } from './services.kind-terraform.ts';

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

/**
 * The records a service names that its answer embeds in full, as the reference's answers do: labels and annotations
 * groups (OrganizationLabelsGroupResponse, OrganizationAnnotationsGroupResponse), container registries
 * (ContainerRegistryProviderDetailsResponse) and Helm repositories (HelmSourceRepositoryResponse). They are their own
 * modules' to read: services.crud.ts fetches those its answers name through the lookups port. A record missing from a
 * map no longer exists.
 */
export interface LinkedRecords {
  labelsGroups: ReadonlyMap<string, LinkedLabelsGroup>;
  annotationsGroups: ReadonlyMap<string, LinkedAnnotationsGroup>;
  containerRegistries: ReadonlyMap<string, LinkedContainerRegistry>;
  helmRepositories: ReadonlyMap<string, LinkedHelmRepository>;
}

export interface LinkedLabelsGroup {
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  labels: { key: string; value: string; propagate_to_cloud_provider: boolean }[];
}

export interface LinkedAnnotationsGroup {
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  annotations: { key: string; value: string }[];
  scopes: string[];
}

export interface LinkedContainerRegistry {
  id: string;
  name: string;
  url: string;
  kind: string;
}

export interface LinkedHelmRepository {
  id: string;
  name: string;
  url: string;
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
  /** The ports other services of its environment reach it on (TCP), public or not: its `internal_port`s. */
  internalPorts: number[];
}

/**
 * What a DATABASE's settings say about the server to run (the services module adds the generated credentials and
 * the host names to build the built-in variables; the engine runs it). Other kinds have none.
 */
export interface DatabaseSummary {
  type: DatabaseType;
  version: string;
  mode: 'CONTAINER' | 'MANAGED';
  accessibility: 'PRIVATE' | 'PUBLIC';
  /** The port the server listens on inside the environment (the type's usual one). */
  port: number;
  /** The database created inside the server, named after the service. */
  dbName: string;
}

export interface ServiceKindDefinition {
  kind: ServiceKind;
  /** `/environment/{environmentId}/<collection>` and `/<item>/{<idParam>}`, e.g. application / applicationId. */
  collection: string;
  item: string;
  idParam: 'applicationId' | 'containerId' | 'databaseId' | 'jobId' | 'helmId' | 'terraformId' | 'agenticWorkflowId';
  /** Where a request carries the git source the kind builds from (a JSON pointer); kinds never built from git have none. */
  gitSourceField?: string;
  /** Operation ids: list, create, get, edit, delete (the reference's spelling, e.g. listJobs, createJob, getJob). */
  operations: { list: string; create: string; get: string; edit: string; delete: string };
  /** The noun the action and sub-resource operation ids use: deploy<Noun>, stop<Noun>, get<Noun>Status, … */
  operationNoun: string;
  tags: string[];
  /**
   * The API documentation's prose about the kind: how it is named ("an application", "the application",
   * "applications"), what such a service is (`what`), and the 400s and 404s its create and edit checks answer
   * (`checks`), in words.
   */
  prose: { aService: string; theService: string; services: string; what: string; checks: string };
  createBody: TSchema;
  editBody: TSchema;
  response: TSchema;
  /** `{ results: [response…] }`, named as the reference names it (ApplicationResponseList, …). */
  listResponse: TSchema;
  /** Checks what the schema cannot (references, cron, ports) and returns what to store; throws 4xx AppErrors. */
  fromCreate(body: unknown, context: ServiceKindContext): Promise<KindWrite>;
  /**
   * The same for an edit, given what is stored. The fields the reference requires in an edit body are required;
   * an optional field left out keeps its stored value (edit schemas carry no defaults, so nothing is reset).
   */
  fromEdit(current: StoredService, body: unknown, context: ServiceKindContext): Promise<KindWrite>;
  toResponse(service: StoredService, linked: LinkedRecords): Record<string, unknown>;
  references(settings: Record<string, unknown>): ServiceReferences;
  /** Only the DATABASE kind has one. */
  database?(settings: Record<string, unknown>, serviceName: string): DatabaseSummary;
}

/**
 * Every kind the services module serves, in the order the API documentation lists them. Request bodies reach
 * fromCreate/fromEdit already validated against createBody/editBody by the route (defaults applied, unknown fields
 * refused): the kinds check only what a schema cannot.
 */
export const SERVICE_KIND_DEFINITIONS: readonly ServiceKindDefinition[] = [
  applicationKind,
  containerKind,
  databaseKind,
  jobKind,
  helmKind,
  terraformKind,
  agenticWorkflowKind,
];

export function kindDefinition(kind: ServiceKind): ServiceKindDefinition {
  const definition = SERVICE_KIND_DEFINITIONS.find((candidate) => candidate.kind === kind);
  if (definition === undefined) throw new Error(`no definition for service kind ${kind}`);
  return definition;
}
