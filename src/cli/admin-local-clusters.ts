import { userInfo } from 'node:os';
import { systemClock } from '../lib/clock.ts';
import { createLocalClusterGrants, type LocalClusterGrants } from '../modules/clusters/clusters.local-grants.ts';
import { withOperatorDatabase, type OperatorDatabaseConfig } from './admin-database.ts';

/**
 * `slipway admin local-clusters allow|deny|list`: which organizations may create LOCAL clusters and deploy onto them
 * (docs/clusters.md, "LOCAL clusters"). A LOCAL cluster's workloads run on the control plane's own host, so this is
 * the installation operator's decision, not a tenant's: like `admin bootstrap` the commands work on the database
 * directly, and each prints what changed.
 */

type OperatorConfig = OperatorDatabaseConfig;

function withGrants<T>(config: OperatorConfig, run: (grants: LocalClusterGrants) => Promise<T>): Promise<T> {
  return withOperatorDatabase(config, (database) => run(createLocalClusterGrants({ db: database.db, clock: systemClock })));
}

/** Who gave a grant, as the grant records it: the command, and the account that ran it when the system can say. */
function grantedBy(command: string): string {
  try {
    return `${command} (by ${userInfo().username})`;
  } catch {
    return command;
  }
}

function clusters(count: number): string {
  return `${count} LOCAL cluster${count === 1 ? '' : 's'}`;
}

const STOPS_NOTHING =
  'deny refuses their future deployments and stops nothing: what runs keeps running until it is stopped or deleted ' +
  '(stop or delete those environments or services to end it).';

export async function allowOrganization(config: OperatorConfig, organization: string, options: { json?: boolean | undefined }): Promise<string> {
  const { grant, changed } = await withGrants(config, (grants) => grants.allow(organization, grantedBy('slipway admin local-clusters allow')));
  if (options.json === true) return `${JSON.stringify({ changed, ...grant })}\n`;
  const who = `organization "${grant.organization.name}" (${grant.organization.id})`;
  if (!changed) return `${who} was already allowed (since ${grant.granted_at}, by ${grant.granted_by}); nothing changed.\n`;
  return (
    `allowed: ${who} may now create LOCAL clusters and deploy onto them.\n` +
    'Their workloads run as processes on the host of this Slipway installation.\n'
  );
}

export async function denyOrganization(config: OperatorConfig, organization: string, options: { json?: boolean | undefined }): Promise<string> {
  const denied = await withGrants(config, (grants) => grants.deny(organization));
  if (options.json === true) return `${JSON.stringify(denied)}\n`;
  const who = `organization "${denied.organization.name}" (${denied.organization.id})`;
  const running = denied.local_clusters === 0 ? '' : `It keeps its ${clusters(denied.local_clusters)}: ${STOPS_NOTHING}\n`;
  if (!denied.changed) return `${who} was not allowed; nothing changed.\n${running}`;
  return `denied: ${who} may no longer create LOCAL clusters or deploy onto them.\n${running}`;
}

export async function listGrants(config: OperatorConfig, options: { json?: boolean | undefined }): Promise<string> {
  const listed = await withGrants(config, (grants) => grants.list());
  if (options.json === true) return `${JSON.stringify(listed)}\n`;
  const lines =
    listed.allowed.length === 0
      ? ['no organization may create or deploy onto LOCAL clusters']
      : [
          'allowed to create and deploy onto LOCAL clusters:',
          ...listed.allowed.map(
            (grant) => `  ${grant.organization.id}  ${grant.organization.name}  since ${grant.granted_at} by ${grant.granted_by}; ${clusters(grant.local_clusters)}`,
          ),
        ];
  if (listed.not_allowed_with_local_clusters.length > 0) {
    lines.push(
      'holding LOCAL clusters without a grant (their deployments are refused; what runs keeps running):',
      ...listed.not_allowed_with_local_clusters.map((entry) => `  ${entry.organization.id}  ${entry.organization.name}; ${clusters(entry.local_clusters)}`),
    );
  }
  return `${lines.join('\n')}\n`;
}
