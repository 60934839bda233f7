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

/**
 * The use cases are the organization's, chosen at sign-up and kept on the sign-up record; the status is the
 * caller's own, IN_PROGRESS until they change it. A person who joined later never sees the owner's progress.
 */
function view(own: OnboardingRow | undefined, signUp: OnboardingRow | undefined): OnboardingView {
  return {
    use_cases: own?.use_cases ?? signUp?.use_cases ?? null,
    status: (own?.status as OnboardingStatus | undefined) ?? 'IN_PROGRESS',
  };
}

/**
 * Onboarding records belong to a (organization, user) pair: the person who signed up gets one with the use cases
 * they chose. Reading answers the caller's own status with the organization's use cases (an API token, acting for
 * no one, reads the sign-up record); writing only ever touches the caller's own record.
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
      const signUp = await findFirstOnboarding(db, organizationId);
      if (userId === null) return view(signUp, signUp);
      return view(await findOnboarding(db, organizationId, userId), signUp);
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
      return view(await findOnboarding(db, organizationId, userId), await findFirstOnboarding(db, organizationId));
    },
  };
}

export type OnboardingService = ReturnType<typeof createOnboardingService>;
