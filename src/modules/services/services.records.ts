import { readJson } from '../../db/db.json.ts';
import { notFound } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { DatabaseSummary, ServiceKindDefinition, StoredService } from './services.kinds.ts';
import { findServiceRow, type ServiceRow } from './services.repo.ts';
import type { ServicesDeps } from './services.service.ts';

/**
 * What every part of the services service reads (services.service.ts assembles the parts): a row as a kind sees it,
 * the kinds' definitions, and the service a kind's path names.
 */

export function storedOf(row: ServiceRow): StoredService {
  return {
    id: row.id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    environmentId: row.environment_id,
    kind: row.kind as ServiceKind,
    name: row.name,
    description: row.description,
    settings: readJson<Record<string, unknown>>(row.settings),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function createServiceRecords(deps: Pick<ServicesDeps, 'db' | 'kinds'>) {
  const { db } = deps;
  const definitions = new Map<ServiceKind, ServiceKindDefinition>(deps.kinds.map((definition) => [definition.kind, definition]));

  /** The kind's definition, undefined for a kind none is registered for. */
  function findDefinition(kind: string): ServiceKindDefinition | undefined {
    return definitions.get(kind as ServiceKind);
  }

  function definitionOf(kind: string): ServiceKindDefinition {
    const definition = findDefinition(kind);
    if (definition === undefined) throw new Error(`no definition registered for service kind ${kind}`);
    return definition;
  }

  /** The service a kind's path names: a service of another kind is not found there (a job id under /application). */
  async function requireServiceOfKind(kind: ServiceKind, serviceId: string): Promise<ServiceRow> {
    const row = await findServiceRow(db, serviceId);
    if (row === undefined || row.kind !== kind) throw notFound(`${definitionOf(kind).item} ${serviceId} not found`);
    return row;
  }

  /** What a database's settings say of its server (the DATABASE kind's `database`); undefined for other kinds. */
  function databaseSummaryOf(kind: string, settings: Record<string, unknown>, name: string): DatabaseSummary | undefined {
    return findDefinition(kind)?.database?.(settings, name);
  }

  return { findDefinition, definitionOf, requireServiceOfKind, databaseSummaryOf };
}

export type ServiceRecords = ReturnType<typeof createServiceRecords>;
