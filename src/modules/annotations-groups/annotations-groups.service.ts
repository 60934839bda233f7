import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import { keyProblems, unknownGroupsError, type GroupAssociatedItem, type GroupUsage } from '../labels-groups/labels-groups.service.ts';
import {
  deleteAnnotationsGroup,
  findAnnotationsGroup,
  findAnnotationsGroups,
  insertAnnotationsGroup,
  listAnnotationsGroups,
  updateAnnotationsGroup,
  type AnnotationsGroupRow,
} from './annotations-groups.repo.ts';
import { ANNOTATIONS_TOTAL_BYTES, type AnnotationsGroupScope } from './annotations-groups.schemas.ts';

export interface Annotation {
  key: string;
  value: string;
}

export interface AnnotationsGroupInput {
  name: string;
  annotations: Annotation[];
  scopes: AnnotationsGroupScope[];
}

export interface AnnotationsGroupsDeps {
  db: Kysely<DB>;
  clock: Clock;
  usage: GroupUsage;
}

function nameTakenMessage(name: string): string {
  return `an annotations group named "${name}" already exists in this organization`;
}

/** Bytes Kubernetes counts against the 256 KiB limit: every key and value. */
function totalBytes(annotations: readonly Annotation[]): number {
  return annotations.reduce((sum, entry) => sum + Buffer.byteLength(entry.key, 'utf8') + Buffer.byteLength(entry.value, 'utf8'), 0);
}

/**
 * Annotations groups (issue 10): named sets of Kubernetes annotations and the kinds of objects they go on (scopes).
 * Keys are qualified names; values are free text; all of a group's annotations together stay within Kubernetes'
 * 256 KiB per object.
 */
export function createAnnotationsGroupsService(deps: AnnotationsGroupsDeps) {
  const { db, clock, usage } = deps;

  function view(row: AnnotationsGroupRow) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      name: row.name,
      annotations: readJson<Annotation[]>(row.annotations),
      scopes: readJson<AnnotationsGroupScope[]>(row.scopes),
    };
  }

  function validAnnotations(input: AnnotationsGroupInput): Annotation[] {
    const problems = keyProblems(input.annotations, '/annotations');
    if (problems.length > 0) throw badRequest('invalid annotations', problems);
    const annotations = input.annotations.map((entry) => ({ key: entry.key, value: entry.value }));
    const size = totalBytes(annotations);
    if (size > ANNOTATIONS_TOTAL_BYTES) {
      throw badRequest(`the annotations total ${size} bytes; Kubernetes allows ${ANNOTATIONS_TOTAL_BYTES} per object`, [{ field: '/annotations', message: 'too large in total' }]);
    }
    return annotations;
  }

  async function requireGroup(organizationId: string, groupId: string): Promise<AnnotationsGroupRow> {
    const row = await findAnnotationsGroup(db, organizationId, groupId);
    if (row === undefined) throw notFound(`annotations group ${groupId} not found`);
    return row;
  }

  async function listOrganizationAnnotationsGroup(organizationId: string) {
    return (await listAnnotationsGroups(db, organizationId)).map(view);
  }

  async function getOrganizationAnnotationsGroup(organizationId: string, groupId: string) {
    return view(await requireGroup(organizationId, groupId));
  }

  async function createOrganizationAnnotationsGroup(organizationId: string, input: AnnotationsGroupInput) {
    const annotations = validAnnotations(input);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const row: AnnotationsGroupRow = {
      id: newId(),
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      annotations: writeJson(annotations),
      scopes: writeJson(input.scopes),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertAnnotationsGroup(db, row), nameTakenMessage(name));
    return view(row);
  }

  async function editOrganizationAnnotationsGroup(organizationId: string, groupId: string, input: AnnotationsGroupInput) {
    const row = await requireGroup(organizationId, groupId);
    const annotations = validAnnotations(input);
    const name = cleanName(input.name);
    const changes = { name, name_key: nameKey(name), annotations: writeJson(annotations), scopes: writeJson(input.scopes), updated_at: isoTimestamp(clock) };
    const updated = await uniqueOrConflict(() => updateAnnotationsGroup(db, organizationId, groupId, changes), nameTakenMessage(name));
    if (!updated) throw notFound(`annotations group ${groupId} not found`);
    return view({ ...row, ...changes });
  }

  /** A group still attached is not deleted: the annotations would silently vanish from what it is attached to. */
  async function deleteOrganizationAnnotationsGroup(organizationId: string, groupId: string): Promise<void> {
    await requireGroup(organizationId, groupId);
    const items = await usage.itemsUsing(organizationId, groupId);
    if (items.length > 0) {
      const names = items.map((item) => `${item.item_type} "${item.item_name}"`).join(', ');
      throw conflict(`annotations group ${groupId} is attached to ${items.length} item(s): ${names}; detach it first`);
    }
    if (!(await deleteAnnotationsGroup(db, organizationId, groupId))) throw notFound(`annotations group ${groupId} not found`);
  }

  async function associatedItems(organizationId: string, groupId: string): Promise<GroupAssociatedItem[]> {
    await requireGroup(organizationId, groupId);
    return usage.itemsUsing(organizationId, groupId);
  }

  /** For modules that attach groups (services' `annotations_groups`): the groups by id, in order; 400 per unknown id. */
  async function resolveAnnotationsGroups(organizationId: string, ids: readonly string[], pointer = '/annotations_groups') {
    const rows = new Map((await findAnnotationsGroups(db, organizationId, ids)).map((row) => [row.id, row]));
    const missing = ids.map((id, index) => ({ id, index })).filter((entry) => !rows.has(entry.id));
    if (missing.length > 0) throw unknownGroupsError('annotations group', missing, pointer);
    return ids.map((id) => view(rows.get(id) as AnnotationsGroupRow));
  }

  /** The annotations the groups put on objects of one scope (a key in several groups: the last group wins). */
  async function annotationsFor(organizationId: string, ids: readonly string[], scope: AnnotationsGroupScope, pointer = '/annotations_groups'): Promise<Annotation[]> {
    const merged = new Map<string, Annotation>();
    for (const group of await resolveAnnotationsGroups(organizationId, ids, pointer)) {
      if (group.scopes.includes(scope)) for (const entry of group.annotations) merged.set(entry.key, entry);
    }
    return [...merged.values()];
  }

  return {
    listOrganizationAnnotationsGroup,
    getOrganizationAnnotationsGroup,
    createOrganizationAnnotationsGroup,
    editOrganizationAnnotationsGroup,
    deleteOrganizationAnnotationsGroup,
    associatedItems,
    resolveAnnotationsGroups,
    annotationsFor,
  };
}

export type AnnotationsGroupsService = ReturnType<typeof createAnnotationsGroupsService>;
