import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AlertFiringsTable, AlertReceiversTable, AlertRulesTable, Queryable } from '../../db/db.schema.ts';

export type ReceiverRow = Selectable<AlertReceiversTable>;
export type RuleRow = Selectable<AlertRulesTable>;
export type FiringRow = Selectable<AlertFiringsTable>;

/** Firings a rule's representation shows, newest first. */
export const FIRINGS_SHOWN = 20;

export function listReceivers(db: Queryable, organizationId: string): Promise<ReceiverRow[]> {
  return db.selectFrom('alert_receivers').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export function findReceiver(db: Queryable, organizationId: string, id: string): Promise<ReceiverRow | undefined> {
  return db.selectFrom('alert_receivers').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** The organization a receiver belongs to, for the authorizer (its id is the only thing in the path). */
export async function receiverOrganization(db: Queryable, id: string): Promise<string | undefined> {
  return (await db.selectFrom('alert_receivers').select('organization_id').where('id', '=', id).executeTakeFirst())?.organization_id;
}

export async function insertReceiver(db: Queryable, row: Insertable<AlertReceiversTable>): Promise<void> {
  await db.insertInto('alert_receivers').values(row).execute();
}

export async function updateReceiver(db: Queryable, organizationId: string, id: string, changes: Updateable<AlertReceiversTable>): Promise<boolean> {
  const result = await db.updateTable('alert_receivers').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteReceiver(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  // Its place on rules goes with it (the join table's foreign key cascades).
  const result = await db.deleteFrom('alert_receivers').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Which of `ids` are receivers of the organization. */
export async function existingReceiverIds(db: Queryable, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('alert_receivers').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

export function listRules(db: Queryable, organizationId: string): Promise<RuleRow[]> {
  return db.selectFrom('alert_rules').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export function listAllRuleIds(db: Queryable): Promise<{ id: string }[]> {
  return db.selectFrom('alert_rules').select('id').orderBy('id').execute();
}

export function findRule(db: Queryable, organizationId: string, id: string): Promise<RuleRow | undefined> {
  return db.selectFrom('alert_rules').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function findRuleById(db: Queryable, id: string): Promise<RuleRow | undefined> {
  return db.selectFrom('alert_rules').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function ruleOrganization(db: Queryable, id: string): Promise<string | undefined> {
  return (await db.selectFrom('alert_rules').select('organization_id').where('id', '=', id).executeTakeFirst())?.organization_id;
}

export async function insertRule(db: Queryable, row: Insertable<AlertRulesTable>, receiverIds: readonly string[]): Promise<void> {
  await db.insertInto('alert_rules').values(row).execute();
  await setRuleReceivers(db, row.id, receiverIds);
}

export async function setRuleReceivers(db: Queryable, ruleId: string, receiverIds: readonly string[]): Promise<void> {
  await db.deleteFrom('alert_rule_receivers').where('rule_id', '=', ruleId).execute();
  const unique = [...new Set(receiverIds)];
  if (unique.length > 0) await db.insertInto('alert_rule_receivers').values(unique.map((receiverId) => ({ rule_id: ruleId, receiver_id: receiverId }))).execute();
}

export async function updateRule(db: Queryable, organizationId: string, id: string, changes: Updateable<AlertRulesTable>): Promise<boolean> {
  const result = await db
    .updateTable('alert_rules')
    .set((eb) => ({ ...changes, evaluation_seq: eb('evaluation_seq', '+', 1) }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteRule(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('alert_rules').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The receivers of each rule, in one query. */
export async function receiverIdsOfRules(db: Queryable, ruleIds: readonly string[]): Promise<Map<string, string[]>> {
  const byRule = new Map<string, string[]>(ruleIds.map((id) => [id, []]));
  if (ruleIds.length === 0) return byRule;
  const rows = await db.selectFrom('alert_rule_receivers').select(['rule_id', 'receiver_id']).where('rule_id', 'in', ruleIds).orderBy('receiver_id').execute();
  for (const row of rows) byRule.get(row.rule_id)?.push(row.receiver_id);
  return byRule;
}

export function receiversOfRule(db: Queryable, ruleId: string): Promise<ReceiverRow[]> {
  return db
    .selectFrom('alert_rule_receivers')
    .innerJoin('alert_receivers', 'alert_receivers.id', 'alert_rule_receivers.receiver_id')
    .selectAll('alert_receivers')
    .where('alert_rule_receivers.rule_id', '=', ruleId)
    .orderBy('alert_receivers.id')
    .execute();
}

/** The newest firings of each rule (at most FIRINGS_SHOWN each), newest first. */
export async function firingsOfRules(db: Queryable, ruleIds: readonly string[]): Promise<Map<string, FiringRow[]>> {
  const byRule = new Map<string, FiringRow[]>(ruleIds.map((id) => [id, []]));
  if (ruleIds.length === 0) return byRule;
  // Ranked per rule in the database, so a long history is not read to show its newest rows.
  const ranked = db
    .selectFrom('alert_firings')
    .selectAll()
    .select((eb) => eb.fn.agg<number>('row_number').over((over) => over.partitionBy('rule_id').orderBy('fired_at', 'desc').orderBy('id', 'desc')).as('rank'))
    .where('rule_id', 'in', ruleIds)
    .as('ranked');
  const rows = await db.selectFrom(ranked).selectAll().where('rank', '<=', FIRINGS_SHOWN).orderBy('fired_at', 'desc').orderBy('id', 'desc').execute();
  for (const { rank: _rank, ...row } of rows) byRule.get(row.rule_id)?.push(row);
  return byRule;
}

export function findOpenFiring(db: Queryable, ruleId: string): Promise<FiringRow | undefined> {
  return db.selectFrom('alert_firings').selectAll().where('rule_id', '=', ruleId).where('resolved_at', 'is', null).orderBy('fired_at', 'desc').executeTakeFirst();
}

export async function insertFiring(db: Queryable, row: Insertable<AlertFiringsTable>): Promise<void> {
  await db.insertInto('alert_firings').values(row).execute();
}

export async function updateFiring(db: Queryable, id: string, changes: Updateable<AlertFiringsTable>): Promise<void> {
  await db.updateTable('alert_firings').set(changes).where('id', '=', id).execute();
}

/**
 * Writes an evaluation's outcome over the row it read: true for the one evaluation that moved `evaluation_seq` from
 * `readSeq`, false when another evaluation (another worker, a direct call) or an edit came first.
 */
export async function claimEvaluation(db: Queryable, id: string, readSeq: number, changes: Updateable<AlertRulesTable>): Promise<boolean> {
  const result = await db
    .updateTable('alert_rules')
    .set({ ...changes, evaluation_seq: readSeq + 1 })
    .where('id', '=', id)
    .where('evaluation_seq', '=', readSeq)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Sets the state an evaluation's notification left, unless a later evaluation or edit has moved the rule since. */
export async function settleState(db: Queryable, id: string, seq: number, state: string): Promise<void> {
  await db.updateTable('alert_rules').set({ state }).where('id', '=', id).where('evaluation_seq', '=', seq).execute();
}
