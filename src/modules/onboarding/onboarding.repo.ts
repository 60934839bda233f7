import type { Selectable } from 'kysely';
import type { OnboardingTable, Queryable } from '../../db/db.schema.ts';

export type OnboardingRow = Selectable<OnboardingTable>;

export async function insertOnboarding(db: Queryable, row: OnboardingRow): Promise<void> {
  await db.insertInto('onboarding').values(row).execute();
}

export function findOnboarding(db: Queryable, organizationId: string, userId: string): Promise<OnboardingRow | undefined> {
  return db
    .selectFrom('onboarding')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The record of whoever signed the organization up: the first one written for it. */
export function findFirstOnboarding(db: Queryable, organizationId: string): Promise<OnboardingRow | undefined> {
  return db
    .selectFrom('onboarding')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .executeTakeFirst();
}

/** Sets the status of one user's record, creating it if that user has none; only that row is touched. */
export async function upsertOnboardingStatus(db: Queryable, row: OnboardingRow): Promise<void> {
  await db
    .insertInto('onboarding')
    .values(row)
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doUpdateSet({ status: row.status, updated_at: row.updated_at }))
    .execute();
}
