import { Type } from 'typebox';
import { Nullable } from '../../protocol/wire.ts';

export const ONBOARDING_STATUSES = ['IN_PROGRESS', 'DISMISSED', 'COMPLETED'] as const;
export type OnboardingStatus = (typeof ONBOARDING_STATUSES)[number];

const OnboardingStatus = Type.Enum(ONBOARDING_STATUSES, { $id: 'OrganizationOnboardingStatusEnum' });

export const OrganizationOnboardingResponse = Type.Object(
  { use_cases: Nullable(Type.String()), status: OnboardingStatus },
  { $id: 'OrganizationOnboardingResponse' },
);

export const OrganizationOnboardingPatchRequest = Type.Object(
  { status: OnboardingStatus },
  { $id: 'OrganizationOnboardingPatchRequest', additionalProperties: false, examples: [{ status: 'COMPLETED' }] },
);
