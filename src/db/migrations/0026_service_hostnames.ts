import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/**
 * The public hostname of every service, `<service>-<environment>-<8 characters from its id>.<SLIPWAY_APPS_DOMAIN>`
 * (docs/services.md, "Public hostname"): chosen by the control plane when the service is created and kept for its
 * life, renames included, since custom domains point their CNAME at it. Only the label before the apps domain is
 * stored, so changing SLIPWAY_APPS_DOMAIN moves every service at once; the unique index makes a label one service's
 * in the whole installation, whichever organization asks (a colliding candidate is refused and the next one tried).
 *
 * Services that exist already get their label here, in creation order. Their old hostname,
 * `<service>-<environment>.<SLIPWAY_APPS_DOMAIN>`, stops routing once the agent next asks for its routes (at its first
 * heartbeat after the upgrade): nothing else could keep another organization from taking it over.
 *
 * The computation is written out here rather than imported, as a migration is history: what the services module
 * computes may change later, the labels this step gave may not.
 */
const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

function dnsLabel(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
}

function labelOf(serviceId: string, serviceName: string, environmentName: string, attempt: number): string {
  const digest = createHash('sha256').update(attempt === 0 ? serviceId : `${serviceId}:${attempt}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 5)) bits = (bits << 8n) | BigInt(byte);
  let suffix = '';
  for (let index = 7; index >= 0; index -= 1) suffix += SUFFIX_ALPHABET[Number((bits >> BigInt(index * 5)) & 31n)];
  const prefix = dnsLabel(`${dnsLabel(serviceName)}-${dnsLabel(environmentName)}`).slice(0, 54).replace(/-+$/, '');
  return `${prefix === '' ? 'service' : prefix}-${suffix}`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').addColumn('hostname_label', 'varchar(63)').execute();
  const rows = await sql<{ id: string; name: string; environment_name: string }>`
    select services.id as id, services.name as name, environments.name as environment_name
    from services join environments on environments.id = services.environment_id
    order by services.created_at, services.id`.execute(db);
  const taken = new Set<string>();
  for (const row of rows.rows) {
    let attempt = 0;
    while (taken.has(labelOf(row.id, row.name, row.environment_name, attempt))) attempt += 1;
    const label = labelOf(row.id, row.name, row.environment_name, attempt);
    taken.add(label);
    await sql`update services set hostname_label = ${label} where id = ${row.id}`.execute(db);
  }
  await db.schema.createIndex('services_hostname_label').unique().on('services').column('hostname_label').execute();
}
