import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../src/app.services.ts';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { newId } from '../src/lib/ids.ts';
import { insertCluster } from '../src/modules/clusters/clusters.repo.ts';
import { runSlipway } from './support/slipway-process.ts';


/**
 * `slipway admin local-clusters allow|deny|list` and `slipway admin bootstrap`'s grant, run as the real `slipway`
 * executable on an installation's SQLite database: what each command changes in the grant table and what it prints.
 * What a grant allows or refuses through the API is clusters.test.ts's.
 */
describe('slipway admin local-clusters', () => {
  let dataDir: string;
  let database: Database;
  let acmeId: string;
  let globexId: string;

  const slipway = (...args: string[]) => runSlipway(args, { SLIPWAY_DATA_DIR: dataDir, SLIPWAY_LOG_LEVEL: 'silent' });

  async function grantOf(organizationId: string) {
    return database.db.selectFrom('local_cluster_grants').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'slipway-local-clusters-cli-'));
    const bootstrap = await slipway('admin', 'bootstrap', '--email', 'operator@example.com', '--organization', 'Acme', '--json');
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    acmeId = (JSON.parse(bootstrap.stdout) as { organization_id: string }).organization_id;
    database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'slipway.db') });
    // A tenant's organization, as sign-up makes one: no grant.
    const services = createServices(database);
    const user = await services.users.userForEmail('tenant@example.com', null);
    globexId = (await services.organizations.createOrganization(user.id, { name: 'Globex' })).id;
  }, 60_000);

  afterAll(async () => {
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("allows the bootstrap's organization and no other", async () => {
    expect(await grantOf(acmeId)).toMatchObject({ granted_by: 'slipway admin bootstrap' });
    expect(await grantOf(globexId)).toBeUndefined();
    const listed = await slipway('admin', 'local-clusters', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      allowed: [{ organization: { id: acmeId, name: 'Acme' }, granted_by: 'slipway admin bootstrap', granted_at: expect.any(String), local_clusters: 0 }],
      not_allowed_with_local_clusters: [],
    });
  }, 60_000);

  it('allows by name or id once, denies saying that what runs keeps running, and lists who holds LOCAL clusters without a grant', async () => {
    const allowed = await slipway('admin', 'local-clusters', 'allow', '--organization', 'globex');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toBe(
      `allowed: organization "Globex" (${globexId}) may now create LOCAL clusters and deploy onto them.\n` +
        'Their workloads run as processes on the host of this Slipway installation.\n',
    );
    expect((await grantOf(globexId))?.granted_by).toMatch(/^slipway admin local-clusters allow/);
    const again = await slipway('admin', 'local-clusters', 'allow', '--organization', globexId);
    expect(again.stdout).toMatch(new RegExp(`^organization "Globex" \\(${globexId}\\) was already allowed \\(since .*\\); nothing changed\\.\\n$`));

    // Globex created a LOCAL cluster while allowed.
    const now = new Date().toISOString();
    await insertCluster(database.db, {
      id: newId(), organization_id: globexId, name: 'here', name_key: 'here', description: null, region: 'local', cloud_provider: 'ON_PREMISE',
      kubernetes: 'LOCAL', instance_type: null, min_running_nodes: 1, max_running_nodes: 1, disk_size: 40, credentials_id: null, dns_provider: null,
      build_provider: null, settings: '{}', version: '1.31', status: 'DEPLOYED', status_message: null, deployed_revision: 1, last_execution_id: null,
      last_deployment_date: now, created_at: now, updated_at: now,
    });
    const denied = await slipway('admin', 'local-clusters', 'deny', '--organization', globexId);
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toBe(
      `denied: organization "Globex" (${globexId}) may no longer create LOCAL clusters or deploy onto them.\n` +
        'It keeps its 1 LOCAL cluster: deny refuses their future deployments and stops nothing: what runs keeps running until it is stopped or deleted ' +
        '(stop or delete those environments or services to end it).\n',
    );
    expect(await grantOf(globexId)).toBeUndefined();
    expect((await slipway('admin', 'local-clusters', 'deny', '--organization', 'Globex')).stdout).toMatch(/^organization "Globex" .* was not allowed; nothing changed\.\n/);

    const listed = await slipway('admin', 'local-clusters', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^allowed to create and deploy onto LOCAL clusters:\\n  ${acmeId}  Acme  since \\S+ by slipway admin bootstrap; 0 LOCAL clusters\\n` +
          `holding LOCAL clusters without a grant \\(their deployments are refused; what runs keeps running\\):\\n  ${globexId}  Globex; 1 LOCAL cluster\\n$`,
      ),
    );
  }, 120_000);

  it('refuses an organization it cannot find, and a command without one, with status 1', async () => {
    const unknown = await slipway('admin', 'local-clusters', 'deny', '--organization', 'Initech');
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `slipway: using the database ${path.join(dataDir, 'slipway.db')}\nslipway: no organization has the id or name "Initech"\n`,
    });
    const missing = await slipway('admin', 'local-clusters', 'allow');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '--organization <id|name>' not specified");
  }, 60_000);
});
