import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent, type MouseEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryOf, type EnvironmentVariable, type Secret } from '../api/client.ts';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import { ActionsMenu, Button, CheckboxField, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../ui/controls.tsx';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { plural } from './live.ts';
import { EnvironmentResolvedVariables, ServiceResolvedVariables } from './ResolvedVariables.tsx';
import { ImportVariablesDialog, type ExistingDefinition, type WritableScope } from './VariablesImport.tsx';

/** The four groups a listing falls into; the service's stored scope (APPLICATION, JOB, …) is SERVICE here. */
type ScopeGroup = WritableScope | 'BUILT_IN';

/** Narrowest first: the order of the tables, and which definition wins a name. */
const GROUPS: readonly ScopeGroup[] = ['SERVICE', 'ENVIRONMENT', 'PROJECT', 'BUILT_IN'];

function groupOf(scope: string): ScopeGroup {
  if (scope === 'BUILT_IN' || scope === 'PROJECT' || scope === 'ENVIRONMENT') return scope;
  return 'SERVICE';
}

/** "the service", "the environment", "the project", "the built-in (value)": how a sentence names a scope. */
const SCOPE_NOUNS: Record<ScopeGroup, string> = { SERVICE: 'service', ENVIRONMENT: 'environment', PROJECT: 'project', BUILT_IN: 'built-in' };

/**
 * Where a page's variables are set and read: a service's page (its own scope, its environment's and its project's),
 * an environment's (its own and its project's) or a project's (its own).
 */
export interface VariablesLevel {
  own: WritableScope;
  organizationId: string;
  projectId: string;
  environmentId?: string;
  /** `/application/<id>`: the service's operations, on a service's page. */
  serviceBase?: string;
  /**
   * Where a .env file is imported: the API imports through a service (into it, its environment or its project), so
   * the route of a service of this level, with that service's stored scope; or why there is none here.
   */
  importThrough: { path: string; serviceScope: string } | { unavailable: string };
}

/** One definition as a table shows it: a variable or a secret, at one scope. */
export interface VariableRow {
  id: string;
  key: string;
  /** Absent for a secret, and for a built-in the API hides. */
  value: string | undefined;
  secret: boolean;
  group: ScopeGroup;
  mountPath: string;
  /** The name a `$NAME` value aliases, and the id the API resolved it to. */
  alias: { key: string; id: string | undefined } | undefined;
  /** The id of the broader definition the API says this one overrides. */
  overriddenId: string | undefined;
}

/** A row's anchor: readable (`variable-environment-REGION`), unique as a name is unique within a scope. */
function anchorOf(row: VariableRow): string {
  return `variable-${row.group.toLowerCase().replace('_', '-')}-${row.key}`;
}

function listingBase(level: VariablesLevel): string {
  if (level.own === 'PROJECT') return `/project/${level.projectId}`;
  if (level.own === 'ENVIRONMENT') return `/environment/${level.environmentId ?? ''}`;
  return level.serviceBase ?? '';
}

/** Where a variable or secret of `scope` is written: its own scope's path. */
function collectionPath(level: VariablesLevel, scope: WritableScope, secret: boolean): string {
  const noun = secret ? 'secret' : 'environmentVariable';
  if (scope === 'PROJECT') return `/project/${level.projectId}/${noun}`;
  if (scope === 'ENVIRONMENT') return `/environment/${level.environmentId ?? ''}/${noun}`;
  return `${level.serviceBase ?? ''}/${noun}`;
}

/** The scopes a page writes: its own and the broader ones (a project's page has no environment to write). */
function writableScopes(level: VariablesLevel): WritableScope[] {
  if (level.own === 'PROJECT') return ['PROJECT'];
  if (level.own === 'ENVIRONMENT') return ['ENVIRONMENT', 'PROJECT'];
  return ['SERVICE', 'ENVIRONMENT', 'PROJECT'];
}

const SCOPE_OPTIONS: Record<WritableScope, string> = {
  SERVICE: 'This service',
  ENVIRONMENT: 'Every service of this environment',
  PROJECT: 'Every service of the project',
};

function useRefreshVariables() {
  const queryClient = useQueryClient();
  // A write at the project reaches every listing below it: every page's listings are read again.
  const keys = [['variables'], ['secrets'], ['service-resolved-variables'], ['service-status'], ['get', '/environment/{environmentId}/resolvedVariables']];
  return () => Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}

/** What the alias and override actions create: a new name for a row's value, or the row's name with a new value. */
type LinkKind = 'alias' | 'override';

const rankOf = (group: ScopeGroup) => GROUPS.indexOf(group);

/** Whether a scope's consumers see the row: its own scope and the narrower ones (a built-in exists per environment, so not the project). */
function sees(scope: WritableScope, row: VariableRow): boolean {
  return rankOf(scope) <= rankOf(row.group) && !(row.group === 'BUILT_IN' && scope === 'PROJECT');
}

/** Where a row's alias can land: a scope the page writes that sees the row. */
function aliasScopes(level: VariablesLevel, row: VariableRow): WritableScope[] {
  return writableScopes(level).filter((scope) => sees(scope, row));
}

/** Where a row can be overridden: a narrower scope the page writes that does not set the name yet (there, it is edited). */
function overrideScopes(level: VariablesLevel, row: VariableRow, rows: readonly VariableRow[]): WritableScope[] {
  return writableScopes(level).filter((scope) => sees(scope, row) && scope !== row.group && !rows.some((other) => other.key === row.key && other.group === scope));
}

/**
 * A page's variables, one table per scope from the narrowest to the broadest (the service's, the environment's, the
 * project's, then the built-ins on demand), each under its heading with its count. An alias links to the row of what
 * it names, an override to the row it overrides, which says by which scope it is overridden and links back. Each row
 * can be aliased (a new name for its value: the only way for a secret, whose value is never written as `$NAME`) and,
 * from a narrower scope, overridden (a built-in's PLATFORM_ name included), through the row's own alias and override
 * operations at the scope chosen. Secrets are write-only: the API never answers their value, and the console never
 * shows one. On a service's and an environment's page the tables switch with what is resolved there.
 */
export function VariablesByScope({ level }: { level: VariablesLevel }) {
  const base = listingBase(level);
  const variables = useQuery({ queryKey: ['variables', base], queryFn: () => apiRequest<{ results: EnvironmentVariable[] }>('GET', `${base}/environmentVariable`) });
  const secrets = useQuery({ queryKey: ['secrets', base], queryFn: () => apiRequest<{ results: Secret[] }>('GET', `${base}/secret`) });
  const project = api.useQuery('get', '/project/{projectId}', { params: { path: { projectId: level.projectId } } });
  const environment = api.useQuery('get', '/environment/{environmentId}', { params: { path: { environmentId: level.environmentId ?? '' } } }, { enabled: level.environmentId !== undefined && level.own !== 'PROJECT' });
  const [showBuiltIns, setShowBuiltIns] = useState(false);
  const [editing, setEditing] = useState<VariableRow | 'new' | undefined>();
  const [deleting, setDeleting] = useState<VariableRow | undefined>();
  const [importing, setImporting] = useState(false);
  const [linking, setLinking] = useState<{ row: VariableRow; kind: LinkKind; scopes: WritableScope[] } | undefined>();
  const [view, setView] = useState<'definitions' | 'resolved'>('definitions');
  const [focusing, setFocusing] = useState<string | undefined>();
  const refresh = useRefreshVariables();
  const permissions = useOrganizationPermissions(level.organizationId);
  const cannotWrite = !permissions.can('write');
  const headingId = useId();
  const writeNote = useId();
  const importNote = useId();
  const describedBy = cannotWrite ? writeNote : undefined;
  const importUnavailable = 'unavailable' in level.importThrough ? level.importThrough.unavailable : undefined;

  // A followed link focuses its row once it is rendered (a built-in's table appears first).
  useEffect(() => {
    if (focusing === undefined) return;
    const target = document.getElementById(focusing);
    target?.scrollIntoView({ block: 'center' });
    target?.focus({ preventScroll: true });
    setFocusing(undefined);
  }, [focusing]);

  const rows: VariableRow[] = [
    ...(variables.data?.results ?? []).map((variable) => ({
      id: variable.id,
      key: variable.key,
      value: variable.value,
      secret: false,
      group: groupOf(variable.scope),
      mountPath: variable.mount_path ?? '',
      alias: variable.aliased_variable === undefined ? aliasWritten(variable.value) : { key: variable.aliased_variable.key, id: variable.aliased_variable.id },
      overriddenId: variable.overridden_variable?.id,
    })),
    ...(secrets.data?.results ?? []).map((secret) => ({
      id: secret.id,
      key: secret.key,
      value: undefined,
      secret: true,
      group: groupOf(secret.scope),
      mountPath: secret.mount_path ?? '',
      alias: secret.aliased_secret === undefined ? undefined : { key: secret.aliased_secret.key, id: secret.aliased_secret.id },
      overriddenId: secret.overridden_secret?.id,
    })),
  ].sort((a, b) => a.key.localeCompare(b.key));
  const links = linksOf(rows);
  const writable = writableScopes(level);
  const builtIns = rows.filter((row) => row.group === 'BUILT_IN').length;
  const written = rows.filter((row) => row.group !== 'BUILT_IN');
  const error = variables.error ?? secrets.error;
  const existing: ExistingDefinition[] = written.flatMap((row) => (row.group === 'BUILT_IN' ? [] : [{ key: row.key, scope: row.group, secret: row.secret }]));
  const titles: Record<ScopeGroup, string> = {
    SERVICE: 'This service',
    ENVIRONMENT: level.own === 'ENVIRONMENT' ? 'This environment' : `Environment ${environment.data?.name ?? ''}`.trim(),
    PROJECT: level.own === 'PROJECT' ? 'This project' : `Project ${project.data?.name ?? ''}`.trim(),
    BUILT_IN: 'Built-in',
  };

  function follow(event: MouseEvent, target: VariableRow) {
    event.preventDefault();
    if (target.group === 'BUILT_IN') setShowBuiltIns(true);
    setFocusing(anchorOf(target));
  }

  /** A badge that links to the row it names; its name says which (the visible word alone would not). */
  function badgeLink(target: VariableRow, className: string, word: string, label: string) {
    return (
      <a href={`#${anchorOf(target)}`} className={`badge badge-link ${className}`} aria-label={label} onClick={(event) => follow(event, target)}>
        {word}
      </a>
    );
  }

  function table(group: ScopeGroup) {
    const inGroup = rows.filter((row) => row.group === group);
    const titleId = `${headingId}-${group.toLowerCase()}`;
    const canEdit = group !== 'BUILT_IN' && writable.includes(group);
    return (
      <div className="scope-group" key={group}>
        <h3 className="scope-heading">
          <span id={titleId}>{titles[group]}</span> <span className="scope-count">{plural(inGroup.length, 'variable', 'variables')}</span>
        </h3>
        {inGroup.length === 0 ? (
          <p className="muted scope-empty">Nothing set on {group === level.own ? 'this' : 'the'} {SCOPE_NOUNS[group]} yet.</p>
        ) : (
          <table className="table variables-table" aria-labelledby={titleId}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {inGroup.map((row) => {
                const { aliased, overridden, overriddenBy } = links.get(row) ?? {};
                const where = row.group === level.own ? '' : ` (${SCOPE_NOUNS[row.group]})`;
                const linkScopes: Record<LinkKind, WritableScope[]> = { alias: aliasScopes(level, row), override: overrideScopes(level, row, rows) };
                const linkActions = [
                  ...(linkScopes.alias.length === 0 ? [] : [{ id: 'alias', label: 'Alias…', isDisabled: cannotWrite }]),
                  ...(linkScopes.override.length === 0 ? [] : [{ id: 'override', label: 'Override…', isDisabled: cannotWrite }]),
                ];
                return (
                  <tr key={`${row.secret ? 's' : 'v'}-${row.id}`} id={anchorOf(row)} tabIndex={-1} className="variable-row">
                    <th scope="row" data-label="Name">
                      <code className="variable-key">{row.key}</code>
                      {row.secret ? <span className="badge">Secret</span> : null}
                      {row.alias === undefined ? null : aliased === undefined ? (
                        <span className="badge badge-alias">Alias</span>
                      ) : (
                        badgeLink(aliased, 'badge-alias', 'Alias', `Alias of ${aliased.key} (${SCOPE_NOUNS[aliased.group]})`)
                      )}
                      {overridden === undefined ? null : badgeLink(overridden, 'badge-override', 'Override', `Override of ${overridden.key} (${SCOPE_NOUNS[overridden.group]})`)}
                      {row.mountPath ? <span className="badge">File</span> : null}
                    </th>
                    <td data-label="Value" className="value-cell">
                      {row.secret ? (
                        <span className="muted">hidden (secret)</span>
                      ) : row.alias !== undefined ? (
                        <span>
                          → <code>{row.alias.key}</code>
                          {aliased === undefined ? <span className="muted small"> (not set)</span> : <span className="muted small"> ({SCOPE_NOUNS[aliased.group]})</span>}
                        </span>
                      ) : row.value === undefined ? (
                        <span className="muted">hidden</span>
                      ) : (
                        <code className="variable-value">{row.value}</code>
                      )}
                      {overridden === undefined ? null : <span className="muted small"> overrides the {SCOPE_NOUNS[overridden.group]} value</span>}
                      {row.mountPath ? <span className="muted small"> file at {row.mountPath}</span> : null}
                      {overriddenBy === undefined ? null : (
                        <span className="overridden-note">
                          <a href={`#${anchorOf(overriddenBy)}`} onClick={(event) => follow(event, overriddenBy)}>
                            Overridden by the {SCOPE_NOUNS[overriddenBy.group]}
                          </a>
                        </span>
                      )}
                    </td>
                    <td className="actions-cell">
                      {canEdit ? (
                        <>
                          <Button variant="secondary" aria-label={`Edit ${row.key}${where}`} onPress={() => setEditing(row)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                            Edit
                          </Button>
                          <Button variant="quiet-danger" aria-label={`Delete ${row.key}${where}`} onPress={() => setDeleting(row)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                            Delete
                          </Button>
                        </>
                      ) : null}
                      {linkActions.length === 0 ? null : (
                        <ActionsMenu
                          label={`More actions for ${row.key}${where}`}
                          actions={linkActions}
                          onAction={(id) => {
                            const kind = id === 'override' ? 'override' : 'alias';
                            setLinking({ row, kind, scopes: linkScopes[kind] });
                          }}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </div>
    );
  }

  const definitions = (
    <>
      {variables.isPending || secrets.isPending ? <Spinner label="Loading variables…" /> : null}
      <ErrorMessage message={error === null ? undefined : messageOf(error)} />
      {variables.isSuccess && secrets.isSuccess && written.length === 0 ? (
        <div className="empty card">
          <h3>No variables yet</h3>
          <p className="muted">
            {level.own === 'SERVICE'
              ? 'Variables configure the service at deploy time. Set one here for this service, or for its whole environment or project.'
              : `Variables configure the services of this ${SCOPE_NOUNS[level.own]} at deploy time; a service’s own variable of the same name overrides one set here.`}
          </p>
        </div>
      ) : null}
      {variables.isSuccess && secrets.isSuccess && written.length > 0 ? writable.map(table) : null}
      {builtIns === 0 ? null : (
        <div className="below-table">
          <CheckboxField id={`${headingId}-show-built-ins`} label={`Show the ${builtIns} built-in variables`} checked={showBuiltIns} onChange={setShowBuiltIns} />
        </div>
      )}
      {showBuiltIns && builtIns > 0 ? table('BUILT_IN') : null}
    </>
  );

  return (
    <section aria-labelledby={headingId} className="variables-section">
      <div className="section-heading variables-section-heading">
        <h2 id={headingId} className={level.own === 'SERVICE' ? 'card-title' : undefined}>
          Variables
        </h2>
        <div className="section-actions">
          <Button
            variant="secondary"
            onPress={() => setImporting(true)}
            isDisabled={cannotWrite || importUnavailable !== undefined}
            aria-describedby={cannotWrite ? writeNote : importUnavailable === undefined ? undefined : importNote}
          >
            Import .env
          </Button>
          <Button onPress={() => setEditing('new')} isDisabled={cannotWrite} aria-describedby={describedBy}>
            New variable
          </Button>
        </div>
      </div>
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      {importUnavailable === undefined || cannotWrite ? null : (
        <p id={importNote} className="permission-note">
          {importUnavailable}
        </p>
      )}
      {level.own === 'PROJECT' ? (
        definitions
      ) : (
        <>
          <div className="view-switch" role="group" aria-label="Show">
            <Button variant="secondary" aria-pressed={view === 'definitions'} onPress={() => setView('definitions')}>
              Definitions by scope
            </Button>
            <Button variant="secondary" aria-pressed={view === 'resolved'} onPress={() => setView('resolved')}>
              {level.own === 'SERVICE' ? 'What the service receives' : 'What the environment resolves'}
            </Button>
          </div>
          {view === 'definitions' ? (
            definitions
          ) : level.own === 'SERVICE' ? (
            <>
              <p className="muted section-intro-below">Each name as the next deployment receives it: the scope that won, the aliases followed to its value, and what it overrides.</p>
              <ServiceResolvedVariables base={level.serviceBase ?? ''} />
            </>
          ) : (
            <>
              <p className="muted section-intro-below">
                Each name as the environment resolves it, which its services receive unless they set the name themselves: the scope that won, the aliases followed to its value, and what it overrides.
              </p>
              <EnvironmentResolvedVariables environmentId={level.environmentId ?? ''} />
            </>
          )}
        </>
      )}
      {importing && 'path' in level.importThrough ? (
        <ImportVariablesDialog
          importPath={level.importThrough.path}
          serviceScope={level.importThrough.serviceScope}
          scopes={writable}
          receivers={level.own === 'SERVICE' ? 'The service receives them' : 'The services receive them'}
          existing={existing}
          onImported={refresh}
          onClose={() => setImporting(false)}
        />
      ) : null}
      {editing === undefined ? null : <VariableDialog level={level} row={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} />}
      {linking === undefined ? null : (
        <LinkVariableDialog
          level={level}
          row={linking.row}
          kind={linking.kind}
          scopes={linking.scopes}
          onCreated={(anchor) => setFocusing(anchor)}
          onClose={() => setLinking(undefined)}
        />
      )}
      {deleting === undefined ? null : <DeleteVariableDialog level={level} row={deleting} overridden={links.get(deleting)?.overridden} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

/** A `$NAME` value the API did not resolve (the name is not set where the alias can see it). */
function aliasWritten(value: string | undefined): VariableRow['alias'] {
  const named = value === undefined ? undefined : /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(value)?.[1];
  return named === undefined ? undefined : { key: named, id: undefined };
}

interface RowLinks {
  aliased: VariableRow | undefined;
  overridden: VariableRow | undefined;
  overriddenBy: VariableRow | undefined;
}

/**
 * What each row links to. An alias names the row the API resolved it to. An override is the API's when it made one
 * (`…/override`); a definition created with a name a broader scope holds overrides it too (the resolved view says
 * so), so that is the nearest broader row of the name. The overridden row links back to the nearest narrower one.
 */
function linksOf(rows: readonly VariableRow[]): Map<VariableRow, RowLinks> {
  const rank = (row: VariableRow) => GROUPS.indexOf(row.group);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const nearestBroader = (row: VariableRow) =>
    rows.filter((candidate) => candidate.key === row.key && rank(candidate) > rank(row)).sort((a, b) => rank(a) - rank(b))[0];
  const overriddenOf = new Map(rows.map((row) => [row, row.overriddenId === undefined ? nearestBroader(row) : (byId.get(row.overriddenId) ?? nearestBroader(row))]));
  const links = new Map<VariableRow, RowLinks>();
  for (const row of rows) {
    const alias = row.alias;
    const aliased =
      alias === undefined
        ? undefined
        : ((alias.id === undefined ? undefined : byId.get(alias.id)) ??
          rows.filter((candidate) => candidate.key === alias.key && rank(candidate) >= rank(row) && candidate !== row).sort((a, b) => rank(a) - rank(b))[0]);
    const overriddenBy = rows.filter((candidate) => overriddenOf.get(candidate) === row).sort((a, b) => rank(b) - rank(a))[0];
    links.set(row, { aliased, overridden: overriddenOf.get(row), overriddenBy });
  }
  return links;
}

/** Create a variable (at a scope the page writes, plain or secret, optionally a file), or edit one; a secret's value is write-only. */
function VariableDialog({ level, row, onClose }: { level: VariablesLevel; row: VariableRow | undefined; onClose: () => void }) {
  const scopes = writableScopes(level);
  const [key, setKey] = useState(row?.key ?? '');
  const [value, setValue] = useState(row?.secret === true || row?.alias !== undefined ? (row.alias === undefined ? '' : `$${row.alias.key}`) : (row?.value ?? ''));
  const [secret, setSecret] = useState(row?.secret ?? false);
  const [scope, setScope] = useState<WritableScope>(row === undefined || row.group === 'BUILT_IN' ? level.own : row.group);
  const [mountPath, setMountPath] = useState(row?.mountPath ?? '');
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshVariables();
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
      if (row === undefined) await apiRequest('POST', collectionPath(level, scope, secret), body);
      else await apiRequest('PUT', `${collectionPath(level, scope, row.secret)}/${row.id}`, body);
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
        {row === undefined ? <CheckboxField id="variable-secret" label="Secret (write-only: its value is never shown again)" checked={secret} onChange={setSecret} /> : null}
        {row === undefined && scopes.length > 1 ? (
          <SelectField id="variable-scope" label="Scope" value={scope} onChange={setScope} options={scopes.map((option) => ({ value: option, label: SCOPE_OPTIONS[option] }))} />
        ) : (
          <p className="muted">Scope: {SCOPE_OPTIONS[scope].toLowerCase()}</p>
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

/**
 * "Alias…" (a new name whose value is always the row's: a secret's alias is a secret) or "Override…" (the row's name
 * with another value, for every service of a narrower scope), created through the row's own operation at the scope
 * chosen (`/environment/{id}/secret/{secretId}/alias`, `/application/{id}/environmentVariable/{id}/override`, …).
 */
function LinkVariableDialog({
  level,
  row,
  kind,
  scopes,
  onCreated,
  onClose,
}: {
  level: VariablesLevel;
  row: VariableRow;
  kind: LinkKind;
  /** Where it can land, narrowest first: the page's own scope is the default. */
  scopes: readonly WritableScope[];
  /** The new row's anchor, to focus it once the tables show it. */
  onCreated: (anchor: string) => void;
  onClose: () => void;
}) {
  const [scope, setScope] = useState<WritableScope>(scopes[0] ?? level.own);
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshVariables();
  const fields = fieldErrorsOf(error);
  const alias = kind === 'alias';
  const owner = row.group === 'BUILT_IN' ? 'the built-in variable' : `${row.group === level.own ? 'this' : 'the'} ${SCOPE_NOUNS[row.group]}’s ${row.secret ? 'secret' : 'variable'}`;
  const source = `${row.key}, ${owner}`;

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      const body = alias ? { key: text.trim() } : { value: text };
      const created = await apiRequest<{ key: string }>('POST', `${collectionPath(level, scope, row.secret)}/${row.id}/${kind}`, body);
      await refresh();
      onCreated(anchorOf({ ...row, key: created.key, group: scope }));
      onClose();
    } catch (caught) {
      setError(caught);
      setPending(false);
    }
  }

  function change(value: string) {
    setText(value);
    setError(undefined);
  }

  return (
    <ModalDialog title={`${alias ? 'Alias' : 'Override'} ${row.key}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <p>
          {alias
            ? `A new name whose value is always that of ${source}, following its changes${row.secret ? '; the alias is a secret too' : ''}.`
            : `Another value for ${source}: the services where it lands get it instead, under the same name.`}
        </p>
        {alias ? (
          <TextField label="New name" value={text} onChange={change} isRequired autoFocus maxLength={255} errorMessage={fields.get('key')} description="Letters, digits and underscores, not starting with a digit." />
        ) : (
          <TextField
            label="Value"
            value={text}
            onChange={change}
            type={row.secret ? 'password' : 'text'}
            autoComplete="off"
            autoFocus
            errorMessage={fields.get('value')}
            description={row.secret ? 'Write-only, like every secret: it is never shown again.' : undefined}
          />
        )}
        {scopes.length > 1 ? (
          <SelectField id={`${kind}-scope`} label="Lands in" value={scope} onChange={setScope} options={scopes.map((option) => ({ value: option, label: SCOPE_OPTIONS[option] }))} />
        ) : (
          <p className="muted">Lands in: {SCOPE_OPTIONS[scope].toLowerCase()}</p>
        )}
        <ErrorMessage message={error === undefined ? undefined : summaryOf(error)} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">{alias ? 'Create alias' : 'Override'}</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteVariableDialog({ level, row, overridden, onClose }: { level: VariablesLevel; row: VariableRow; overridden: VariableRow | undefined; onClose: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshVariables();
  const scope = row.group === 'BUILT_IN' ? level.own : row.group;
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    try {
      await apiRequest('DELETE', `${collectionPath(level, scope, row.secret)}/${row.id}`);
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
          {scope === 'SERVICE' ? 'The service' : `Every service of the ${SCOPE_NOUNS[scope]}`} loses {row.key} at its next deployment
          {overridden === undefined ? '' : `; the ${SCOPE_NOUNS[overridden.group]} value it overrides applies again`}.
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
