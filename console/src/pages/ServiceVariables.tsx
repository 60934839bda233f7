import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, fieldErrorsOf, messageOf, summaryOf, type EnvironmentVariable, type Secret } from '../api/client.ts';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import { Button, CheckboxField, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../ui/controls.tsx';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { ResolvedVariables } from './ResolvedVariables.tsx';
import type { ServiceContext } from './ServicePage.tsx';
import { ImportVariablesDialog, type ExistingDefinition, type WritableScope } from './VariablesImport.tsx';

interface Row {
  id: string;
  key: string;
  /** Absent for a secret, and for a built-in the API hides. */
  value: string | undefined;
  secret: boolean;
  scope: string;
  type: string;
  mountPath: string;
  aliasOf: string | undefined;
  overrides: string | undefined;
}

const SCOPE_LABELS: Record<string, string> = { BUILT_IN: 'Built-in', PROJECT: 'Project', ENVIRONMENT: 'Environment' };

function scopeLabel(scope: string): string {
  return SCOPE_LABELS[scope] ?? 'Service';
}

function writableScope(scope: string): WritableScope | undefined {
  if (scope === 'BUILT_IN') return undefined;
  if (scope === 'PROJECT' || scope === 'ENVIRONMENT') return scope;
  return 'SERVICE';
}

/** Where a variable or secret of `scope` is written: its own scope's path. */
function collectionPath(context: ServiceContext, scope: WritableScope, secret: boolean): string {
  const noun = secret ? 'secret' : 'environmentVariable';
  if (scope === 'PROJECT') return `/project/${context.projectId}/${noun}`;
  if (scope === 'ENVIRONMENT') return `/environment/${context.environmentId}/${noun}`;
  return `${context.base}/${noun}`;
}

/**
 * The variables the service sees, at every scope (its own, its environment's, its project's, the built-ins), with the
 * scope each comes from and whether it aliases or overrides another. Secrets are write-only: the API never answers
 * their value, and the console never shows one.
 */
export function ServiceVariables({ context }: { context: ServiceContext }) {
  const { base } = context;
  const variables = useQuery({ queryKey: ['service-variables', base], queryFn: () => apiRequest<{ results: EnvironmentVariable[] }>('GET', `${base}/environmentVariable`) });
  const secrets = useQuery({ queryKey: ['service-secrets', base], queryFn: () => apiRequest<{ results: Secret[] }>('GET', `${base}/secret`) });
  const [showBuiltIns, setShowBuiltIns] = useState(false);
  const [editing, setEditing] = useState<Row | 'new' | undefined>();
  const [deleting, setDeleting] = useState<Row | undefined>();
  const [importing, setImporting] = useState(false);
  const [view, setView] = useState<'definitions' | 'resolved'>('definitions');
  const refresh = useRefreshVariables(context);
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const describedBy = cannotWrite ? writeNote : undefined;

  const rows: Row[] = [
    ...(variables.data?.results ?? []).map((variable) => ({
      id: variable.id,
      key: variable.key,
      value: variable.value,
      secret: false,
      scope: variable.scope,
      type: variable.variable_type,
      mountPath: variable.mount_path ?? '',
      aliasOf: variable.aliased_variable?.key,
      overrides: variable.overridden_variable === undefined || variable.overridden_variable === null ? undefined : scopeLabel(variable.overridden_variable.scope),
    })),
    ...(secrets.data?.results ?? []).map((secret) => ({
      id: secret.id,
      key: secret.key,
      value: undefined,
      secret: true,
      scope: secret.scope,
      type: secret.variable_type,
      mountPath: secret.mount_path ?? '',
      aliasOf: secret.aliased_secret?.key,
      overrides: secret.overridden_secret === undefined || secret.overridden_secret === null ? undefined : scopeLabel(secret.overridden_secret.scope),
    })),
  ].sort((a, b) => a.key.localeCompare(b.key));
  const builtIns = rows.filter((row) => row.scope === 'BUILT_IN').length;
  const shown = rows.filter((row) => showBuiltIns || row.scope !== 'BUILT_IN');
  const error = variables.error ?? secrets.error;
  const existing: ExistingDefinition[] = rows.flatMap((row) => {
    const scope = writableScope(row.scope);
    return scope === undefined ? [] : [{ key: row.key, scope, secret: row.secret }];
  });

  return (
    <section aria-labelledby="variables-heading">
      <div className="section-heading">
        <h2 id="variables-heading" className="card-title">
          Variables
        </h2>
        <div className="section-actions">
          <Button variant="secondary" onPress={() => setImporting(true)} isDisabled={cannotWrite} aria-describedby={describedBy}>
            Import .env
          </Button>
          <Button onPress={() => setEditing('new')} isDisabled={cannotWrite} aria-describedby={describedBy}>
            New variable
          </Button>
        </div>
      </div>
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      <div className="view-switch" role="group" aria-label="Show">
        <Button variant="secondary" aria-pressed={view === 'definitions'} onPress={() => setView('definitions')}>
          Definitions by scope
        </Button>
        <Button variant="secondary" aria-pressed={view === 'resolved'} onPress={() => setView('resolved')}>
          What the service receives
        </Button>
      </div>
      {view === 'resolved' ? (
        <>
          <p className="muted section-intro-below">Each name as the next deployment receives it: the scope that won, the aliases followed to its value, and what it overrides.</p>
          <ResolvedVariables context={context} />
        </>
      ) : (
        <>
          {variables.isPending || secrets.isPending ? <Spinner label="Loading variables…" /> : null}
          <ErrorMessage message={error === null ? undefined : messageOf(error)} />
          {variables.isSuccess && secrets.isSuccess && shown.length === 0 ? (
            <div className="empty card">
              <h3>No variables yet</h3>
              <p className="muted">Variables configure the service at deploy time. Set one here for this service, or for its whole environment or project.</p>
            </div>
          ) : null}
          {shown.length === 0 ? null : (
            <table className="table variables-table" aria-labelledby="variables-heading">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                  <th scope="col">Scope</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((row) => (
                  <tr key={`${row.secret ? 's' : 'v'}-${row.id}`} id={shown.find((candidate) => candidate.key === row.key) === row ? `variable-${row.key}` : undefined}>
                    <th scope="row" data-label="Name">
                      <code className="variable-key">{row.key}</code>
                      {row.secret ? <span className="badge">Secret</span> : null}
                      {row.aliasOf === undefined ? null : <span className="badge badge-alias">Alias</span>}
                      {row.overrides === undefined ? null : <span className="badge badge-override">Override</span>}
                      {row.mountPath ? <span className="badge">File</span> : null}
                    </th>
                    <td data-label="Value" className="value-cell">
                      {row.secret ? (
                        <span className="muted">hidden (secret)</span>
                      ) : row.aliasOf !== undefined ? (
                        <span>
                          →{' '}
                          {shown.some((candidate) => candidate.key === row.aliasOf && candidate.id !== row.id) ? (
                            <a href={`#variable-${row.aliasOf}`}>
                              <code>{row.aliasOf}</code>
                            </a>
                          ) : (
                            <code>{row.aliasOf}</code>
                          )}
                        </span>
                      ) : row.value === undefined ? (
                        <span className="muted">hidden</span>
                      ) : (
                        <code className="variable-value">{row.value}</code>
                      )}
                      {row.overrides === undefined ? null : <span className="muted small"> overrides the {row.overrides.toLowerCase()} value</span>}
                      {row.mountPath ? <span className="muted small"> file at {row.mountPath}</span> : null}
                    </td>
                    <td data-label="Scope">
                      <span className={`scope scope-${row.scope.toLowerCase()}`}>{scopeLabel(row.scope)}</span>
                    </td>
                    <td className="actions-cell">
                      {writableScope(row.scope) === undefined ? null : (
                        <>
                          <Button variant="secondary" aria-label={`Edit ${row.key}`} onPress={() => setEditing(row)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                            Edit
                          </Button>
                          <Button variant="quiet-danger" aria-label={`Delete ${row.key}`} onPress={() => setDeleting(row)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                            Delete
                          </Button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {builtIns === 0 ? null : (
            <div className="below-table">
              <CheckboxField id="show-built-ins" label={`Show the ${builtIns} built-in variables`} checked={showBuiltIns} onChange={setShowBuiltIns} />
            </div>
          )}
        </>
      )}
      {importing ? <ImportVariablesDialog context={context} existing={existing} onImported={refresh} onClose={() => setImporting(false)} /> : null}
      {editing === undefined ? null : <VariableDialog context={context} row={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} />}
      {deleting === undefined ? null : <DeleteVariableDialog context={context} row={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function useRefreshVariables(context: ServiceContext) {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['service-variables', context.base] }),
      queryClient.invalidateQueries({ queryKey: ['service-secrets', context.base] }),
      queryClient.invalidateQueries({ queryKey: ['service-resolved-variables', context.base] }),
      queryClient.invalidateQueries({ queryKey: ['service-status', context.base] }),
    ]);
}

/** Create a variable (at a scope, plain or secret, optionally a file), or edit one; a secret's value is write-only. */
function VariableDialog({ context, row, onClose }: { context: ServiceContext; row: Row | undefined; onClose: () => void }) {
  const [key, setKey] = useState(row?.key ?? '');
  const [value, setValue] = useState(row?.secret === true || row?.aliasOf !== undefined ? (row.aliasOf === undefined ? '' : `$${row.aliasOf}`) : (row?.value ?? ''));
  const [secret, setSecret] = useState(row?.secret ?? false);
  const [scope, setScope] = useState<WritableScope>(row === undefined ? 'SERVICE' : (writableScope(row.scope) ?? 'SERVICE'));
  const [mountPath, setMountPath] = useState(row?.mountPath ?? '');
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshVariables(context);
  const fields = fieldErrorsOf(error);
  /** An edit clears the server's field messages (an invalid field would keep the form from being sent again). */
  const edit = <Value,>(setter: (value: Value) => void) => (value: Value) => {
    setter(value);
    setError(undefined);
  };

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    const keepSecret = row?.secret === true && value === '';
    const body = { key: key.trim(), ...(keepSecret ? {} : { value }), ...(mountPath.trim() === '' ? {} : { mount_path: mountPath.trim() }) };
    try {
      if (row === undefined) await apiRequest('POST', collectionPath(context, scope, secret), body);
      else await apiRequest('PUT', `${collectionPath(context, scope, row.secret)}/${row.id}`, body);
      await refresh();
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }

  return (
    <ModalDialog title={row === undefined ? 'New variable' : `Edit ${row.key}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <TextField label="Name" value={key} onChange={edit(setKey)} isRequired autoFocus maxLength={255} errorMessage={fields.get('key')} description="Letters, digits and underscores, not starting with a digit." />
        <TextField
          label="Value"
          value={value}
          onChange={edit(setValue)}
          type={secret ? 'password' : 'text'}
          autoComplete="off"
          errorMessage={fields.get('value')}
          description={row?.secret === true ? 'Leave empty to keep the current value; it is never shown.' : 'A value of $OTHER_NAME makes it an alias of that variable.'}
        />
        {row === undefined ? (
          <>
            <CheckboxField id="variable-secret" label="Secret (write-only: its value is never shown again)" checked={secret} onChange={setSecret} />
            <SelectField
              id="variable-scope"
              label="Scope"
              value={scope}
              onChange={setScope}
              options={[
                { value: 'SERVICE', label: 'This service' },
                { value: 'ENVIRONMENT', label: 'Every service of this environment' },
                { value: 'PROJECT', label: 'Every service of the project' },
              ]}
            />
          </>
        ) : (
          <p className="muted">Scope: {scopeLabel(row.scope)}</p>
        )}
        <TextField label="As a file at (optional)" value={mountPath} onChange={edit(setMountPath)} placeholder="/etc/app/config.json" errorMessage={fields.get('mount_path')} description="Given, the value is written to this file instead of the environment." />
        <ErrorMessage message={error === undefined ? undefined : summaryOf(error)} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">{row === undefined ? 'Create variable' : 'Save'}</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteVariableDialog({ context, row, onClose }: { context: ServiceContext; row: Row; onClose: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshVariables(context);
  const scope = writableScope(row.scope) ?? 'SERVICE';
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    try {
      await apiRequest('DELETE', `${collectionPath(context, scope, row.secret)}/${row.id}`);
      await refresh();
      onClose();
    } catch (caught) {
      setError(messageOf(caught));
      setPending(false);
    }
  }
  return (
    <ModalDialog title={`Delete ${row.key}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <p>
          {scope === 'SERVICE' ? 'The service' : `Every service of the ${scope.toLowerCase()}`} loses {row.key} at its next deployment
          {row.overrides === undefined ? '' : `; the ${row.overrides.toLowerCase()} value it overrides applies again`}.
        </p>
        <ErrorMessage message={error} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit" variant="danger" autoFocus>
            Delete variable
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}
