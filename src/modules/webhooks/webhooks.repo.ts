import type { Selectable, Updateable } from 'kysely';
import type { Queryable, WebhookDeliveriesTable, WebhookMessagesTable, WebhooksTable } from '../../db/db.schema.ts';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookMessageRow = Selectable<WebhookMessagesTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

export async function insertWebhook(db: Queryable, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export function findWebhook(db: Queryable, organizationId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function findWebhookById(db: Queryable, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listWebhooks(db: Queryable, organizationId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

export function listEnabledWebhooks(db: Queryable, organizationId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('organization_id', '=', organizationId).where('enabled', '=', 1).orderBy('id').execute();
}

export async function updateWebhook(db: Queryable, organizationId: string, id: string, changes: Updateable<WebhooksTable>): Promise<boolean> {
  const result = await db.updateTable('webhooks').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteWebhook(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Clears the count of failed attempts; true when there were some (the webhook was failing until now). */
export async function resetFailures(db: Queryable, id: string): Promise<boolean> {
  const result = await db.updateTable('webhooks').set({ consecutive_failures: 0 }).where('id', '=', id).where('consecutive_failures', '>', 0).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Counts one more failed attempt and answers the new count (one statement, so concurrent attempts all count). */
export async function countFailure(db: Queryable, id: string): Promise<number> {
  await db
    .updateTable('webhooks')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .where('id', '=', id)
    .execute();
  const row = await db.selectFrom('webhooks').select('consecutive_failures').where('id', '=', id).executeTakeFirst();
  return row?.consecutive_failures ?? 0;
}

/** Disables an enabled webhook; false when it was already disabled (another attempt got there first). */
export async function disableWebhook(db: Queryable, id: string, reason: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ enabled: 0, disabled_reason: reason, disabled_at: at, updated_at: at })
    .where('id', '=', id)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertMessage(db: Queryable, row: WebhookMessageRow): Promise<void> {
  await db.insertInto('webhook_messages').values(row).execute();
}

export function findMessage(db: Queryable, webhookId: string, id: string): Promise<WebhookMessageRow | undefined> {
  return db.selectFrom('webhook_messages').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
}

export async function insertDelivery(db: Queryable, row: WebhookDeliveryRow): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

export function findDelivery(db: Queryable, webhookId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
}

/** One page of the log, newest first: the attempts older than `beforeId` (all when undefined). */
export function listDeliveriesPage(db: Queryable, webhookId: string, limit: number, beforeId: string | undefined): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** The newest attempts of the given event types, each with the message it sent (listWebhookEvent). */
export function listDeliveriesWithMessages(db: Queryable, webhookId: string, eventTypes: readonly string[], limit: number) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
    .selectAll('webhook_deliveries')
    .select('webhook_messages.body as message_body')
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .where('webhook_deliveries.event_type', 'in', [...eventTypes])
    .orderBy('webhook_deliveries.id', 'desc')
    .limit(limit)
    .execute();
}
