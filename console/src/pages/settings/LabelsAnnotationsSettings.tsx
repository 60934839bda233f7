import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { CheckboxGroup } from '../../ui/CheckboxGroup.tsx';
import { ActionsMenu, Button, ErrorMessage, ModalDialog, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { KeyValueRows, type KeyValueRow } from '../../ui/KeyValueRows.tsx';
import { ListSection } from '../../ui/ListSection.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type LabelsGroup = components['schemas']['OrganizationLabelsGroupResponse'];
type AnnotationsGroup = components['schemas']['OrganizationAnnotationsGroupResponse'];
type Scope = components['schemas']['OrganizationAnnotationsGroupScopeEnum'];

const LABELS_GROUPS = '/organization/{organizationId}/labelsGroups' as const;
const ANNOTATIONS_GROUPS = '/organization/{organizationId}/annotationsGroups' as const;
const SCOPES: readonly { value: Scope; label: string }[] = [
  { value: 'DEPLOYMENTS', label: 'Deployments' },
  { value: 'STATEFUL_SETS', label: 'Stateful sets' },
  { value: 'SERVICES', label: 'Services' },
  { value: 'INGRESS', label: 'Ingresses' },
  { value: 'GATEWAY_API_ROUTES', label: 'Gateway API routes' },
  { value: 'HPA', label: 'Autoscalers (HPA)' },
  { value: 'PODS', label: 'Pods' },
  { value: 'SECRETS', label: 'Secrets' },
  { value: 'JOBS', label: 'Jobs' },
  { value: 'CRON_JOBS', label: 'Cron jobs' },
];
/** Kubernetes caps a label's value at 63 characters; annotation values share a 256 KiB total, checked by the API. */
const LABEL_VALUE_MAX = 63;
const ANNOTATION_VALUE_MAX = 262_144;

type Dialog =
  | { kind: 'new-labels' }
  | { kind: 'new-annotations' }
  | { kind: 'edit-labels' | 'delete-labels' | 'used-labels'; group: LabelsGroup }
  | { kind: 'edit-annotations' | 'delete-annotations' | 'used-annotations'; group: AnnotationsGroup };

/**
 * Labels and annotations groups: named sets of Kubernetes labels (each optionally propagated to the cloud provider's
 * resources) and annotations (applied to the kinds of resources chosen), which clusters and services then attach.
 */
export function LabelsAnnotationsSettings() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const labels = api.useQuery('get', LABELS_GROUPS, path);
  const annotations = api.useQuery('get', ANNOTATIONS_GROUPS, path);
  const [dialog, setDialog] = useState<Dialog | undefined>();
  const labelsList = labels.data?.results ?? [];
  const annotationsList = annotations.data?.results ?? [];
  const close = () => setDialog(undefined);
  return (
    <>
      <ListSection
        id="labels-heading"
        title="Labels groups"
        intro="Labels are added to the Kubernetes resources of the clusters and services that attach a group."
        query={labels}
        count={labelsList.length}
        loadingLabel="Loading labels groups…"
        create={{ label: 'New labels group', onPress: () => setDialog({ kind: 'new-labels' }) }}
        empty={{ title: 'No labels groups yet', text: 'Group the labels your tooling expects (team, cost centre…) once, and attach the group where it applies.' }}
        columns={['Name', 'Labels']}
      >
        {labelsList.map((group) => (
          <tr key={group.id}>
            <th scope="row">{group.name}</th>
            <td data-label="Labels">
              <ul className="plain-list">
                {group.labels.map((label) => (
                  <li key={label.key}>
                    <code>
                      {label.key}={label.value}
                    </code>
                    {label.propagate_to_cloud_provider ? <span className="tag tag-inline">cloud provider too</span> : null}
                  </li>
                ))}
              </ul>
            </td>
            <td className="actions-cell">
              <GroupActions name={group.name} onAction={(action) => setDialog({ kind: `${action}-labels`, group })} />
            </td>
          </tr>
        ))}
      </ListSection>
      <ListSection
        id="annotations-heading"
        title="Annotations groups"
        intro="Annotations are added to the kinds of Kubernetes resources a group names, in the clusters and services that attach it."
        query={annotations}
        count={annotationsList.length}
        loadingLabel="Loading annotations groups…"
        create={{ label: 'New annotations group', onPress: () => setDialog({ kind: 'new-annotations' }) }}
        empty={{ title: 'No annotations groups yet', text: 'Group the annotations your ingress controller, service mesh or monitoring reads, and attach the group where it applies.' }}
        columns={['Name', 'Annotations', 'Applied to']}
      >
        {annotationsList.map((group) => (
          <tr key={group.id}>
            <th scope="row">{group.name}</th>
            <td data-label="Annotations">
              <ul className="plain-list">
                {group.annotations.map((annotation) => (
                  <li key={annotation.key}>
                    <code>
                      {annotation.key}={annotation.value.length > 60 ? `${annotation.value.slice(0, 60)}…` : annotation.value}
                    </code>
                  </li>
                ))}
              </ul>
            </td>
            <td data-label="Applied to">{group.scopes.map((scope) => SCOPES.find((entry) => entry.value === scope)?.label ?? scope).join(', ')}</td>
            <td className="actions-cell">
              <GroupActions name={group.name} onAction={(action) => setDialog({ kind: `${action}-annotations`, group })} />
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new-labels' ? <LabelsGroupDialog organizationId={organizationId} onClose={close} /> : null}
      {dialog?.kind === 'edit-labels' ? <LabelsGroupDialog organizationId={organizationId} group={dialog.group} onClose={close} /> : null}
      {dialog?.kind === 'new-annotations' ? <AnnotationsGroupDialog organizationId={organizationId} onClose={close} /> : null}
      {dialog?.kind === 'edit-annotations' ? <AnnotationsGroupDialog organizationId={organizationId} group={dialog.group} onClose={close} /> : null}
      {dialog?.kind === 'used-labels' ? <UsedByDialog organizationId={organizationId} kind="labels" group={dialog.group} onClose={close} /> : null}
      {dialog?.kind === 'used-annotations' ? <UsedByDialog organizationId={organizationId} kind="annotations" group={dialog.group} onClose={close} /> : null}
      {dialog?.kind === 'delete-labels' ? <DeleteLabelsGroupDialog organizationId={organizationId} group={dialog.group} onClose={close} /> : null}
      {dialog?.kind === 'delete-annotations' ? <DeleteAnnotationsGroupDialog organizationId={organizationId} group={dialog.group} onClose={close} /> : null}
    </>
  );
}

function GroupActions({ name, onAction }: { name: string; onAction: (action: 'edit' | 'used' | 'delete') => void }) {
  return (
    <ActionsMenu
      label={`Actions for ${name}`}
      actions={[
        { id: 'edit', label: 'Edit…' },
        { id: 'used', label: 'Where it is used…' },
        { id: 'delete', label: 'Delete…', danger: true },
      ]}
      onAction={(id) => onAction(id as 'edit' | 'used' | 'delete')}
    />
  );
}

/** A group's rows as sent: blank rows (an added row left empty) are dropped rather than refused. */
function filledRows(rows: readonly KeyValueRow[]): KeyValueRow[] {
  return rows.filter((row) => row.key.trim() !== '' || row.value.trim() !== '').map((row) => ({ ...row, key: row.key.trim() }));
}

function LabelsGroupDialog({ organizationId, group, onClose }: { organizationId: string; group?: LabelsGroup; onClose: () => void }) {
  const [name, setName] = useState(group?.name ?? '');
  const [rows, setRows] = useState<KeyValueRow[]>(group?.labels.map((label) => ({ key: label.key, value: label.value, propagate: label.propagate_to_cloud_provider })) ?? [{ key: '', value: '', propagate: false }]);
  const done = useRefreshThenClose([LABELS_GROUPS], onClose);
  const create = api.useMutation('post', LABELS_GROUPS, done);
  const edit = api.useMutation('put', '/organization/{organizationId}/labelsGroups/{labelsGroupId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, group !== undefined);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = { name: name.trim(), labels: filledRows(rows).map((row) => ({ key: row.key, value: row.value, propagate_to_cloud_provider: row.propagate === true })) };
    if (group === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, labelsGroupId: group.id } }, body });
  }
  return (
    <ModalDialog title={group === undefined ? 'New labels group' : `Edit ${group.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <KeyValueRows id="labels" legend="Labels" rows={rows} onChange={(next) => (reset(), setRows(next))} fields={fields} field="labels" propagateLabel="Also on the cloud provider's resources" valueMaxLength={LABEL_VALUE_MAX} />
        <FormActions error={summary} onCancel={onClose} submitLabel={group === undefined ? 'Create labels group' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

function AnnotationsGroupDialog({ organizationId, group, onClose }: { organizationId: string; group?: AnnotationsGroup; onClose: () => void }) {
  const [name, setName] = useState(group?.name ?? '');
  const [rows, setRows] = useState<KeyValueRow[]>(group?.annotations.map((annotation) => ({ key: annotation.key, value: annotation.value })) ?? [{ key: '', value: '' }]);
  const [scopes, setScopes] = useState<Scope[]>(group?.scopes ?? ['DEPLOYMENTS', 'STATEFUL_SETS']);
  const done = useRefreshThenClose([ANNOTATIONS_GROUPS], onClose);
  const create = api.useMutation('post', ANNOTATIONS_GROUPS, done);
  const edit = api.useMutation('put', '/organization/{organizationId}/annotationsGroups/{annotationsGroupId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, group !== undefined);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = { name: name.trim(), annotations: filledRows(rows).map((row) => ({ key: row.key, value: row.value })), scopes };
    if (group === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, annotationsGroupId: group.id } }, body });
  }
  return (
    <ModalDialog title={group === undefined ? 'New annotations group' : `Edit ${group.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <KeyValueRows id="annotations" legend="Annotations" rows={rows} onChange={(next) => (reset(), setRows(next))} fields={fields} field="annotations" valueMaxLength={ANNOTATION_VALUE_MAX} />
        <CheckboxGroup id="annotations-scopes" legend="Applied to" options={SCOPES} selected={scopes} onChange={(next) => (reset(), setScopes(next))} errorMessage={fields.get('scopes')} />
        <FormActions error={summary} onCancel={onClose} submitLabel={group === undefined ? 'Create annotations group' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

/** The clusters and services a group is attached to (what a delete would be refused for). */
function UsedByDialog({ organizationId, kind, group, onClose }: { organizationId: string; kind: 'labels' | 'annotations'; group: LabelsGroup | AnnotationsGroup; onClose: () => void }) {
  const labelsItems = api.useQuery('get', '/organization/{organizationId}/labelsGroups/{labelsGroupId}/associatedItems', { params: { path: { organizationId, labelsGroupId: group.id } } }, { enabled: kind === 'labels' });
  const annotationsItems = api.useQuery('get', '/organization/{organizationId}/annotationsGroups/{annotationsGroupId}/associatedItems', { params: { path: { organizationId, annotationsGroupId: group.id } } }, { enabled: kind === 'annotations' });
  const items = kind === 'labels' ? labelsItems : annotationsItems;
  const list = items.data?.results ?? [];
  return (
    <ModalDialog title={`Where ${group.name} is used`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      {items.isPending ? <Spinner label="Loading…" /> : null}
      <ErrorMessage message={items.isError ? messageOf(items.error) : undefined} />
      {items.isSuccess && list.length === 0 ? <p className="muted">No cluster or service uses it.</p> : null}
      <ul className="plain-list service-links">
        {list.map((item) => (
          <li key={item.item_id}>
            <strong>{item.item_name}</strong> <span className="muted">({item.item_type.toLowerCase().replaceAll('_', ' ')})</span>
          </li>
        ))}
      </ul>
      <div className="form-actions">
        <Button onPress={onClose}>Close</Button>
      </div>
    </ModalDialog>
  );
}

const DELETE_EXPLANATION = 'The group is deleted. The API refuses while clusters or services still attach it (see where it is used).';

function DeleteLabelsGroupDialog({ organizationId, group, onClose }: { organizationId: string; group: LabelsGroup; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/labelsGroups/{labelsGroupId}', useRefreshThenClose([LABELS_GROUPS], onClose));
  return (
    <DeleteByNameDialog
      name={group.name}
      explanation={DELETE_EXPLANATION}
      confirmLabel="Delete labels group"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, labelsGroupId: group.id } } })}
      onClose={onClose}
    />
  );
}

function DeleteAnnotationsGroupDialog({ organizationId, group, onClose }: { organizationId: string; group: AnnotationsGroup; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/annotationsGroups/{annotationsGroupId}', useRefreshThenClose([ANNOTATIONS_GROUPS], onClose));
  return (
    <DeleteByNameDialog
      name={group.name}
      explanation={DELETE_EXPLANATION}
      confirmLabel="Delete annotations group"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, annotationsGroupId: group.id } } })}
      onClose={onClose}
    />
  );
}
