import { useState, type ChangeEvent, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, fieldErrorsOf, summaryOf } from '../api/client.ts';
import { parseDotenv, type DotenvRow } from '../services/dotenv.ts';
import { Button, ErrorMessage, ModalDialog, SelectField } from '../ui/controls.tsx';

export type WritableScope = 'SERVICE' | 'ENVIRONMENT' | 'PROJECT';

/** A name already defined at a scope the import can write, and whether it is a secret there. */
export interface ExistingDefinition {
  key: string;
  scope: WritableScope;
  secret: boolean;
}

interface ImportRow extends DotenvRow {
  scope: WritableScope;
  secret: boolean;
}

interface ImportedVariable {
  name: string;
  scope: string;
  is_secret: boolean;
}

interface ImportAnswer {
  total_variables_to_import: number;
  successful_imported_variables: ImportedVariable[];
  overwritten_variables: ImportedVariable[];
  skipped_variables: ImportedVariable[];
}

const SCOPE_LABELS: Record<WritableScope, string> = { SERVICE: 'This service', ENVIRONMENT: 'The environment', PROJECT: 'The project' };

/** Names that usually hold credentials: offered as secrets (the person can change each row). */
const LOOKS_SECRET = /(SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE|API_KEY|ACCESS_KEY|CREDENTIAL)/i;

function listOf(variables: ImportedVariable[]): string {
  return variables.map((variable) => variable.name).join(', ');
}

/**
 * "Import .env": a file chosen or pasted, read in the browser (services/dotenv.ts) into rows; each row gets its scope
 * (of `scopes`, the page's: this service, the environment, the project; "Set every row to" changes all) and whether it
 * is a secret. The API imports through a service (`importPath`, whose own scope is `serviceScope`): into it, its
 * environment or its project. A row
 * whose name already exists at its scope is marked before anything is sent, with what will happen to it: kept (the
 * row skipped) or replaced, as the person chose. The API checks every row and writes all or nothing; its refusal of
 * a row shows at that row. The answer says what was imported, replaced and skipped.
 */
export function ImportVariablesDialog({
  importPath,
  serviceScope,
  scopes,
  receivers,
  existing,
  onImported,
  onClose,
}: {
  importPath: string;
  serviceScope: string;
  scopes: readonly WritableScope[];
  /** "The service receives them", "The services receive them": who gets the rows at the next deployment. */
  receivers: string;
  existing: readonly ExistingDefinition[];
  onImported: () => Promise<unknown>;
  onClose: () => void;
}) {
  const scopeOptions = scopes.map((scope) => ({ value: scope, label: SCOPE_LABELS[scope] }));
  const firstScope = scopes[0] ?? 'SERVICE';
  const [text, setText] = useState('');
  const [rows, setRows] = useState<ImportRow[]>([]);
  const [problems, setProblems] = useState<{ line: number; message: string }[]>([]);
  const [overwrite, setOverwrite] = useState<'skip' | 'overwrite'>('skip');
  const [allScope, setAllScope] = useState<WritableScope | ''>('');
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const [answer, setAnswer] = useState<ImportAnswer | undefined>();
  const rowErrors = fieldErrorsOf(error);

  function read(content: string) {
    setText(content);
    setError(undefined);
    const parsed = parseDotenv(content);
    // A row read again keeps the scope and secrecy the person gave it.
    setRows(
      parsed.rows.map((row) => {
        const before = rows.find((candidate) => candidate.name === row.name);
        return { ...row, scope: before?.scope ?? (allScope === '' ? firstScope : allScope), secret: before?.secret ?? LOOKS_SECRET.test(row.name) };
      }),
    );
    setProblems(parsed.problems);
  }

  async function choose(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (file !== undefined) read(await file.text());
  }

  function change(index: number, patch: Partial<ImportRow>) {
    setError(undefined);
    setRows((current) => current.map((row, at) => (at === index ? { ...row, ...patch } : row)));
  }

  function setEveryScope(scope: WritableScope | '') {
    setAllScope(scope);
    if (scope !== '') {
      setError(undefined);
      setRows((current) => current.map((row) => ({ ...row, scope })));
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending || rows.length === 0) return;
    setPending(true);
    setError(undefined);
    try {
      const body = {
        overwrite: overwrite === 'overwrite',
        vars: rows.map((row) => ({ name: row.name, value: row.value, scope: row.scope === 'SERVICE' ? serviceScope : row.scope, is_secret: row.secret })),
      };
      const imported = await apiRequest<ImportAnswer>('POST', importPath, body);
      await onImported();
      setAnswer(imported);
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }

  if (answer !== undefined) {
    const overwritten = new Set(answer.overwritten_variables.map((variable) => `${variable.scope}:${variable.name}`));
    const created = answer.successful_imported_variables.filter((variable) => !overwritten.has(`${variable.scope}:${variable.name}`));
    return (
      <ModalDialog title="Import .env" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
        <div className="form" role="status">
          <p>
            {answer.successful_imported_variables.length} of {answer.total_variables_to_import} rows imported.
          </p>
          <ul className="import-outcome">
            {created.length === 0 ? null : <li>Created: {listOf(created)}</li>}
            {answer.overwritten_variables.length === 0 ? null : <li>Replaced: {listOf(answer.overwritten_variables)}</li>}
            {answer.skipped_variables.length === 0 ? null : <li>Skipped, already set (kept their values): {listOf(answer.skipped_variables)}</li>}
          </ul>
          <p className="muted">{receivers} at the next deployment.</p>
        </div>
        <div className="form-actions">
          <Button onPress={onClose} autoFocus>
            Done
          </Button>
        </div>
      </ModalDialog>
    );
  }

  const conflicts = rows.map((row) => existing.find((definition) => definition.key === row.name && definition.scope === row.scope));
  const conflictCount = conflicts.filter((conflict) => conflict !== undefined).length;
  return (
    <ModalDialog title="Import .env" isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <p>Choose a .env file or paste its lines (NAME=value). Nothing is written until you import; rows whose name exists at their scope are marked.</p>
        <div className="field">
          <label htmlFor="env-file">.env file</label>
          <input id="env-file" type="file" accept=".env,text/plain" onChange={(event) => void choose(event)} />
        </div>
        <div className="field">
          <label htmlFor="env-text">Or paste its lines</label>
          <textarea id="env-text" className="env-text" rows={5} value={text} spellCheck={false} onChange={(event) => read(event.target.value)} placeholder={'DATABASE_URL=postgres://…\nAPI_TOKEN="…"'} />
        </div>
        {problems.length === 0 ? null : (
          <div className="error-message" role="alert">
            <p className="import-problems-title">These lines were not read:</p>
            <ul>
              {problems.map((problem) => (
                <li key={problem.line}>
                  Line {problem.line} {problem.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        {rows.length === 0 ? null : (
          <>
            <div className="import-settings">
              <SelectField
                id="import-all-scope"
                label="Set every row to"
                value={allScope}
                onChange={setEveryScope}
                options={[{ value: '', label: 'Choose per row' }, ...scopeOptions]}
              />
              <SelectField
                id="import-overwrite"
                label="When a name exists at its scope"
                value={overwrite}
                onChange={setOverwrite}
                description={conflictCount === 0 ? 'No row exists yet.' : `${conflictCount} ${conflictCount === 1 ? 'row exists' : 'rows exist'} already (marked below).`}
                options={[
                  { value: 'skip', label: 'Keep the existing value (skip the row)' },
                  { value: 'overwrite', label: "Replace it with the file's value" },
                ]}
              />
            </div>
            <table className="table import-table" aria-label="Rows to import">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Secret</th>
                  <th scope="col">Existing</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row, index) => {
                  const conflict = conflicts[index];
                  const rowError = rowErrors.get(`vars/${index}/name`) ?? rowErrors.get(`vars/${index}/scope`) ?? rowErrors.get(`vars/${index}/value`) ?? rowErrors.get(`vars/${index}`);
                  return (
                    <tr key={`${row.line}-${row.name}`} className={rowError === undefined ? undefined : 'row-invalid'}>
                      <th scope="row" data-label="Name">
                        <code className="variable-key">{row.name}</code>
                        {rowError === undefined ? null : (
                          <span className="row-error" id={`import-row-${index}-error`}>
                            {rowError}
                          </span>
                        )}
                      </th>
                      <td data-label="Value" className="value-cell">
                        {row.secret ? <span className="muted">hidden (secret)</span> : <code className="variable-value">{row.value === '' ? '""' : row.value}</code>}
                      </td>
                      <td data-label="Scope">
                        <select
                          aria-label={`Scope of ${row.name}`}
                          value={row.scope}
                          onChange={(event) => change(index, { scope: event.target.value as WritableScope })}
                          aria-invalid={rowError === undefined ? undefined : true}
                          aria-describedby={rowError === undefined ? undefined : `import-row-${index}-error`}
                        >
                          {scopeOptions.map((option) => (
                            <option key={option.value} value={option.value}>
                              {option.label}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td data-label="Secret">
                        <input type="checkbox" aria-label={`${row.name} is a secret`} checked={row.secret} onChange={(event) => change(index, { secret: event.target.checked })} />
                      </td>
                      <td data-label="Existing">
                        {conflict === undefined ? (
                          <span className="muted">New</span>
                        ) : conflict.secret !== row.secret && overwrite === 'overwrite' ? (
                          <span className="tag tag-danger">Exists as a {conflict.secret ? 'secret' : 'variable'}: cannot be replaced by a {row.secret ? 'secret' : 'variable'}</span>
                        ) : (
                          <span className="tag tag-warning">{overwrite === 'overwrite' ? 'Exists: replaced' : 'Exists: kept, row skipped'}</span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </>
        )}
        <div className="form-foot">
          <ErrorMessage message={error === undefined ? undefined : summaryOf(error)} />
          <div className="form-actions">
            <Button variant="secondary" onPress={onClose}>
              Cancel
            </Button>
            <Button type="submit" isDisabled={rows.length === 0}>
              {rows.length === 0 ? 'Import' : `Import ${rows.length} ${rows.length === 1 ? 'row' : 'rows'}`}
            </Button>
          </div>
        </div>
      </Form>
    </ModalDialog>
  );
}
