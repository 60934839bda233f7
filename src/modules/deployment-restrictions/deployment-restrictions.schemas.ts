import { Type } from 'typebox';
import { BaseFields, ListOf, Uuid } from '../../protocol/wire.ts';

/** Wire shapes: the reference's ApplicationDeploymentRestrictionRequest / ApplicationDeploymentRestriction(List). */

export const DEPLOYMENT_RESTRICTION_MODES = ['MATCH', 'EXCLUDE'] as const;
export const DEPLOYMENT_RESTRICTION_TYPES = ['PATH'] as const;

export const ApplicationDeploymentRestrictionRequest = Type.Object(
  {
    mode: Type.Enum(DEPLOYMENT_RESTRICTION_MODES),
    type: Type.Enum(DEPLOYMENT_RESTRICTION_TYPES),
    /** A path glob relative to the repository root (deployment-restrictions.rules.ts). */
    value: Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\x00-\\x1f\\x7f]+$' }),
  },
  { $id: 'ApplicationDeploymentRestrictionRequest', additionalProperties: false },
);

export const ApplicationDeploymentRestriction = Type.Object(
  {
    ...BaseFields,
    mode: Type.Enum(DEPLOYMENT_RESTRICTION_MODES),
    type: Type.Enum(DEPLOYMENT_RESTRICTION_TYPES),
    value: Type.String(),
  },
  { $id: 'ApplicationDeploymentRestriction' },
);
export const ApplicationDeploymentRestrictionResponseList = ListOf(ApplicationDeploymentRestriction, 'ApplicationDeploymentRestrictionResponseList');

export const ApplicationParams = Type.Object({ applicationId: Uuid }, { additionalProperties: false });
export const DeploymentRestrictionParams = Type.Object({ applicationId: Uuid, deploymentRestrictionId: Uuid }, { additionalProperties: false });
