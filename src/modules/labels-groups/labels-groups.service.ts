import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import {
  deleteLabelsGroup,
  findLabelsGroup,
  findLabelsGroups,
  insertLabelsGroup,
  listLabelsGroups,
  updateLabelsGroup,
  type LabelsGroupRow,
} from './labels-groups.repo.ts';

/** Kubernetes' rules for metadata keys and label values (k8s.io/apimachinery validation). */
const NAME_PART = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const MAX_PREFIX = 253;
const MAX_NAME = 63;

/** Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or undefined when it is one. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a key has at most one "/" (prefix/name)';
  const name = parts[parts.length - 1] ?? '';
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') return 'the prefix before "/" must not be empty';
    if (prefix.length > MAX_PREFIX) return `the prefix must be at most ${MAX_PREFIX} characters`;
    if (!prefix.split('.').every((label) => label.length <= 63 && DNS_LABEL.test(label))) {
      return 'the prefix must be a DNS subdomain: lower-case alphanumerics and "-", dot-separated, each part starting and ending alphanumeric';
    }
  }
  if (name === '') return 'the name must not be empty';
  if (name.length > MAX_NAME) return `the name must be at most ${MAX_NAME} characters`;
  if (!NAME_PART.test(name)) return 'the name must be alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  return undefined;
}

/** Why `value` is not a Kubernetes label value (empty, or ≤ 63 of [A-Za-z0-9._-] starting and ending alphanumeric). */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > MAX_NAME) return `a label value must be at most ${MAX_NAME} characters`;
  if (!NAME_PART.test(value)) return 'a label value must be alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  return undefined;
}

/** The key problems of a list of key/value pairs: invalid keys and keys given twice. */
export function keyProblems(entries: readonly { key: string }[], pointer: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const problem = qualifiedNameProblem(entry.key);
    if (problem !== undefined) problems.push({ field: `${pointer}/${index}/key`, message: problem });
    else if (seen.has(entry.key)) problems.push({ field: `${pointer}/${index}/key`, message: `key "${entry.key}" is given twice` });
    seen.add(entry.key);
  });
  return problems;
}

export interface Label {
  key: string;
  value: string;
  propagate_to_cloud_provider: boolean;
}

export interface LabelsGroupInput {
  name: string;
  labels: { key: string; value: string; propagate_to_cloud_provider?: boolean | undefined }[];
}

/** A cluster or service a group is attached to (the associatedItems answer). */
export interface GroupAssociatedItem {
  item_id: string;
  item_name: string;
  item_type: string;
}

/**
 * Clusters and services are owned by other modules; they report what a group is attached to through this port.
 * Until they do, nothing is attached to any group.
 */
export interface GroupUsage {
  itemsUsing(organizationId: string, groupId: string): Promise<GroupAssociatedItem[]>;
}

export const NO_GROUP_USAGE: GroupUsage = { itemsUsing: async () => [] };

export interface LabelsGroupsDeps {
  db: Kysely<DB>;
  clock: Clock;
  usage: GroupUsage;
}

function nameTakenMessage(name: string): string {
  return `a labels group named "${name}" already exists in this organization`;
}

/** 400 naming each group id that is not a labels group of the organization. */
export function unknownGroupsError(kind: string, missing: readonly { id: string; index: number }[], pointer: string) {
  return badRequest(
    `${kind} ${missing.map((entry) => entry.id).join(', ')} not found in this organization`,
    missing.map((entry) => ({ field: `${pointer}/${entry.index}/id`, message: `unknown ${kind}` })),
  );
}

/**
 * Labels groups (issue 10): named sets of Kubernetes labels an organization attaches to clusters and services.
 * Keys and values are checked as Kubernetes checks them, so what drivers apply is never refused by the cluster.
 */
export function createLabelsGroupsService(deps: LabelsGroupsDeps) {
  const { db, clock, usage } = deps;

  function view(row: LabelsGroupRow) {
    return { id: row.id, created_at: row.created_at, updated_at: row.updated_at, name: row.name, labels: readJson<Label[]>(row.labels) };
  }

  function validLabels(input: LabelsGroupInput): Label[] {
    const problems = keyProblems(input.labels, '/labels');
    input.labels.forEach((label, index) => {
      const problem = labelValueProblem(label.value);
      if (problem !== undefined) problems.push({ field: `/labels/${index}/value`, message: problem });
    });
    if (problems.length > 0) throw badRequest('invalid labels', problems);
    return input.labels.map((label) => ({ key: label.key, value: label.value, propagate_to_cloud_provider: label.propagate_to_cloud_provider ?? false }));
  }

  async function requireGroup(organizationId: string, groupId: string): Promise<LabelsGroupRow> {
    const row = await findLabelsGroup(db, organizationId, groupId);
    if (row === undefined) throw notFound(`labels group ${groupId} not found`);
    return row;
  }

  async function listOrganizationLabelsGroup(organizationId: string) {
    return (await listLabelsGroups(db, organizationId)).map(view);
  }

  async function getOrganizationLabelsGroup(organizationId: string, groupId: string) {
    return view(await requireGroup(organizationId, groupId));
  }

  async function createOrganizationLabelsGroup(organizationId: string, input: LabelsGroupInput) {
    const labels = validLabels(input);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const row: LabelsGroupRow = {
      id: newId(),
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      labels: writeJson(labels),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertLabelsGroup(db, row), nameTakenMessage(name));
    return view(row);
  }

  async function editOrganizationLabelsGroup(organizationId: string, groupId: string, input: LabelsGroupInput) {
    const row = await requireGroup(organizationId, groupId);
    const labels = validLabels(input);
    const name = cleanName(input.name);
    const changes = { name, name_key: nameKey(name), labels: writeJson(labels), updated_at: isoTimestamp(clock) };
    const updated = await uniqueOrConflict(() => updateLabelsGroup(db, organizationId, groupId, changes), nameTakenMessage(name));
    if (!updated) throw notFound(`labels group ${groupId} not found`);
    return view({ ...row, ...changes });
  }

  /** A group still attached is not deleted: the labels would silently vanish from what it is attached to. */
  async function deleteOrganizationLabelsGroup(organizationId: string, groupId: string): Promise<void> {
    await requireGroup(organizationId, groupId);
    const items = await usage.itemsUsing(organizationId, groupId);
    if (items.length > 0) {
      const names = items.map((item) => `${item.item_type} "${item.item_name}"`).join(', ');
      throw conflict(`labels group ${groupId} is attached to ${items.length} item(s): ${names}; detach it first`);
    }
    if (!(await deleteLabelsGroup(db, organizationId, groupId))) throw notFound(`labels group ${groupId} not found`);
  }

  async function associatedItems(organizationId: string, groupId: string): Promise<GroupAssociatedItem[]> {
    await requireGroup(organizationId, groupId);
    return usage.itemsUsing(organizationId, groupId);
  }

  /**
   * For modules that attach groups (clusters' `labels_groups`, services): the groups named by `ids` in the
   * organization, in the order given; 400 naming `<pointer>/<index>/id` for each unknown id.
   */
  async function resolveLabelsGroups(organizationId: string, ids: readonly string[], pointer = '/labels_groups') {
    const rows = new Map((await findLabelsGroups(db, organizationId, ids)).map((row) => [row.id, row]));
    const missing = ids.map((id, index) => ({ id, index })).filter((entry) => !rows.has(entry.id));
    if (missing.length > 0) throw unknownGroupsError('labels group', missing, pointer);
    return ids.map((id) => view(rows.get(id) as LabelsGroupRow));
  }

  /** The labels the groups add up to, as drivers apply them: for a key in several groups, the last group wins. */
  async function labelsOf(organizationId: string, ids: readonly string[], pointer = '/labels_groups'): Promise<Label[]> {
    const merged = new Map<string, Label>();
    for (const group of await resolveLabelsGroups(organizationId, ids, pointer)) for (const label of group.labels) merged.set(label.key, label);
    return [...merged.values()];
  }

  return {
    listOrganizationLabelsGroup,
    getOrganizationLabelsGroup,
    createOrganizationLabelsGroup,
    editOrganizationLabelsGroup,
    deleteOrganizationLabelsGroup,
    associatedItems,
    resolveLabelsGroups,
    labelsOf,
  };
}

export type LabelsGroupsService = ReturnType<typeof createLabelsGroupsService>;
