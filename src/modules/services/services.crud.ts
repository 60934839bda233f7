import { advancedSettingsOf, advancedSettingsOverrides, type AdvancedSettingsKind } from './services.advanced-settings.ts';
import type { Transaction } from 'kysely';
import type { Placement } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { ServiceClaims } from './services.addresses.ts';
import { atField } from './services.git-sources.ts';
import { SERVICE_NAME_PATTERN, storedGitSourceOf } from './services.kind-fields.ts';
import type { KindWrite, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';
import { storedOf, type ServiceRecords } from './services.records.ts';
import { referenceRows } from './services.references.ts';
import { deleteServiceRow, findServiceRow, insertService, listServicesOfEnvironment, replaceServiceReferences, updateService, type ServiceRow } from './services.repo.ts';
import type { ServiceEnvironment, ServicesDeps } from './services.service.ts';

/**
 * Creating, reading, editing and removing services of every kind (a part of the services service, assembled in
 * services.service.ts): the kind's definition turns the request into settings, this part checks the name, writes the
 * row with its references and, for a database, its generated credentials, and gives the service its addresses.
 */

/**
 * Checked again here, whatever a kind's schema says: a name becomes part of hostnames and of built-in variable
 * names, and without underscores two names of one environment never give one built-in name (they differ in more
 * than case, and the unique index is on the case-folded name).
 */
const SERVICE_NAME = new RegExp(SERVICE_NAME_PATTERN);

export function refuseInvalidName(name: string): void {
  if (!SERVICE_NAME.test(name)) {
    throw badRequest(`invalid service name "${name}"`, [
      { field: '/name', message: 'letters, digits and dashes (not first or last), 1 to 63 characters: it becomes part of hostnames and variable names' },
    ]);
  }
}

export function nameTaken(name: string): string {
  return `a service named "${name}" already exists in this environment`;
}

export function createServiceCrud(
  deps: Pick<ServicesDeps, 'db' | 'clock' | 'environments' | 'lookups' | 'variables' | 'runtime' | 'gitUrls' | 'stateChanges'>,
  records: ServiceRecords,
  claims: Pick<ServiceClaims, 'sealNewCredentials' | 'claimFreeHostnameLabel'>,
) {
  const { db, clock } = deps;
  const { definitionOf, requireServiceOfKind, databaseSummaryOf } = records;

  function contextFor(organizationId: string, environmentId: string): ServiceKindContext {
    const { lookups } = deps;
    return {
      organizationId,
      environmentId,
      gitTokenExists: (id) => lookups.gitTokenExists(organizationId, id),
      containerRegistryExists: (id) => lookups.containerRegistryExists(organizationId, id),
      helmRepositoryExists: (id) => lookups.helmRepositoryExists(organizationId, id),
      missingLabelsGroups: (ids) => lookups.missingLabelsGroups(organizationId, ids),
      missingAnnotationsGroups: (ids) => lookups.missingAnnotationsGroups(organizationId, ids),
    };
  }

  async function requireEnvironment(environmentId: string): Promise<ServiceEnvironment> {
    const environment = await deps.environments.findEnvironmentSummary(environmentId);
    if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
    return environment;
  }

  /**
   * The answers of services of one organization: each kind's view of its settings, with the groups, registries and
   * Helm repositories they name read from their modules once for all of them (the reference's answers embed them).
   */
  async function responsesOf(rows: readonly ServiceRow[]): Promise<Record<string, unknown>[]> {
    const [first] = rows;
    if (first === undefined) return [];
    const services = rows.map(storedOf);
    const references = services.map((service) => definitionOf(service.kind).references(service.settings));
    const linked = await deps.lookups.linkedRecords(first.organization_id, {
      labelsGroupIds: references.flatMap((reference) => reference.labelsGroupIds),
      annotationsGroupIds: references.flatMap((reference) => reference.annotationsGroupIds),
      containerRegistryIds: references.flatMap((reference) => (reference.containerRegistryId === null ? [] : [reference.containerRegistryId])),
      helmRepositoryIds: references.flatMap((reference) => (reference.helmRepositoryId === null ? [] : [reference.helmRepositoryId])),
    });
    return services.map((service) => definitionOf(service.kind).toResponse(service, linked));
  }

  async function responseOf(row: ServiceRow): Promise<Record<string, unknown>> {
    const [response] = await responsesOf([row]);
    if (response === undefined) throw new Error(`no answer for service ${row.id}`);
    return response;
  }

  function cleanWrite(write: KindWrite): KindWrite {
    const name = cleanName(write.name);
    refuseInvalidName(name);
    return { ...write, name };
  }

  /**
   * This installation's git URL rules (SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS, SLIPWAY_GIT_ALLOWED_HOSTS) on the git source a
   * write stores: the git access's own check, the one every fetch of the build starts with, so a URL the build would
   * refuse is refused when it is written (a 400 naming the field). An edit that keeps the stored URL is not checked
   * again: a setting changed since must not block unrelated edits.
   */
  function refuseForbiddenGitUrl(definition: ServiceKindDefinition, write: KindWrite, stored: Record<string, unknown> | undefined): void {
    const source = storedGitSourceOf(write.settings);
    if (definition.gitSourceField === undefined || source === null) return;
    if (stored !== undefined && storedGitSourceOf(stored)?.url === source.url) return;
    try {
      deps.gitUrls.checkUrl(source.url);
    } catch (error) {
      throw atField(error, `${definition.gitSourceField}/url`);
    }
  }

  /** Inserts or rewrites a service's settings and references in one transaction; a taken name is a 409. */
  async function writeOrRefuse(name: string, write: (trx: Transaction<DB>) => Promise<void>): Promise<void> {
    try {
      await uniqueOrConflict(() => db.transaction().execute(write), nameTaken(name));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound('the environment of this service no longer exists');
      throw error;
    }
  }

  /** `toUpdate`: only the deployed ones whose settings or variables changed since (the reference's list parameter). */
  async function listServices(kind: ServiceKind, environmentId: string, options: { toUpdate?: boolean | undefined } = {}) {
    await requireEnvironment(environmentId);
    const rows = await listServicesOfEnvironment(db, environmentId, kind);
    if (options.toUpdate !== true) return responsesOf(rows);
    const outOfDate = await deps.runtime.outOfDate(rows.map((row) => row.id));
    return responsesOf(rows.filter((row) => outOfDate.has(row.id)));
  }

  /**
   * Every service of the environment, of every kind, each as its kind's listing shows it: the kinds in `kindOrder`,
   * by name within a kind. One read of the services and one of what they link to, whatever the number of kinds.
   */
  async function listAllServices(environmentId: string, kindOrder: readonly ServiceKind[]) {
    await requireEnvironment(environmentId);
    const rank = new Map(kindOrder.map((kind, index) => [kind, index]));
    const rows = (await listServicesOfEnvironment(db, environmentId))
      .filter((row) => rank.has(row.kind as ServiceKind))
      // Array sort is stable: the name order of the read stays within each kind.
      .sort((a, b) => (rank.get(a.kind as ServiceKind) ?? 0) - (rank.get(b.kind as ServiceKind) ?? 0));
    return responsesOf(rows);
  }

  async function createService(kind: ServiceKind, environmentId: string, body: unknown) {
    const definition = definitionOf(kind);
    const environment = await requireEnvironment(environmentId);
    const write = cleanWrite(await definition.fromCreate(body, contextFor(environment.organizationId, environment.id)));
    refuseForbiddenGitUrl(definition, write, undefined);
    const now = isoTimestamp(clock);
    const id = newId();
    const row: ServiceRow = {
      id,
      organization_id: environment.organizationId,
      project_id: environment.projectId,
      environment_id: environment.id,
      kind,
      name: write.name,
      name_key: nameKey(write.name),
      description: write.description,
      settings: writeJson(write.settings),
      credentials_envelope: null,
      hostname_label: null,
      created_at: now,
      updated_at: now,
    };
    const database = databaseSummaryOf(kind, write.settings, write.name);
    if (database !== undefined) row.credentials_envelope = claims.sealNewCredentials(row, database.type);
    await writeOrRefuse(write.name, async (trx) => {
      await insertService(trx, row);
      await replaceServiceReferences(trx, id, referenceRows(id, definition.references(write.settings)));
      await deps.stateChanges?.environmentChanged(trx, environment.id);
    });
    row.hostname_label = await claims.claimFreeHostnameLabel(id);
    return responseOf(row);
  }

  async function getService(kind: ServiceKind, serviceId: string) {
    return responseOf(await requireServiceOfKind(kind, serviceId));
  }

  async function editService(kind: ServiceKind, serviceId: string, body: unknown) {
    const definition = definitionOf(kind);
    const current = await requireServiceOfKind(kind, serviceId);
    const write = cleanWrite(await definition.fromEdit(storedOf(current), body, contextFor(current.organization_id, current.environment_id)));
    const currentSettings = readJson<Record<string, unknown>>(current.settings);
    refuseForbiddenGitUrl(definition, write, currentSettings);
    // Advanced settings have operations of their own (services.advanced-settings.ts): an edit of the service keeps them.
    if (currentSettings.advanced_settings !== undefined) write.settings.advanced_settings = currentSettings.advanced_settings;
    const changes: Partial<ServiceRow> = {
      name: write.name,
      name_key: nameKey(write.name),
      description: write.description,
      settings: writeJson(write.settings),
      updated_at: isoTimestamp(clock),
    };
    // A database whose type changes needs credentials of the new server's shape (a Redis user is `default`).
    const before = databaseSummaryOf(kind, readJson<Record<string, unknown>>(current.settings), current.name);
    const after = databaseSummaryOf(kind, write.settings, write.name);
    if (after !== undefined && (before?.type !== after.type || current.credentials_envelope === null)) {
      changes.credentials_envelope = claims.sealNewCredentials(current, after.type);
    }
    await writeOrRefuse(write.name, async (trx) => {
      if (!(await updateService(trx, serviceId, changes))) throw notFound(`${definition.item} ${serviceId} not found`);
      await replaceServiceReferences(trx, serviceId, referenceRows(serviceId, definition.references(write.settings)));
    });
    return responseOf({ ...current, ...changes });
  }

  /**
   * Removes the services with their own variables and, by foreign keys, what other modules keep for them: all in one
   * transaction, or none (409 while the agent works on one of them). `skipReconcile`: the records go, what runs on
   * the cluster stays (the reference's delete parameter); otherwise a deployed one's teardown is queued for the agent.
   */
  async function deleteServices(targets: ReadonlyArray<{ kind: ServiceKind; id: string }>, options: { skipReconcile?: boolean | undefined } = {}): Promise<void> {
    const environmentIds = new Set<string>();
    for (const target of targets) environmentIds.add((await requireServiceOfKind(target.kind, target.id)).environment_id);
    await db.transaction().execute(async (trx) => {
      for (const target of targets) {
        await deps.runtime.refuseBusy(trx, target.id, { teardown: options.skipReconcile !== true });
        await deps.variables.deleteServiceVariables(trx, target.id);
        if (!(await deleteServiceRow(trx, target.id))) throw notFound(`${definitionOf(target.kind).item} ${target.id} not found`);
      }
      for (const environmentId of environmentIds) await deps.stateChanges?.environmentChanged(trx, environmentId);
    });
    for (const target of targets) await deps.runtime.serviceRemoved(target.id);
  }

  function deleteService(kind: ServiceKind, serviceId: string, options: { skipReconcile?: boolean | undefined } = {}): Promise<void> {
    return deleteServices([{ kind, id: serviceId }], options);
  }

  /**
   * For the environments module's delete, inside its transaction: removes every service of the environment as
   * deleteService does (409 while the agent works on one; a deployed one's teardown queued for the agent), so that
   * no workload outlives its environment. Answers the removed ids for `servicesRemoved` after the commit.
   */
  async function removeEnvironmentServices(trx: Transaction<DB>, environmentId: string, options: { teardown: boolean }): Promise<string[]> {
    const rows = await listServicesOfEnvironment(trx, environmentId);
    for (const row of rows) {
      await deps.runtime.refuseBusy(trx, row.id, options);
      await deps.variables.deleteServiceVariables(trx, row.id);
      await deleteServiceRow(trx, row.id);
    }
    return rows.map((row) => row.id);
  }

  /** The service's advanced settings, its kind's defaults with what it set over them. */
  async function getAdvancedSettings(kind: AdvancedSettingsKind, serviceId: string): Promise<Record<string, unknown>> {
    const row = await requireServiceOfKind(kind, serviceId);
    return advancedSettingsOf(kind, readJson<Record<string, unknown>>(row.settings));
  }

  /**
   * Replaces them (a key left out goes back to its default). Only what differs from the defaults is kept, in the
   * service's settings: a change makes a deployed service OUT_OF_DATE, and its next deployment carries it.
   */
  async function editAdvancedSettings(kind: AdvancedSettingsKind, serviceId: string, request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const row = await requireServiceOfKind(kind, serviceId);
    const { advanced_settings: _previous, ...settings } = readJson<Record<string, unknown>>(row.settings);
    const overrides = advancedSettingsOverrides(kind, request);
    const next = Object.keys(overrides).length === 0 ? settings : { ...settings, advanced_settings: overrides };
    if (!(await updateService(db, serviceId, { settings: writeJson(next), updated_at: isoTimestamp(clock) }))) throw notFound(`${definitionOf(kind).item} ${serviceId} not found`);
    return advancedSettingsOf(kind, next);
  }

  return {
    getAdvancedSettings,
    editAdvancedSettings,
    removeEnvironmentServices,
    async servicesRemoved(serviceIds: readonly string[]): Promise<void> {
      for (const serviceId of serviceIds) await deps.runtime.serviceRemoved(serviceId);
    },
    listServices,
    listAllServices,
    createService,
    getService,
    editService,
    deleteServices,
    deleteService,

    /** A service of any kind, for the modules built on services (deployments, custom domains, restrictions). */
    async findService(serviceId: string): Promise<StoredService | undefined> {
      const row = await findServiceRow(db, serviceId);
      return row === undefined ? undefined : storedOf(row);
    },

    /** The service a kind's path names, 404 when it names none of that kind. */
    async requireService(kind: ServiceKind, serviceId: string): Promise<StoredService> {
      return storedOf(await requireServiceOfKind(kind, serviceId));
    },

    async listEnvironmentServices(environmentId: string): Promise<StoredService[]> {
      return (await listServicesOfEnvironment(db, environmentId)).map(storedOf);
    },

    /** Where a service addressed without its organization in the path (`/application/{applicationId}/…`) lives. */
    async placementOf(serviceId: string): Promise<Placement | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined) return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      if (environment === undefined) return undefined;
      return { organizationId: row.organization_id, projectId: row.project_id, environmentId: row.environment_id, environmentMode: environment.mode };
    },
  };
}
