import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { apiRequest, messageOf } from '../../api/client.ts';
import type { Permissions } from '../../auth/permissions.ts';
import type { ServiceKind } from '../../services/kinds.ts';
import { Button, ConfirmByNameDialog, ErrorMessage } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { plural } from '../live.ts';

/** What the selection reads of a row of the services table. */
export interface SelectableService {
  kind: ServiceKind;
  service: { id: string; name: string };
}

/** The bulk operations name services by kind; an agentic workflow has no field there, so it cannot be selected. */
const BULK_FIELD: Partial<Record<ServiceKind['type'], 'application' | 'container' | 'database' | 'job' | 'helm' | 'terraform'>> = {
  APPLICATION: 'application',
  CONTAINER: 'container',
  DATABASE: 'database',
  JOB: 'job',
  HELM: 'helm',
  TERRAFORM: 'terraform',
};

export function isSelectable(kind: ServiceKind): boolean {
  return BULK_FIELD[kind.type] !== undefined;
}

export interface ServiceSelection {
  selected: ReadonlySet<string>;
  toggle: (id: string) => void;
  setAll: (ids: readonly string[]) => void;
  clear: () => void;
}

/** The services ticked in the table; one that left the environment leaves the selection. */
export function useServiceSelection(rows: readonly SelectableService[]): ServiceSelection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const present = rows.map((row) => row.service.id).join(' ');
  useEffect(() => {
    const ids = new Set(present.split(' '));
    setSelected((current) => (Array.from(current).every((id) => ids.has(id)) ? current : new Set(Array.from(current).filter((id) => ids.has(id)))));
  }, [present]);
  return {
    selected,
    toggle: (id) =>
      setSelected((current) => {
        const next = new Set(current);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    setAll: (ids) => setSelected(new Set(ids)),
    clear: () => setSelected(new Set()),
  };
}

/** The header's checkbox: ticks every selectable service, or none; half-ticked while some are. */
export function SelectAllServices({ rows, selection }: { rows: readonly SelectableService[]; selection: ServiceSelection }) {
  const box = useRef<HTMLInputElement>(null);
  const selectable = rows.filter((row) => isSelectable(row.kind)).map((row) => row.service.id);
  const all = selectable.length > 0 && selectable.every((id) => selection.selected.has(id));
  const some = selectable.some((id) => selection.selected.has(id));
  useEffect(() => {
    if (box.current !== null) box.current.indeterminate = some && !all;
  }, [some, all]);
  return <input ref={box} type="checkbox" className="select-box" aria-label="Select every service" checked={all} disabled={selectable.length === 0} onChange={() => (all ? selection.clear() : selection.setAll(selectable))} />;
}

/** A row's checkbox, named after its service. */
export function SelectService({ row, selection }: { row: SelectableService; selection: ServiceSelection }) {
  const selectable = isSelectable(row.kind);
  return (
    <input
      type="checkbox"
      className="select-box"
      aria-label={selectable ? `Select ${row.service.name}` : `${row.service.name} cannot be selected: the bulk actions do not take an agentic workflow`}
      checked={selection.selected.has(row.service.id)}
      disabled={!selectable}
      onChange={() => selection.toggle(row.service.id)}
    />
  );
}

type BulkAction = 'deploy' | 'stop' | 'uninstall' | 'delete';

/** `{ application_ids: [...], database_ids: [...] }`, the body of the stop, uninstall and delete of selected services. */
function idsBody(chosen: readonly SelectableService[]): Record<string, string[]> {
  const body: Record<string, string[]> = {};
  for (const { kind, service } of chosen) {
    const field = BULK_FIELD[kind.type];
    if (field !== undefined) (body[`${field}_ids`] ??= []).push(service.id);
  }
  return body;
}

/** The deploy's body: applications by `application_id`, databases as bare ids, the other kinds as `{ id }`. */
function deployBody(chosen: readonly SelectableService[]): Record<string, unknown[]> {
  const body: Record<string, unknown[]> = {};
  for (const { kind, service } of chosen) {
    const field = BULK_FIELD[kind.type];
    if (field === undefined) continue;
    const entry = field === 'application' ? { application_id: service.id } : field === 'database' ? service.id : { id: service.id };
    (body[`${field}s`] ??= []).push(entry);
  }
  return body;
}

/**
 * The actions on the ticked services, above the table: deploy, stop, uninstall (workloads removed, configuration
 * kept) and delete — the last two confirmed by typing how many services they take (deploy: deployAllServices with
 * their names). The API's refusal (a 409 naming the service in the way) is shown here.
 */
export function BulkServiceActions({ environmentId, rows, selection, permissions }: { environmentId: string; rows: readonly SelectableService[]; selection: ServiceSelection; permissions: Permissions }) {
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const [confirming, setConfirming] = useState<'uninstall' | 'delete' | undefined>();
  const [pending, setPending] = useState(false);
  const queryClient = useQueryClient();
  const deployNote = useId();
  const writeNote = useId();
  const chosen = rows.filter((row) => selection.selected.has(row.service.id));
  const count = chosen.length;
  const cannotDeploy = !permissions.can('deploy');
  const cannotWrite = !permissions.can('write');

  async function run(action: BulkAction) {
    if (pending) return;
    setPending(true);
    setError(undefined);
    setDone(undefined);
    try {
      if (action === 'deploy') await apiRequest('POST', `/environment/${environmentId}/service/deploy`, deployBody(chosen));
      if (action === 'stop') await apiRequest('POST', `/environment/${environmentId}/service/stop`, idsBody(chosen));
      if (action === 'uninstall') await apiRequest('POST', `/environment/${environmentId}/service/uninstall`, idsBody(chosen));
      if (action === 'delete') await apiRequest('POST', `/environment/${environmentId}/service/delete`, idsBody(chosen));
      const what = plural(count, 'service', 'services');
      setDone(`${what}: ${action === 'deploy' ? 'deployment queued' : action === 'stop' ? 'stop queued' : action === 'uninstall' ? 'uninstalled' : 'deleted'}.`);
      setConfirming(undefined);
      selection.clear();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setPending(false);
    }
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: ['get', '/environment/{environmentId}/statuses'] }),
      queryClient.invalidateQueries({ queryKey: ['get', '/environment/{environmentId}/statusesWithStages'] }),
      queryClient.invalidateQueries({ queryKey: ['environment-services', environmentId] }),
    ]);
  }

  const typed = plural(count, 'service', 'services');
  const names = chosen.map((row) => row.service.name).join(', ');
  const their = count === 1 ? 'its' : 'their';
  return (
    <div className="bulk-actions" role="group" aria-label="Actions on the selected services">
      <p className="bulk-count" aria-live="polite">
        {count === 0 ? 'Tick services to act on several at once.' : `${typed} selected`}
      </p>
      <div className="bulk-buttons">
        {count === 0 ? null : (
          <>
            <Button variant="secondary" onPress={() => void run('deploy')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
              Deploy selected
            </Button>
            <Button variant="secondary" onPress={() => void run('stop')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
              Stop selected
            </Button>
            <Button variant="secondary" onPress={() => (setError(undefined), setConfirming('uninstall'))} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
              Uninstall selected…
            </Button>
            <Button variant="quiet-danger" onPress={() => (setError(undefined), setConfirming('delete'))} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
              Delete selected…
            </Button>
          </>
        )}
      </div>
      <PermissionNote id={deployNote} reason={count === 0 ? undefined : permissions.reason('deploy')} />
      <PermissionNote id={writeNote} reason={count === 0 ? undefined : permissions.reason('write')} />
      {confirming === undefined ? <ErrorMessage message={error} /> : null}
      {done === undefined ? null : (
        <p className="saved-note" role="status">
          {done}
        </p>
      )}
      {confirming === undefined ? null : (
        <ConfirmByNameDialog
          title={confirming === 'delete' ? `Delete ${typed}` : `Uninstall ${typed}`}
          name={typed}
          explanation={
            confirming === 'delete'
              ? `This deletes ${names}: ${their} workloads, ${their} settings and ${their} variables. It cannot be undone.`
              : `This removes the workloads of ${names} from the cluster. ${count === 1 ? 'Its' : 'Their'} settings and variables stay; a deploy brings them back.`
          }
          confirmLabel={confirming === 'delete' ? `Delete ${typed}` : `Uninstall ${typed}`}
          pending={pending}
          error={error}
          onConfirm={() => void run(confirming)}
          onClose={() => (setConfirming(undefined), setError(undefined))}
        />
      )}
    </div>
  );
}
