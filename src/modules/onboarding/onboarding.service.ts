import type { Kysely } from 'kysely';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import {
  findFirstOnboarding,
  findOnboarding,
  insertOnboarding,
  upsertOnboardingStatus,
  type OnboardingRow,
} from './onboarding.repo.ts';
import type { OnboardingStatus } from './onboarding.schemas.ts';

export interface OnboardingDeps {
  db: Kysely<DB>;
  clock: Clock;
}

export interface OnboardingView {
  use_cases: string | null;
  status: OnboardingStatus;
}

function view(row: OnboardingRow | undefined): OnboardingView {
  return { use_cases: row?.use_cases ?? null, status: (row?.status as OnboardingStatus | undefined) ?? 'IN_PROGRESS' };
}

/**
 * Onboarding records belong to a (organization, user) pair: the person who signed up gets one with the use cases
 * they chose. Reading answers the caller's own record, or else the organization's sign-up record; writing only
 * ever touches the caller's own record.
 */
export function createOnboardingService(deps: OnboardingDeps) {
  const { db, clock } = deps;

  return {
    async startOnboarding(trx: Queryable, organizationId: string, userId: string, useCases: string | null): Promise<void> {
      const now = isoTimestamp(clock);
      await insertOnboarding(trx, {
        organization_id: organizationId,
        user_id: userId,
        use_cases: useCases,
        status: 'IN_PROGRESS',
        created_at: now,
        updated_at: now,
      });
    },

    async getOnboarding(organizationId: string, userId: string | null): Promise<OnboardingView> {
      const own = userId === null ? undefined : await findOnboarding(db, organizationId, userId);
      return view(own ?? (await findFirstOnboarding(db, organizationId)));
    },

    async updateOwnOnboarding(organizationId: string, userId: string, status: OnboardingStatus): Promise<OnboardingView> {
      const now = isoTimestamp(clock);
      await upsertOnboardingStatus(db, {
        organization_id: organizationId,
        user_id: userId,
        use_cases: null,
        status,
        created_at: now,
        updated_at: now,
      });
      return view(await findOnboarding(db, organizationId, userId));
    },
  };
}

export type OnboardingService = ReturnType<typeof createOnboardingService>;
