import type { Placement } from '../../auth/principal.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readListRevision } from '../../db/db.list-revisions.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import {
  deleteProject,
  findProject,
  findProjectNames,
  findProjectOrganizationId,
  insertProject,
  listProjects,
  updateProject,
  type ProjectListRow,
  type ProjectRow,
} from './projects.repo.ts';

/**
 * What lives inside projects is owned by later modules (environments, services). They report their counts
 * through this port; until an installation has environments every count is zero.
 */
export interface ProjectContentCounts {
  countsByProject(projectIds: string[]): Promise<Map<string, { environments: number; services: number }>>;
  /** The environments alone: what a project's answer shows, without the services count's query. */
  environmentCountsByProject(projectIds: string[]): Promise<Map<string, number>>;
  /** The same for every project of an organization, without naming them. */
  environmentCountsOfOrganization(organizationId: string): Promise<Map<string, number>>;
}

export interface ProjectsDeps {
  db: Kysely<DB>;
  clock: Clock;
  contents: ProjectContentCounts;
  /**
   * Removes what the project holds inside its deletion's transaction (its environments, their workloads handed to
   * the agents). Absent where nothing runs (operator commands).
   */
  removeContents?: (trx: Transaction<DB>, projectId: string) => Promise<RemovedContents>;
}

/** What a removal inside a transaction took away: the services (their teardowns are queued) and what to run after the commit. */
export interface RemovedContents {
  serviceIds: readonly string[];
  afterCommit(): Promise<void>;
}

const NOTHING_REMOVED: RemovedContents = { serviceIds: [], afterCommit: async () => {} };

export interface ProjectInput {
  name: string;
  description?: string | null | undefined;
}

function view(row: ProjectListRow, environments: number) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    // Not nullable in the reference: a project without a description leaves the field out.
    ...(row.description === null ? {} : { description: row.description }),
    associated_environments_count: environments,
    organization: { id: row.organization_id },
  };
}

function nameTakenMessage(name: string): string {
  return `a project named "${name}" already exists in this organization`;
}

export function createProjectsService(deps: ProjectsDeps) {
  const { db, clock } = deps;

  async function environmentsOf(rows: ProjectListRow[]): Promise<(row: ProjectListRow) => number> {
    const counts = await deps.contents.environmentCountsByProject(rows.map((row) => row.id));
    return (row) => counts.get(row.id) ?? 0;
  }

  async function getProject(id: string) {
    const row = await findProject(db, id);
    if (row === undefined) throw notFound(`project ${id} not found`);
    return view(row, (await environmentsOf([row]))(row));
  }

  async function createProject(organizationId: string, input: ProjectInput) {
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const row: ProjectRow = {
      id: newId(),
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(async () => {
      await insertProject(db, row);
    }, nameTakenMessage(name));
    return view(row, 0);
  }

  /**
   * What the project list of the organization is at: the database moves it forward with every write the list shows
   * (a project's row, an environment's arrival, removal or move). Read it before the list.
   */
  function projectListRevision(organizationId: string): Promise<string> {
    return readListRevision(db, organizationId, 'projects');
  }

  async function listOrganizationProjects(organizationId: string) {
    const [rows, counts] = await Promise.all([listProjects(db, organizationId), deps.contents.environmentCountsOfOrganization(organizationId)]);
    return rows.map((row) => view(row, counts.get(row.id) ?? 0));
  }

  async function projectStats(organizationId: string) {
    const rows = await listProjects(db, organizationId);
    const counts = await deps.contents.countsByProject(rows.map((row) => row.id));
    return rows.map((row) => ({
      id: row.id,
      service_total_number: counts.get(row.id)?.services ?? 0,
      environment_total_number: counts.get(row.id)?.environments ?? 0,
    }));
  }

  /** ProjectRequest is a whole replacement: an absent description clears it. */
  async function editProject(id: string, input: ProjectInput) {
    const name = cleanName(input.name);
    await uniqueOrConflict(async () => {
      const updated = await updateProject(db, id, {
        name,
        name_key: nameKey(name),
        description: input.description ?? null,
        updated_at: isoTimestamp(clock),
      });
      if (!updated) throw notFound(`project ${id} not found`);
    }, nameTakenMessage(name));
    return getProject(id);
  }

  async function removeProjectIn(trx: Transaction<DB>, id: string): Promise<RemovedContents> {
    const removed = (await deps.removeContents?.(trx, id)) ?? NOTHING_REMOVED;
    if (!(await deleteProject(trx, id))) throw notFound(`project ${id} not found`);
    return removed;
  }

  /** What runs under the project is torn down with it (environments.removeProjectEnvironments), never left behind. */
  async function removeProject(id: string): Promise<void> {
    const removed = await db.transaction().execute((trx) => removeProjectIn(trx, id));
    await removed.afterCommit();
  }

  /** Inside an organization's deletion: removes each of its projects as removeProject does. */
  async function removeOrganizationProjects(trx: Transaction<DB>, organizationId: string): Promise<RemovedContents> {
    const removed: RemovedContents[] = [];
    for (const project of await listProjects(trx, organizationId)) removed.push(await removeProjectIn(trx, project.id));
    return {
      serviceIds: removed.flatMap((contents) => contents.serviceIds),
      afterCommit: async () => {
        for (const contents of removed) await contents.afterCommit();
      },
    };
  }

  return {
    createProject,
    getProject,
    /** The names of the projects among `ids` that exist, in one read. */
    projectNames: (ids: readonly string[]) => findProjectNames(db, ids),
    listOrganizationProjects,
    projectListRevision,
    projectStats,
    editProject,
    removeProject,
    removeOrganizationProjects,
    /** Where a project addressed without its organization in the path (`/project/{projectId}/…`) lives. */
    async placementOf(projectId: string): Promise<Placement | undefined> {
      const organizationId = await findProjectOrganizationId(db, projectId);
      return organizationId === undefined ? undefined : { organizationId, projectId };
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
