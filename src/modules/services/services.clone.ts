import type { Transaction } from 'kysely';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceClaims } from './services.addresses.ts';
import { nameTaken, refuseInvalidName } from './services.crud.ts';
import type { ServiceRecords } from './services.records.ts';
import { referenceRows } from './services.references.ts';
import { insertService, replaceServiceReferences, type ServiceRow } from './services.repo.ts';
import type { ServicesDeps } from './services.service.ts';

/**
 * Cloning a service (the reference's clone<Kind> operations, docs/service-clone-uninstall.md): a new service of the
 * same kind, under a new name, in an environment of the same organization (the source's own or another, of any of
 * its projects), with the source's configuration and none of its history. In one transaction it gets:
 *
 *   - the settings as stored, advanced settings and the labels and annotations groups they name included, with
 *     their references to other modules' things (git token, registry, Helm repository, groups);
 *   - the service's own variables and secrets (the variables module copies its rows; secrets are sealed again for
 *     the new rows, never answered);
 *   - its deployment restrictions (the deployment-restrictions module copies its rows).
 *
 * Never copied: custom domains (a domain routes to one service), deployments and their logs, the running state (a
 * clone is READY, never deployed), a database's credentials (a clone is another server: it gets its own) and the
 * public hostname (claimed for the clone as for any new service).
 */

/** The reference's CloneServiceRequest. */
export interface CloneServiceBody {
  name: string;
  environment_id: string;
}

/** The other modules' parts of a clone, each writing its own tables inside the clone's transaction. */
export interface ServiceCloneCopiers {
  copyServiceVariables(trx: Transaction<DB>, fromServiceId: string, to: { serviceId: string; environmentId: string; projectId: string }): Promise<void>;
  copyDeploymentRestrictions(trx: Transaction<DB>, fromServiceId: string, toServiceId: string): Promise<void>;
}

/** Kinds with a clone operation in the reference (an agentic workflow has none). */
export const CLONEABLE_KINDS = ['APPLICATION', 'CONTAINER', 'DATABASE', 'JOB', 'HELM', 'TERRAFORM'] as const satisfies readonly ServiceKind[];
export type CloneableKind = (typeof CLONEABLE_KINDS)[number];

export function createServiceClone(
  deps: Pick<ServicesDeps, 'db' | 'clock' | 'environments' | 'clone' | 'stateChanges'>,
  records: Pick<ServiceRecords, 'definitionOf' | 'requireServiceOfKind' | 'databaseSummaryOf'>,
  claims: Pick<ServiceClaims, 'sealNewCredentials' | 'claimFreeHostnameLabel'>,
  answer: (kind: ServiceKind, serviceId: string) => Promise<Record<string, unknown>>,
) {
  const { db, clock } = deps;

  /**
   * Clones the service into `environment_id` as `name`: 404 for an environment this organization does not have (an
   * id of another organization's says no more than an unknown one), 409 for a name taken there — two clones racing
   * for one name are told apart by the unique index, so exactly one gets the 409. Answers the clone as its get does.
   */
  async function cloneService(kind: CloneableKind, serviceId: string, body: CloneServiceBody): Promise<Record<string, unknown>> {
    const definition = records.definitionOf(kind);
    const source = await records.requireServiceOfKind(kind, serviceId);
    const environment = await deps.environments.findEnvironmentSummary(body.environment_id);
    if (environment === undefined || environment.organizationId !== source.organization_id) {
      throw notFound(`environment ${body.environment_id} not found`);
    }
    const name = cleanName(body.name);
    refuseInvalidName(name);
    const settings = readJson<Record<string, unknown>>(source.settings);
    const now = isoTimestamp(clock);
    const row: ServiceRow = {
      id: newId(),
      organization_id: environment.organizationId,
      project_id: environment.projectId,
      environment_id: environment.id,
      kind,
      name,
      name_key: nameKey(name),
      description: source.description,
      settings: writeJson(settings),
      credentials_envelope: null,
      hostname_label: null,
      created_at: now,
      updated_at: now,
    };
    const database = records.databaseSummaryOf(kind, settings, name);
    if (database !== undefined) row.credentials_envelope = claims.sealNewCredentials(row, database.type);
    try {
      await uniqueOrConflict(
        () =>
          db.transaction().execute(async (trx) => {
            await insertService(trx, row);
            await replaceServiceReferences(trx, row.id, referenceRows(row.id, definition.references(settings)));
            await deps.stateChanges?.environmentChanged(trx, environment.id);
            await deps.clone.copyServiceVariables(trx, source.id, { serviceId: row.id, environmentId: environment.id, projectId: environment.projectId });
            await deps.clone.copyDeploymentRestrictions(trx, source.id, row.id);
          }),
        nameTaken(name),
      );
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`environment ${environment.id} no longer exists`);
      throw error;
    }
    await claims.claimFreeHostnameLabel(row.id);
    return answer(kind, row.id);
  }

  return { cloneService };
}
