import { Type, type TObject } from 'typebox';
import { BaseFields, ListOf, Uuid } from '../../protocol/wire.ts';
import type { DeploymentRestrictionKind } from './deployment-restrictions.kinds.ts';

/**
 * Wire shapes: the reference's <Kind>DeploymentRestrictionRequest / <Kind>DeploymentRestriction(Response)(List), one
 * set per kind that has restrictions (the same fields; the reference names each kind's schemas apart, and so does
 * Slipway, so the published document keeps its names).
 */

export const DEPLOYMENT_RESTRICTION_MODES = ['MATCH', 'EXCLUDE'] as const;
export const DEPLOYMENT_RESTRICTION_TYPES = ['PATH'] as const;

/** The reference's schema names of each kind's request, answer and list. */
const SCHEMA_NAMES: Record<DeploymentRestrictionKind, { request: string; response: string; list: string }> = {
  APPLICATION: { request: 'ApplicationDeploymentRestrictionRequest', response: 'ApplicationDeploymentRestriction', list: 'ApplicationDeploymentRestrictionResponseList' },
  JOB: { request: 'JobDeploymentRestrictionRequest', response: 'JobDeploymentRestrictionResponse', list: 'JobDeploymentRestrictionResponseList' },
  HELM: { request: 'HelmDeploymentRestrictionRequest', response: 'HelmDeploymentRestrictionResponse', list: 'HelmDeploymentRestrictionResponseList' },
  TERRAFORM: { request: 'TerraformDeploymentRestrictionRequest', response: 'TerraformDeploymentRestrictionResponse', list: 'TerraformDeploymentRestrictionResponseList' },
};

/** The kind's three shapes. */
export function deploymentRestrictionSchemas(kind: DeploymentRestrictionKind) {
  const names = SCHEMA_NAMES[kind];
  const request = Type.Object(
    {
      mode: Type.Enum(DEPLOYMENT_RESTRICTION_MODES),
      type: Type.Enum(DEPLOYMENT_RESTRICTION_TYPES),
      /** A path glob relative to the repository root (deployment-restrictions.rules.ts). */
      value: Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\x00-\\x1f\\x7f]+$' }),
    },
    { $id: names.request, additionalProperties: false },
  );
  const response = Type.Object(
    {
      ...BaseFields,
      mode: Type.Enum(DEPLOYMENT_RESTRICTION_MODES),
      type: Type.Enum(DEPLOYMENT_RESTRICTION_TYPES),
      value: Type.String(),
    },
    { $id: names.response },
  );
  return { request, response, list: ListOf(response, names.list) };
}

/** The path parameters of a restriction under its service (`applicationId`, `helmId`, …). */
export function restrictionParams(idParam: string): TObject {
  return Type.Object({ [idParam]: Uuid, deploymentRestrictionId: Uuid }, { additionalProperties: false });
}
