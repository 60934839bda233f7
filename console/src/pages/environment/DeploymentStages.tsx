import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import type { AnyService, ServiceKind } from '../../services/kinds.ts';
import { ActionsMenu, Button, ErrorMessage, ModalDialog, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { plural } from '../live.ts';
import { useFocusAfterChange } from '../../ui/focus-after-change.ts';

type Stage = components['schemas']['DeploymentStageResponse'];
type StageService = components['schemas']['DeploymentStageServiceResponse'];

const STAGES = '/environment/{environmentId}/deploymentStage' as const;
/** What else shows a service's stage: the services table's stage notes and the service page's fact. */
const SHOWING_STAGES = [STAGES, '/environment/{environmentId}/statusesWithStages', '/service/{serviceId}/deploymentStage'] as const;

/** The lists to read again after a stage changed (its order, its services, its name). */
function useRefreshStages() {
  const queryClient = useQueryClient();
  return () => Promise.all(SHOWING_STAGES.map((path) => queryClient.invalidateQueries({ queryKey: ['get', path] })));
}

/**
 * An environment's deployment stages (docs/deployment-stages.md): an environment deploy starts the services of one
 * stage together and those of the next once they have started. Listed in order, each with its services; stages are
 * created, renamed, deleted and moved before or after their neighbour, and each service is moved to another stage or
 * left out of the environment's deploys (`is_skipped`). After a move the focus goes back to the control that made it
 * (its element moved, so the browser dropped the focus), and a status line says what changed.
 */
export function DeploymentStages({ organizationId, environmentId, services }: { organizationId: string; environmentId: string; services: readonly { kind: ServiceKind; service: AnyService }[] }) {
  const stages = api.useQuery('get', STAGES, { params: { path: { environmentId } } });
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const idPrefix = useId();
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'delete'; stage: Stage } | undefined>();
  const [announcement, setAnnouncement] = useState('');
  const [failure, setFailure] = useState<{ id: string; message: string } | undefined>();
  /** The ids of the controls to focus once the list is read again, the first one enabled wins. */
  /** A service's choice while its request runs, so its select and checkbox show it rather than the stored one. */
  const [placing, setPlacing] = useState<{ serviceId: string; stageId: string; isSkipped: boolean } | undefined>();
  const refresh = useRefreshStages();
  const moveBefore = api.useMutation('put', '/deploymentStage/{deploymentStageId}/moveBefore/{stageId}');
  const moveAfter = api.useMutation('put', '/deploymentStage/{deploymentStageId}/moveAfter/{stageId}');
  const attach = api.useMutation('put', '/deploymentStage/{deploymentStageId}/service/{serviceId}');
  const list = stages.data?.results ?? [];
  const serviceOf = new Map(services.map((entry) => [entry.service.id, entry]));
  const controlId = (what: string, id: string) => `${idPrefix}-${what}-${id}`;

  const setFocusAfter = useFocusAfterChange(stages.data);

  async function move(stage: Stage, direction: 'earlier' | 'later') {
    const index = list.findIndex((candidate) => candidate.id === stage.id);
    const neighbour = list[direction === 'earlier' ? index - 1 : index + 1];
    if (neighbour === undefined || moveBefore.isPending || moveAfter.isPending) return;
    setFailure(undefined);
    const path = { params: { path: { deploymentStageId: stage.id, stageId: neighbour.id } } };
    try {
      await (direction === 'earlier' ? moveBefore.mutateAsync(path) : moveAfter.mutateAsync(path));
      await refresh();
      setAnnouncement(`${stage.name} is now stage ${direction === 'earlier' ? index : index + 2} of ${list.length}.`);
      setFocusAfter([controlId(direction, stage.id), controlId(direction === 'earlier' ? 'later' : 'earlier', stage.id)]);
    } catch (error) {
      setFailure({ id: stage.id, message: messageOf(error) });
    }
  }

  async function place(member: StageService, name: string, target: Stage, isSkipped: boolean) {
    if (attach.isPending) return;
    setFailure(undefined);
    setPlacing({ serviceId: member.service_id, stageId: target.id, isSkipped });
    try {
      await attach.mutateAsync({ params: { path: { deploymentStageId: target.id, serviceId: member.service_id } }, body: { is_skipped: isSkipped } });
      await refresh();
      setAnnouncement(isSkipped === member.is_skipped ? `${name} is now in ${target.name}.` : `${name} is ${isSkipped ? 'now left out of' : 'again part of'} the environment’s deploys.`);
      setFocusAfter([controlId(isSkipped === member.is_skipped ? 'stage-of' : 'skip', member.service_id)]);
    } catch (error) {
      setFailure({ id: member.service_id, message: messageOf(error) });
    } finally {
      setPlacing(undefined);
    }
  }

  return (
    <section aria-labelledby={`${idPrefix}-heading`} className="section deployment-stages">
      <div className="section-heading">
        <h2 id={`${idPrefix}-heading`}>Deployment stages</h2>
        <Button onPress={() => setDialog({ kind: 'new' })} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
          New stage
        </Button>
      </div>
      <p className="muted section-intro">Deploying the environment starts its services stage after stage: those of one stage together, those of the next once they have started. New databases land in DATABASE DEFAULT, every other new service in SERVICE DEFAULT.</p>
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      {stages.isPending ? <Spinner label="Loading the deployment stages…" /> : null}
      <ErrorMessage message={stages.isError ? messageOf(stages.error) : undefined} />
      <p role="status" className="saved-note">
        {announcement}
      </p>
      {list.length === 0 ? null : (
        <ol className="deployment-stage-list" aria-labelledby={`${idPrefix}-heading`}>
          {list.map((stage, index) => (
            <li key={stage.id} className="card deployment-stage">
              <div className="deployment-stage-head">
                <div className="deployment-stage-title">
                  <p className="eyebrow">Stage {index + 1}</p>
                  <h3 className="row-name">{stage.name}</h3>
                  {stage.description === '' ? null : <p className="muted">{stage.description}</p>}
                </div>
                <div className="row-actions">
                  <Button variant="secondary" id={controlId('earlier', stage.id)} aria-label={`Move ${stage.name} earlier`} onPress={() => void move(stage, 'earlier')} isDisabled={cannotWrite || index === 0}>
                    <span aria-hidden="true">↑ </span>Earlier
                  </Button>
                  <Button variant="secondary" id={controlId('later', stage.id)} aria-label={`Move ${stage.name} later`} onPress={() => void move(stage, 'later')} isDisabled={cannotWrite || index === list.length - 1}>
                    <span aria-hidden="true">↓ </span>Later
                  </Button>
                  <ActionsMenu
                    label={`Actions for stage ${stage.name}`}
                    actions={[
                      { id: 'edit', label: 'Edit…', isDisabled: cannotWrite },
                      { id: 'delete', label: 'Delete…', danger: true, isDisabled: cannotWrite },
                    ]}
                    onAction={(action) => setDialog({ kind: action as 'edit' | 'delete', stage })}
                  />
                </div>
              </div>
              {failure?.id === stage.id ? <ErrorMessage message={failure.message} /> : null}
              {stage.services.length === 0 ? (
                <p className="muted deployment-stage-empty">No services: move one here with its Stage choice.</p>
              ) : (
                <ul className="deployment-stage-services" aria-label={`Services of ${stage.name}`}>
                  {stage.services.map((member) => {
                    const entry = serviceOf.get(member.service_id);
                    const name = entry?.service.name ?? 'A service';
                    const shown = placing?.serviceId === member.service_id ? placing : { stageId: stage.id, isSkipped: member.is_skipped };
                    return (
                      <li key={member.service_id} className="deployment-stage-service">
                        <span className="deployment-stage-service-name">
                          <strong>{name}</strong>
                          <span className="kind-label">{entry?.kind.label ?? member.service_type.toLowerCase()}</span>
                        </span>
                        <span className="field deployment-stage-choice">
                          <label htmlFor={controlId('stage-of', member.service_id)}>
                            Stage<span className="visually-hidden"> of {name}</span>
                          </label>
                          <select
                            id={controlId('stage-of', member.service_id)}
                            value={shown.stageId}
                            disabled={cannotWrite}
                            aria-describedby={cannotWrite ? writeNote : undefined}
                            onChange={(event) => {
                              const target = list.find((candidate) => candidate.id === event.target.value);
                              if (target !== undefined) void place(member, name, target, member.is_skipped);
                            }}
                          >
                            {list.map((option, optionIndex) => (
                              <option key={option.id} value={option.id}>
                                {optionIndex + 1}. {option.name}
                              </option>
                            ))}
                          </select>
                        </span>
                        <span className="checkbox-field deployment-stage-skip">
                          <input id={controlId('skip', member.service_id)} type="checkbox" checked={shown.isSkipped} disabled={cannotWrite} onChange={(event) => void place(member, name, stage, event.target.checked)} />
                          <label htmlFor={controlId('skip', member.service_id)}>
                            Skip in environment deploys<span className="visually-hidden"> ({name})</span>
                          </label>
                        </span>
                        {failure?.id === member.service_id ? <ErrorMessage message={failure.message} /> : null}
                      </li>
                    );
                  })}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
      {dialog?.kind === 'new' ? <StageDialog environmentId={environmentId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <EditStageDialog environmentId={environmentId} stageId={dialog.stage.id} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteStageDialog stage={dialog.stage} onClose={() => setDialog(undefined)} /> : null}
    </section>
  );
}

/** The edit reads the stage as stored now (another person may have renamed it since the list was read). */
function EditStageDialog({ environmentId, stageId, onClose }: { environmentId: string; stageId: string; onClose: () => void }) {
  const stage = api.useQuery('get', '/deploymentStage/{deploymentStageId}', { params: { path: { deploymentStageId: stageId } } });
  if (stage.data === undefined) {
    return (
      <ModalDialog title="Edit stage" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
        {stage.isError ? <ErrorMessage message={messageOf(stage.error)} /> : <Spinner label="Loading the stage…" />}
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Close
          </Button>
        </div>
      </ModalDialog>
    );
  }
  return <StageDialog environmentId={environmentId} stage={stage.data} onClose={onClose} />;
}

/** Create a stage (it comes last), or rename and describe one. Names are unique in the environment (409). */
function StageDialog({ environmentId, stage, onClose }: { environmentId: string; stage?: Stage; onClose: () => void }) {
  const [name, setName] = useState(stage?.name ?? '');
  const [description, setDescription] = useState(stage?.description ?? '');
  const refreshThenClose = useRefreshThenClose(SHOWING_STAGES, onClose);
  const create = api.useMutation('post', STAGES, refreshThenClose);
  const edit = api.useMutation('put', '/deploymentStage/{deploymentStageId}', refreshThenClose);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, stage !== undefined);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = { name: name.trim(), description: description.trim() === '' ? null : description.trim() };
    if (stage === undefined) create.mutate({ params: { path: { environmentId } }, body });
    else edit.mutate({ params: { path: { deploymentStageId: stage.id } }, body });
  }
  return (
    <ModalDialog title={stage === undefined ? 'New deployment stage' : `Edit ${stage.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        {stage === undefined ? <p className="muted">A new stage comes last; move it where it belongs, then move services into it.</p> : null}
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={(next) => (reset(), setDescription(next))} maxLength={2000} errorMessage={fields.get('description')} />
        <FormActions error={summary} onCancel={onClose} submitLabel={stage === undefined ? 'Create stage' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

/** The API refuses to delete a default stage (400) or one that holds services (409): its message shows in the dialog. */
function DeleteStageDialog({ stage, onClose }: { stage: Stage; onClose: () => void }) {
  const remove = api.useMutation('delete', '/deploymentStage/{deploymentStageId}', useRefreshThenClose(SHOWING_STAGES, onClose));
  return (
    <DeleteByNameDialog
      name={stage.name}
      explanation={
        stage.services.length === 0
          ? 'The stage is removed and the stages after it move up.'
          : `It holds ${plural(stage.services.length, 'service', 'services')}: move ${stage.services.length === 1 ? 'it' : 'them'} to another stage first, or the deletion is refused.`
      }
      confirmLabel="Delete stage"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { deploymentStageId: stage.id } } })}
      onClose={onClose}
    />
  );
}
