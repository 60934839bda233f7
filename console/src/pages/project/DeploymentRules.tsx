import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type Cluster, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { ActionsMenu, Button, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { DEFAULT_SCHEDULE, scheduleBody, ScheduleFields, scheduleOf, scheduleSummary, type ScheduleDraft } from '../environment/DeploymentSchedule.tsx';
import { useFocusAfterChange } from '../../ui/focus-after-change.ts';

type Rule = components['schemas']['ProjectDeploymentRule'];
type Mode = Rule['mode'];

const RULES = '/project/{projectId}/deploymentRule' as const;
const MODES: readonly { value: Mode; label: string }[] = [
  { value: 'DEVELOPMENT', label: 'Development' },
  { value: 'STAGING', label: 'Staging' },
  { value: 'PRODUCTION', label: 'Production' },
  { value: 'PREVIEW', label: 'Preview' },
];

function modeLabel(mode: Mode): string {
  return MODES.find((entry) => entry.value === mode)?.label ?? mode;
}

/**
 * A project's deployment rules (docs/deployment-rules.md): when an environment is created in the project, the rules
 * are tried in priority order and the first whose pattern matches the new name places it on its cluster with its mode
 * and gives it its schedule. Listed in that order; created (tried last), edited, deleted, and moved earlier or later
 * (the whole order is sent, as the API wants it). After a move the focus goes back to the button that made it.
 */
export function DeploymentRules({ organizationId, projectId }: { organizationId: string; projectId: string }) {
  const rules = api.useQuery('get', RULES, { params: { path: { projectId } } });
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', { params: { path: { organizationId } } });
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const idPrefix = useId();
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'delete'; rule: Rule } | undefined>();
  const [announcement, setAnnouncement] = useState('');
  const [failure, setFailure] = useState<{ id: string; message: string } | undefined>();
  const queryClient = useQueryClient();
  const reorder = api.useMutation('put', '/project/{projectId}/deploymentRule/order');
  const list = rules.data?.results ?? [];
  const clusterList = clusters.data?.results ?? [];
  const controlId = (what: string, id: string) => `${idPrefix}-${what}-${id}`;

  const setFocusAfter = useFocusAfterChange(rules.data);

  async function move(rule: Rule, direction: 'earlier' | 'later') {
    const index = list.findIndex((candidate) => candidate.id === rule.id);
    const target = direction === 'earlier' ? index - 1 : index + 1;
    const neighbour = list[target];
    if (neighbour === undefined || reorder.isPending) return;
    setFailure(undefined);
    const ids = list.map((candidate) => candidate.id);
    ids[target] = rule.id;
    ids[index] = neighbour.id;
    try {
      await reorder.mutateAsync({ params: { path: { projectId } }, body: { project_deployment_rule_ids_in_order: ids } });
      await queryClient.invalidateQueries({ queryKey: ['get', RULES] });
      setAnnouncement(`${rule.name} is now tried ${ordinal(target + 1)}.`);
      setFocusAfter([controlId(direction, rule.id), controlId(direction === 'earlier' ? 'later' : 'earlier', rule.id)]);
    } catch (error) {
      setFailure({ id: rule.id, message: messageOf(error) });
    }
  }

  return (
    <section aria-labelledby={`${idPrefix}-heading`} className="section deployment-rules">
      <div className="section-heading">
        <h2 id={`${idPrefix}-heading`}>Deployment rules</h2>
        {list.length === 0 ? null : (
          <Button onPress={() => setDialog({ kind: 'new' })} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
            New rule
          </Button>
        )}
      </div>
      <p className="muted section-intro">When an environment is created here, the rules are tried from the first: the first whose pattern matches its name places it on the rule’s cluster with the rule’s mode (unless the creation names them) and gives it the rule’s schedule. Rules change nothing for environments that exist.</p>
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      {rules.isPending ? <Spinner label="Loading the deployment rules…" /> : null}
      <ErrorMessage message={rules.isError ? messageOf(rules.error) : undefined} />
      <p role="status" className="saved-note">
        {announcement}
      </p>
      {rules.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3>No deployment rules yet</h3>
          <p className="muted">Add one to place new environments by their name: say, every pr-* environment on the preview cluster, stopped at night.</p>
          <Button onPress={() => setDialog({ kind: 'new' })} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
            New rule
          </Button>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table" aria-labelledby={`${idPrefix}-heading`}>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Environments</th>
              <th scope="col">Placed on</th>
              <th scope="col">Schedule</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((rule, index) => (
              <tr key={rule.id}>
                <th scope="row">
                  <span className="deployment-rule-order">{index + 1}.</span> {rule.name}
                  {rule.description ? <span className="kind-label">{rule.description}</span> : null}
                  {failure?.id === rule.id ? <ErrorMessage message={failure.message} /> : null}
                </th>
                <td data-label="Environments">{rule.wildcard === '' ? <span className="muted">every name</span> : <code>{rule.wildcard}</code>}</td>
                <td data-label="Placed on">
                  {clusterList.find((cluster) => cluster.id === rule.cluster_id)?.name ?? 'a cluster'}
                  <span className="kind-label">{modeLabel(rule.mode)}</span>
                </td>
                <td data-label="Schedule">{scheduleSummary(scheduleOf(rule))}</td>
                <td className="actions-cell">
                  <Button variant="secondary" id={controlId('earlier', rule.id)} aria-label={`Try ${rule.name} earlier`} onPress={() => void move(rule, 'earlier')} isDisabled={cannotWrite || index === 0}>
                    <span aria-hidden="true">↑</span>
                  </Button>
                  <Button variant="secondary" id={controlId('later', rule.id)} aria-label={`Try ${rule.name} later`} onPress={() => void move(rule, 'later')} isDisabled={cannotWrite || index === list.length - 1}>
                    <span aria-hidden="true">↓</span>
                  </Button>
                  <ActionsMenu
                    label={`Actions for rule ${rule.name}`}
                    actions={[
                      { id: 'edit', label: 'Edit…', isDisabled: cannotWrite },
                      { id: 'delete', label: 'Delete…', danger: true, isDisabled: cannotWrite },
                    ]}
                    onAction={(action) => setDialog({ kind: action as 'edit' | 'delete', rule })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {dialog?.kind === 'new' ? <RuleDialog projectId={projectId} clusters={clusterList} clustersLoading={clusters.isPending} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <EditRuleDialog projectId={projectId} ruleId={dialog.rule.id} clusters={clusterList} clustersLoading={clusters.isPending} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteRuleDialog projectId={projectId} rule={dialog.rule} onClose={() => setDialog(undefined)} /> : null}
    </section>
  );
}

/** 1 → "1st", 2 → "2nd", 11 → "11th". */
function ordinal(position: number): string {
  const tens = position % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][position % 10] ?? 'th');
  return `${position}${suffix}`;
}

/** The edit reads the rule as stored now (another person may have changed it since the list was read). */
function EditRuleDialog({ projectId, ruleId, clusters, clustersLoading, onClose }: { projectId: string; ruleId: string; clusters: Cluster[]; clustersLoading: boolean; onClose: () => void }) {
  const rule = api.useQuery('get', '/project/{projectId}/deploymentRule/{deploymentRuleId}', { params: { path: { projectId, deploymentRuleId: ruleId } } });
  if (rule.data === undefined) {
    return (
      <ModalDialog title="Edit rule" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
        {rule.isError ? <ErrorMessage message={messageOf(rule.error)} /> : <Spinner label="Loading the rule…" />}
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Close
          </Button>
        </div>
      </ModalDialog>
    );
  }
  return <RuleDialog projectId={projectId} rule={rule.data} clusters={clusters} clustersLoading={clustersLoading} onClose={onClose} />;
}

/** Create a rule (tried after the others), or replace one's settings (its place in the order stays). */
function RuleDialog({ projectId, rule, clusters, clustersLoading, onClose }: { projectId: string; rule?: Rule; clusters: Cluster[]; clustersLoading: boolean; onClose: () => void }) {
  const [name, setName] = useState(rule?.name ?? '');
  const [description, setDescription] = useState(rule?.description ?? '');
  const [wildcard, setWildcard] = useState(rule?.wildcard ?? '');
  const [clusterId, setClusterId] = useState(rule?.cluster_id ?? clusters.find((cluster) => cluster.is_default === true)?.id ?? clusters[0]?.id ?? '');
  const [mode, setMode] = useState<Mode>(rule?.mode ?? 'DEVELOPMENT');
  const [schedule, setSchedule] = useState<ScheduleDraft>(rule === undefined ? DEFAULT_SCHEDULE : scheduleOf(rule));
  const formId = useId();
  const refreshThenClose = useRefreshThenClose([RULES], onClose);
  const create = api.useMutation('post', RULES, refreshThenClose);
  const edit = api.useMutation('put', '/project/{projectId}/deploymentRule/{deploymentRuleId}', refreshThenClose);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, rule !== undefined);
  // The clusters arrive after the dialog opened: a new rule takes the default one once they do.
  const chosenCluster = clusterId === '' ? (clusters.find((cluster) => cluster.is_default === true)?.id ?? clusters[0]?.id ?? '') : clusterId;
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = { name: name.trim(), description: description.trim() === '' ? null : description.trim(), wildcard: wildcard.trim(), cluster_id: chosenCluster, mode, ...scheduleBody(schedule) };
    if (rule === undefined) create.mutate({ params: { path: { projectId } }, body });
    else edit.mutate({ params: { path: { projectId, deploymentRuleId: rule.id } }, body });
  }
  const noCluster = !clustersLoading && clusters.length === 0;
  return (
    <ModalDialog title={rule === undefined ? 'New deployment rule' : `Edit ${rule.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={(next) => (reset(), setDescription(next))} maxLength={2000} errorMessage={fields.get('description')} />
        <TextField
          label="Environment names"
          value={wildcard}
          onChange={(next) => (reset(), setWildcard(next))}
          maxLength={255}
          placeholder="pr-*"
          description="The names this rule applies to, without case; * stands for any characters (pr-* matches pr-12). Empty: every name."
          errorMessage={fields.get('wildcard')}
        />
        <div className="field-grid">
          {noCluster ? (
            <p className="notice">This organization has no cluster yet: create one first.</p>
          ) : (
            <SelectField
              id={`${formId}-cluster`}
              label="Cluster"
              value={chosenCluster}
              onChange={(next) => (reset(), setClusterId(next))}
              options={clusters.map((cluster) => ({ value: cluster.id, label: cluster.name ?? cluster.id }))}
              errorMessage={fields.get('cluster_id')}
            />
          )}
          <SelectField id={`${formId}-mode`} label="Mode" value={mode} onChange={(next) => (reset(), setMode(next))} options={MODES} errorMessage={fields.get('mode')} />
        </div>
        <fieldset className="fieldset">
          <legend>Schedule of the environments it places</legend>
          <ScheduleFields id={formId} draft={schedule} onChange={(next) => (reset(), setSchedule(next))} fields={fields} />
        </fieldset>
        <FormActions error={summary} onCancel={onClose} submitLabel={rule === undefined ? 'Create rule' : 'Save'} submitDisabled={noCluster} />
      </Form>
    </ModalDialog>
  );
}

function DeleteRuleDialog({ projectId, rule, onClose }: { projectId: string; rule: Rule; onClose: () => void }) {
  const remove = api.useMutation('delete', '/project/{projectId}/deploymentRule/{deploymentRuleId}', useRefreshThenClose([RULES], onClose));
  return (
    <DeleteByNameDialog
      name={rule.name}
      explanation="The rule is no longer tried for new environments; the environments it placed keep their cluster, mode and schedule."
      confirmLabel="Delete rule"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { projectId, deploymentRuleId: rule.id } } })}
      onClose={onClose}
    />
  );
}
