import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { ActionsMenu, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type CustomRole = components['schemas']['OrganizationCustomRole'];
type EnvironmentType = CustomRole['default_project_permissions'][number]['environment_type'];
type ProjectPermission = CustomRole['default_project_permissions'][number]['permission'];
type ClusterPermission = CustomRole['cluster_permissions'][number]['permission'];
type OrganizationPermission = CustomRole['organization_permission'];

const BUILT_IN: readonly { name: string; what: string }[] = [
  { name: 'Owner', what: 'Everything, including billing, deleting the organization and transferring its ownership. One per organization.' },
  { name: 'Admin', what: 'Everything but deleting the organization and transferring ownership: members, tokens, clusters, billing, every project.' },
  { name: 'Developer', what: 'Creates and manages projects, environments and services, and deploys them. Reads the organization’s settings.' },
  { name: 'Viewer', what: 'Reads everything it is shown; changes nothing.' },
];
const ENVIRONMENT_TYPES: readonly { value: EnvironmentType; label: string }[] = [
  { value: 'PRODUCTION', label: 'Production' },
  { value: 'STAGING', label: 'Staging' },
  { value: 'DEVELOPMENT', label: 'Development' },
  { value: 'PREVIEW', label: 'Preview' },
];
const PROJECT_PERMISSIONS: readonly { value: ProjectPermission; label: string }[] = [
  { value: 'NO_ACCESS', label: 'No access' },
  { value: 'VIEWER', label: 'Viewer' },
  { value: 'DEPLOYER', label: 'Deployer' },
  { value: 'MANAGER', label: 'Manager' },
];
const CLUSTER_PERMISSIONS: readonly { value: ClusterPermission | ''; label: string }[] = [
  { value: '', label: 'No access' },
  { value: 'VIEWER', label: 'Viewer' },
  { value: 'ENV_CREATOR', label: 'Creates environments' },
  { value: 'ADMIN', label: 'Admin' },
];
const ORGANIZATION_PERMISSIONS: readonly { value: OrganizationPermission; label: string }[] = [
  { value: 'VIEWER', label: 'Viewer: reads the organization' },
  { value: 'MANAGER', label: 'Manager: also creates projects, registries, tokens…' },
];

/** A custom role's change shows in the custom roles and in the roles offered to members, tokens and invitations. */
const ROLE_LISTS = ['/organization/{organizationId}/customRole', '/organization/{organizationId}/availableRole'] as const;

function labelOf<Value>(options: readonly { value: Value; label: string }[], value: Value): string {
  return options.find((option) => option.value === value)?.label ?? String(value);
}

/** The built-in roles (what each allows) and the organization's custom roles with their editor. */
export function RolesSettings() {
  const { organizationId } = route.useParams();
  const roles = api.useQuery('get', '/organization/{organizationId}/customRole', { params: { path: { organizationId } } });
  const [editing, setEditing] = useState<CustomRole | 'new' | undefined>();
  const [deleting, setDeleting] = useState<CustomRole | undefined>();
  const list = roles.data?.results ?? [];
  return (
    <>
      <section aria-labelledby="built-in-heading" className="section">
        <h2 id="built-in-heading" className="section-title">
          Built-in roles
        </h2>
        <dl className="card role-list">
          {BUILT_IN.map((role) => (
            <div key={role.name}>
              <dt>{role.name}</dt>
              <dd>{role.what}</dd>
            </div>
          ))}
        </dl>
      </section>
      <ListSection
        id="custom-heading"
        title="Custom roles"
        query={roles}
        count={list.length}
        loadingLabel="Loading custom roles…"
        create={{ label: 'New custom role', onPress: () => setEditing('new') }}
        empty={{
          title: 'No custom roles yet',
          text: 'A custom role gives per environment type access to projects (say, deploy to staging but only read production) and access to chosen clusters.',
        }}
        columns={['Role', 'Organization', 'Projects by default', 'Clusters']}
      >
        {list.map((role) => (
          <tr key={role.id}>
            <th scope="row">
              {role.name}
              {role.description ? <span className="kind-label">{role.description}</span> : null}
            </th>
            <td data-label="Organization">{role.organization_permission === 'MANAGER' ? 'Manager' : 'Viewer'}</td>
            <td data-label="Projects by default">
              <ul className="plain-list">
                {ENVIRONMENT_TYPES.map((type) => {
                  const entry = role.default_project_permissions.find((permission) => permission.environment_type === type.value);
                  return (
                    <li key={type.value}>
                      {type.label}: {labelOf(PROJECT_PERMISSIONS, entry?.permission ?? 'NO_ACCESS')}
                      {entry?.reveal_secrets === true ? ', reveals secrets' : ''}
                    </li>
                  );
                })}
              </ul>
            </td>
            <td data-label="Clusters">
              {role.cluster_permissions.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                <ul className="plain-list">
                  {role.cluster_permissions.map((permission) => (
                    <li key={permission.cluster_id}>
                      {permission.cluster_name}: {labelOf(CLUSTER_PERMISSIONS, permission.permission)}
                    </li>
                  ))}
                </ul>
              )}
            </td>
            <td className="actions-cell">
              <ActionsMenu
                label={`Actions for ${role.name}`}
                actions={[
                  { id: 'edit', label: 'Edit…' },
                  { id: 'delete', label: 'Delete…', danger: true },
                ]}
                onAction={(id) => (id === 'edit' ? setEditing(role) : setDeleting(role))}
              />
            </td>
          </tr>
        ))}
      </ListSection>
      {editing === undefined ? null : <RoleEditor organizationId={organizationId} role={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} />}
      {deleting === undefined ? null : <DeleteRoleDialog organizationId={organizationId} role={deleting} onClose={() => setDeleting(undefined)} />}
    </>
  );
}

interface Draft {
  name: string;
  description: string;
  organizationPermission: OrganizationPermission;
  projects: Record<EnvironmentType, { permission: ProjectPermission; reveal: boolean }>;
  clusters: Record<string, ClusterPermission | ''>;
}

function draftOf(role: CustomRole | undefined): Draft {
  const projects = Object.fromEntries(
    ENVIRONMENT_TYPES.map((type) => {
      const entry = role?.default_project_permissions.find((permission) => permission.environment_type === type.value);
      return [type.value, { permission: entry?.permission ?? 'NO_ACCESS', reveal: entry?.reveal_secrets ?? false }];
    }),
  ) as Draft['projects'];
  return {
    name: role?.name ?? '',
    description: role?.description ?? '',
    organizationPermission: role?.organization_permission ?? 'VIEWER',
    projects,
    clusters: Object.fromEntries((role?.cluster_permissions ?? []).map((permission) => [permission.cluster_id, permission.permission])),
  };
}

/**
 * Creating or editing a custom role: organization permission, the default permission on every project per environment
 * type (with "reveal secrets"), and per cluster. Per project exceptions are kept as they are (the editor has no page for
 * them yet; the API's `project_permissions`).
 */
function RoleEditor({ organizationId, role, onClose }: { organizationId: string; role: CustomRole | undefined; onClose: () => void }) {
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', { params: { path: { organizationId } } });
  const [draft, setDraft] = useState<Draft>(() => draftOf(role));
  const done = useRefreshThenClose(ROLE_LISTS, onClose);
  const create = api.useMutation('post', '/organization/{organizationId}/customRole', done);
  const edit = api.useMutation('put', '/organization/{organizationId}/customRole/{customRoleId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, role !== undefined);
  function change(next: Partial<Draft>) {
    reset();
    setDraft((current) => ({ ...current, ...next }));
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = {
      name: draft.name.trim(),
      description: draft.description.trim() === '' ? null : draft.description.trim(),
      organization_permission: draft.organizationPermission,
      default_project_permissions: ENVIRONMENT_TYPES.map((type) => ({
        environment_type: type.value,
        permission: draft.projects[type.value].permission,
        reveal_secrets: draft.projects[type.value].permission !== 'NO_ACCESS' && draft.projects[type.value].reveal,
      })),
      cluster_permissions: Object.entries(draft.clusters)
        .filter((entry): entry is [string, ClusterPermission] => entry[1] !== '')
        .map(([clusterId, permission]) => ({ cluster_id: clusterId, permission })),
      project_permissions: (role?.project_permissions ?? []).map((entry) => ({
        project_id: entry.project_id,
        is_admin: entry.is_admin,
        permissions: entry.permissions.map((permission) => ({ environment_type: permission.environment_type, permission: permission.permission, reveal_secrets: permission.reveal_secrets })),
      })),
    };
    if (role === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, customRoleId: role.id } }, body });
  }
  const clusterList = clusters.data?.results ?? [];
  return (
    <ModalDialog title={role === undefined ? 'New custom role' : `Edit ${role.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={draft.name} onChange={(name) => change({ name })} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={draft.description} onChange={(description) => change({ description })} maxLength={2000} />
        <SelectField id="role-organization" label="Organization" value={draft.organizationPermission} onChange={(organizationPermission) => change({ organizationPermission })} options={ORGANIZATION_PERMISSIONS} />
        <fieldset className="fieldset">
          <legend>Every project, by environment type</legend>
          <div className="permission-grid">
            {ENVIRONMENT_TYPES.map((type) => {
              const entry = draft.projects[type.value];
              return (
                <div key={type.value} className="permission-row">
                  <SelectField
                    id={`role-project-${type.value}`}
                    label={type.label}
                    value={entry.permission}
                    onChange={(permission) => change({ projects: { ...draft.projects, [type.value]: { ...entry, permission } } })}
                    options={PROJECT_PERMISSIONS}
                  />
                  <div className="checkbox-field">
                    <input
                      id={`role-reveal-${type.value}`}
                      type="checkbox"
                      checked={entry.reveal && entry.permission !== 'NO_ACCESS'}
                      disabled={entry.permission === 'NO_ACCESS'}
                      onChange={(event) => change({ projects: { ...draft.projects, [type.value]: { ...entry, reveal: event.target.checked } } })}
                    />
                    <label htmlFor={`role-reveal-${type.value}`}>Reveals secrets in {type.label.toLowerCase()}</label>
                  </div>
                </div>
              );
            })}
          </div>
        </fieldset>
        <fieldset className="fieldset">
          <legend>Clusters</legend>
          {clusters.isPending ? <Spinner label="Loading clusters…" /> : null}
          <ErrorMessage message={clusters.isError ? messageOf(clusters.error) : undefined} />
          {clusters.isSuccess && clusterList.length === 0 ? <p className="muted">The organization has no cluster yet.</p> : null}
          <div className="permission-grid">
            {clusterList.map((cluster) => (
              <SelectField
                key={cluster.id}
                id={`role-cluster-${cluster.id}`}
                label={cluster.name}
                value={draft.clusters[cluster.id] ?? ''}
                onChange={(permission) => change({ clusters: { ...draft.clusters, [cluster.id]: permission } })}
                options={CLUSTER_PERMISSIONS}
              />
            ))}
          </div>
        </fieldset>
        {role !== undefined && role.project_permissions.length > 0 ? (
          <p className="muted small">Exceptions for {role.project_permissions.map((entry) => entry.project_name).join(', ')} are kept as they are.</p>
        ) : null}
        <FormActions error={summary} onCancel={onClose} submitLabel={role === undefined ? 'Create role' : 'Save role'} />
      </Form>
    </ModalDialog>
  );
}

function DeleteRoleDialog({ organizationId, role, onClose }: { organizationId: string; role: CustomRole; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/customRole/{customRoleId}', useRefreshThenClose(ROLE_LISTS, onClose));
  return (
    <DeleteByNameDialog
      name={role.name}
      explanation="The role is deleted. The API refuses while members, API tokens or pending invitations carry it: give them another role first."
      confirmLabel="Delete role"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, customRoleId: role.id } } })}
      onClose={onClose}
    />
  );
}
