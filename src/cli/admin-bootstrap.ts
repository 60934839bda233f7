import { createServices } from '../app.services.ts';
import { grantsOfRole } from '../auth/permissions.ts';
import { systemClock } from '../lib/clock.ts';
import { createLocalClusterGrants } from '../modules/clusters/clusters.local-grants.ts';
import { withOperatorDatabase, type OperatorDatabaseConfig } from './admin-database.ts';

export interface BootstrapResult {
  user_id: string;
  organization_id: string;
  api_token: string;
}

/**
 * The first-administrator step of a new installation (like other self-hosted systems, it works on the database
 * directly, since no one can call the API yet): a user for the e-mail, an organization they own, and an ADMIN
 * API token whose value exists only in the returned result. The user is claimed later by the first sign-in
 * whose verified e-mail matches. The organization is the operator's own, so it may create LOCAL clusters and deploy
 * onto them (docs/clusters.md, "LOCAL clusters"); any other organization needs `slipway admin local-clusters allow`.
 */
export async function bootstrapInstallation(
  config: OperatorDatabaseConfig,
  input: { email: string; organization: string; name?: string | undefined },
): Promise<BootstrapResult> {
  return withOperatorDatabase(config, async (database) => {
    const services = createServices(database);
    const user = await services.users.userForEmail(input.email, input.name ?? null);
    const organization = await services.organizations.createOrganization(user.id, { name: input.organization });
    await createLocalClusterGrants({ db: database.db, clock: systemClock }).allow(organization.id, 'slipway admin bootstrap');
    const token = await services.apiTokens.createApiToken(
      { kind: 'user', userId: user.id, email: user.email, name: user.name },
      { organizationId: organization.id, grants: grantsOfRole('OWNER'), roleName: 'OWNER' },
      { name: 'bootstrap', description: 'Created by slipway admin bootstrap', scope: 'ADMIN' },
    );
    return { user_id: user.id, organization_id: organization.id, api_token: token.token };
  });
}
