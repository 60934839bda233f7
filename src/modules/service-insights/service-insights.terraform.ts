import { Type, type Static } from 'typebox';
import { Uuid } from '../../protocol/wire.ts';

/**
 * The resources a Terraform service manages (getTerraformResources). Terraform's state is where they are recorded, and
 * Slipway keeps none: on Kubernetes the state is the backend's Secret `tfstate-default-<service id>` in the
 * environment's namespace (kubernetes-terraform.ts), or the module's own backend, and no agent reports it back yet. So
 * the list holds what the control plane has recorded of the last apply — nothing today — and is empty rather than
 * guessed (docs/service-insights.md "Terraform resources").
 */

export const TerraformResource = Type.Object(
  {
    id: Uuid,
    resource_type: Type.String(),
    name: Type.String(),
    address: Type.String(),
    provider: Type.String(),
    mode: Type.Enum(['managed', 'data']),
    attributes: Type.Record(Type.String(), Type.Unknown()),
    extracted_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'TerraformResourceResponse' },
);
export const TerraformResourcesResponse = Type.Object({ results: Type.Array(TerraformResource) }, { $id: 'TerraformResourcesResponse' });

export interface TerraformResourcesDeps {
  /** 404 unless the id names a Terraform service (the authorizer already hid other organizations' ids). */
  requireTerraform(terraformId: string): Promise<unknown>;
}

export function createTerraformResources(deps: TerraformResourcesDeps) {
  return {
    async listTerraformResources(terraformId: string): Promise<Array<Static<typeof TerraformResource>>> {
      await deps.requireTerraform(terraformId);
      return [];
    },
  };
}

export type TerraformResources = ReturnType<typeof createTerraformResources>;
