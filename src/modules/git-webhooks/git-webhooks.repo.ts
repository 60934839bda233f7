import { isUniqueViolation } from '../../db/db.errors.ts';
import type { GitWebhookDeliveriesTable, GitWebhooksTable, PreviewEnvironmentsTable, Queryable } from '../../db/db.schema.ts';

/** The git-webhooks module's own tables (migrations/0049_git_webhooks.ts), and its one read of the services table. */

export type GitWebhookRow = GitWebhooksTable;
export type DeliveryRow = GitWebhookDeliveriesTable;
export type PreviewEnvironmentRow = PreviewEnvironmentsTable;

export function findWebhook(db: Queryable, serviceId: string): Promise<GitWebhookRow | undefined> {
  return db.selectFrom('git_webhooks').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
}

export async function insertWebhook(db: Queryable, row: GitWebhookRow): Promise<boolean> {
  try {
    await db.insertInto('git_webhooks').values(row).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** A new secret for a webhook whose sealed one no longer opens (the installation's key changed). */
export async function replaceSecret(db: Queryable, serviceId: string, secretEnvelope: string, at: string): Promise<void> {
  await db.updateTable('git_webhooks').set({ secret_envelope: secretEnvelope, updated_at: at }).where('service_id', '=', serviceId).execute();
}

export async function setProviderHookId(db: Queryable, serviceId: string, providerHookId: string, at: string): Promise<void> {
  await db.updateTable('git_webhooks').set({ provider_hook_id: providerHookId, updated_at: at }).where('service_id', '=', serviceId).execute();
}

/** Records a delivery about to be acted on; false when the service already has one with this delivery id (a replay). */
export async function claimDelivery(db: Queryable, row: DeliveryRow): Promise<boolean> {
  try {
    await db.insertInto('git_webhook_deliveries').values(row).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export function findDelivery(db: Queryable, serviceId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('git_webhook_deliveries').selectAll().where('service_id', '=', serviceId).where('delivery_id', '=', deliveryId).executeTakeFirst();
}

export async function settleDelivery(db: Queryable, id: string, outcome: string, message: string): Promise<void> {
  await db.updateTable('git_webhook_deliveries').set({ outcome, message }).where('id', '=', id).execute();
}

/** Forgets a claimed delivery whose action failed, so that the provider's redelivery may act. */
export async function releaseDelivery(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('git_webhook_deliveries').where('id', '=', id).execute();
}

export function findPreview(db: Queryable, blueprintEnvironmentId: string, repository: string, pullRequest: number): Promise<PreviewEnvironmentRow | undefined> {
  return db
    .selectFrom('preview_environments')
    .selectAll()
    .where('blueprint_environment_id', '=', blueprintEnvironmentId)
    .where('repository', '=', repository)
    .where('pull_request', '=', pullRequest)
    .executeTakeFirst();
}

export async function insertPreview(db: Queryable, row: PreviewEnvironmentRow): Promise<void> {
  await db.insertInto('preview_environments').values(row).execute();
}

export async function touchPreview(db: Queryable, environmentId: string, at: string): Promise<void> {
  await db.updateTable('preview_environments').set({ updated_at: at }).where('environment_id', '=', environmentId).execute();
}

export async function deletePreview(db: Queryable, environmentId: string): Promise<void> {
  await db.deleteFrom('preview_environments').where('environment_id', '=', environmentId).execute();
}

/**
 * The ids of an organization's services of these kinds: the image deploys' candidates, whose settings are then read
 * through the services module. A read of the services module's table (never a write): it has no organization-wide
 * listing, and this one is narrowed by an index-friendly organization filter.
 */
export async function serviceIdsOfKinds(db: Queryable, organizationId: string, kinds: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('services').select('id').where('organization_id', '=', organizationId).where('kind', 'in', kinds).orderBy('created_at').execute();
  return rows.map((row) => row.id);
}
