import { badRequest } from '../../lib/errors.ts';
import { RESERVED_PREFIX } from './variables.builtins.ts';
import { isServiceScope } from './variables.unified.ts';
import { VARIABLE_KEY_PATTERN, type VariableImportBody, type VariableImportResult } from './variables.schemas.ts';
import type { VariableOwner, VariablesService } from './variables.service.ts';
import type { ImportEntry, ImportOutcome } from './variables.writes.ts';

/**
 * Importing a .env file's variables into a service (importEnvironmentVariable and its kin per service kind, and the
 * unified importEnvironmentVariables): the client parses the file and sends its rows, each with the scope it goes to
 * (the service's own, its environment or its project) and whether it is a secret. Every row is checked before
 * anything is written (a bad row is a 400 naming it), then all rows are written in one transaction.
 */

/** The three owners an import into a service can write at. */
export interface ImportOwners {
  service: VariableOwner;
  environment: VariableOwner;
  project: VariableOwner;
}

const VALID_KEY = new RegExp(VARIABLE_KEY_PATTERN);

function rowProblem(index: number, name: string, field: string, message: string): never {
  throw badRequest(`vars[${index}] (${name}): ${message}`, [{ field: `/vars/${index}${field}`, message }]);
}

/** The rows of an import resolved to their owners; a 400 naming the first bad row. */
export function importEntries(body: VariableImportBody, owners: ImportOwners): ImportEntry[] {
  const seen = new Map<string, number>();
  return body.vars.map((row, index): ImportEntry => {
    if (!VALID_KEY.test(row.name)) {
      rowProblem(index, row.name, '/name', 'not a variable name (letters, digits and underscores, not starting with a digit)');
    }
    if (row.name.toUpperCase().startsWith(RESERVED_PREFIX)) {
      rowProblem(index, row.name, '/name', `names starting with ${RESERVED_PREFIX} are reserved for built-in variables`);
    }
    let owner: VariableOwner;
    if (row.scope === 'PROJECT') owner = owners.project;
    else if (row.scope === 'ENVIRONMENT') owner = owners.environment;
    else if (isServiceScope(row.scope) && row.scope === owners.service.scope) owner = owners.service;
    else {
      rowProblem(index, row.name, '/scope', `scope ${row.scope} is not one this import can write: ${owners.service.scope}, ENVIRONMENT or PROJECT`);
    }
    const key = `${owner.ownerId}:${row.name}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) rowProblem(index, row.name, '/name', `the same name at the same scope as vars[${earlier}]`);
    seen.set(key, index);
    return { index, owner, key: row.name, kind: row.is_secret ? 'secret' : 'variable', value: row.value };
  });
}

/** The broadest owner the entries write at: what the import's transaction is serialised and checked on. */
function broadestOwner(entries: readonly ImportEntry[], owners: ImportOwners): VariableOwner {
  if (entries.some((entry) => entry.owner.scope === 'PROJECT')) return owners.project;
  if (entries.some((entry) => entry.owner.scope === 'ENVIRONMENT')) return owners.environment;
  return owners.service;
}

function reported(entries: readonly ImportEntry[]) {
  return [...entries]
    .sort((a, b) => a.index - b.index)
    .map((entry) => ({
      name: entry.key,
      ...(entry.kind === 'secret' ? {} : { value: entry.value }),
      scope: entry.owner.scope,
      is_secret: entry.kind === 'secret',
    }));
}

export function importAnswer(total: number, outcome: ImportOutcome): VariableImportResult {
  return {
    total_variables_to_import: total,
    successful_imported_variables: reported([...outcome.created, ...outcome.overwritten]),
    overwritten_variables: reported(outcome.overwritten),
    skipped_variables: reported(outcome.skipped),
  };
}

/** Checks every row, then writes them all in one transaction (nothing when there are none). */
export async function importIntoService(variables: VariablesService, owners: ImportOwners, body: VariableImportBody): Promise<VariableImportResult> {
  const entries = importEntries(body, owners);
  const outcome: ImportOutcome =
    entries.length === 0 ? { created: [], overwritten: [], skipped: [] } : await variables.importVariables(broadestOwner(entries, owners), entries, body.overwrite);
  return importAnswer(body.vars.length, outcome);
}
