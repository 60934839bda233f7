import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ConfirmByNameDialog, ErrorMessage, ModalDialog, RelativeTime, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import type { ServiceContext } from '../ServicePage.tsx';

type Backup = components['schemas']['Backup'];
type Application = components['schemas']['Application'];

const BACKUP_WORDS: Record<Backup['status']['state'], { label: string; state: string }> = {
  QUEUED: { label: 'Queued', state: 'QUEUED' },
  EXECUTING: { label: 'Dumping', state: 'DEPLOYING' },
  READY: { label: 'Ready', state: 'DEPLOYED' },
  DEPLOYMENT_ERROR: { label: 'Failed', state: 'DEPLOYMENT_ERROR' },
};

function sizeOf(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/**
 * A database's backups (docs/database-backups.md): dumps made on request by the installation, newest first, with
 * their state and size; take one (name and message), delete one after typing its name. Only a running database can be
 * dumped: the API says so at the action otherwise. The list refreshes while a dump is under way.
 */
export function DatabaseBackups({ context }: { context: ServiceContext }) {
  const path = { params: { path: { databaseId: context.serviceId } } };
  const backups = api.useQuery('get', '/database/{databaseId}/backup', path, {
    refetchInterval: (query) => (query.state.data?.results.some((backup) => backup.status.state === 'QUEUED' || backup.status.state === 'EXECUTING') ? 3000 : false),
  });
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotWrite = !permissions.can('write');
  const note = useId();
  const [taking, setTaking] = useState(false);
  const [deleting, setDeleting] = useState<Backup | undefined>();
  const list = backups.data?.results ?? [];
  return (
    <section aria-labelledby="backups-heading" className="card card-wide">
      <div className="card-heading-row">
        <h2 id="backups-heading" className="card-title">
          Backups
        </h2>
        <Button variant="secondary" onPress={() => setTaking(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? note : undefined}>
          Take a backup…
        </Button>
      </div>
      <PermissionNote id={note} reason={permissions.reason('write')} />
      {backups.isPending ? <Spinner label="Loading the backups…" /> : null}
      <ErrorMessage message={backups.isError ? messageOf(backups.error) : undefined} />
      {backups.isSuccess && list.length === 0 ? <p className="muted">No backups yet. A backup is a dump of the database’s data, kept by the installation until you delete it.</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Backups">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Size</th>
              <th scope="col">Taken</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((backup) => {
              const words = BACKUP_WORDS[backup.status.state];
              return (
                <tr key={backup.id}>
                  <td data-label="Name" className="break">
                    {backup.name}
                    {backup.message ? <span className="kind-label">{backup.message}</span> : null}
                  </td>
                  <td data-label="State">
                    <StatusChip state={words.state} label={words.label} />
                    {backup.failure ? <span className="error-text">{backup.failure}</span> : null}
                  </td>
                  <td data-label="Size">{sizeOf(backup.size_bytes)}</td>
                  <td data-label="Taken">
                    <RelativeTime at={backup.created_at} />
                  </td>
                  <td className="actions-cell">
                    <Button variant="quiet-danger" onPress={() => setDeleting(backup)} isDisabled={cannotWrite} aria-label={`Delete the backup ${backup.name}…`} aria-describedby={cannotWrite ? note : undefined}>
                      Delete…
                    </Button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p className="muted">Restoring is done by hand on the installation’s host, with the engine’s own tool (pg_restore, mariadb, or Redis’s data file).</p>
      {taking ? <TakeBackupDialog databaseId={context.serviceId} onClose={() => setTaking(false)} /> : null}
      {deleting === undefined ? null : <DeleteBackupDialog databaseId={context.serviceId} backup={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function TakeBackupDialog({ databaseId, onClose }: { databaseId: string; onClose: () => void }) {
  const [name, setName] = useState(`backup-${new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '')}`);
  const [message, setMessage] = useState('');
  const add = api.useMutation('post', '/database/{databaseId}/backup', useRefreshThenClose(['/database/{databaseId}/backup'], onClose));
  const { fields, summary } = formErrorsOf(add);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (add.isPending) return;
    add.mutate({ params: { path: { databaseId } }, body: { name: name.trim(), message: message.trim() } });
  }
  return (
    <ModalDialog title="Take a backup" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={submit}>
        <p className="muted">The database’s data is dumped now, while it runs; the backup is listed as ready once the file is complete.</p>
        <TextField label="Name" value={name} onChange={(value) => (add.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Message (optional)" value={message} onChange={(value) => (add.reset(), setMessage(value))} maxLength={2000} errorMessage={fields.get('message')} description="Why it was taken, for whoever reads the list." />
        <FormActions error={fields.size > 0 ? undefined : summary} onCancel={onClose} submitLabel={add.isPending ? 'Taking…' : 'Take backup'} />
      </Form>
    </ModalDialog>
  );
}

function DeleteBackupDialog({ databaseId, backup, onClose }: { databaseId: string; backup: Backup; onClose: () => void }) {
  const remove = api.useMutation('delete', '/database/{databaseId}/backup/{backupId}', useRefreshThenClose(['/database/{databaseId}/backup'], onClose));
  return (
    <DeleteByNameDialog
      name={backup.name}
      explanation="The backup’s file is removed from the installation; it cannot be restored afterwards."
      confirmLabel="Delete backup"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { databaseId, backupId: backup.id } } })}
      onClose={onClose}
    />
  );
}

/**
 * The applications connected to the database (docs/service-extras.md): those with a variable aliasing one of its
 * built-ins. Disconnecting removes those aliases; the application runs without them from its next deployment.
 */
export function DatabaseApplications({ context }: { context: ServiceContext }) {
  const applications = api.useQuery('get', '/database/{databaseId}/application', { params: { path: { databaseId: context.serviceId } } });
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotWrite = !permissions.can('write');
  const note = useId();
  const [disconnecting, setDisconnecting] = useState<Application | undefined>();
  const list = applications.data?.results ?? [];
  return (
    <section aria-labelledby="database-applications-heading" className="card">
      <h2 id="database-applications-heading" className="card-title">
        Connected applications
      </h2>
      <p className="muted">An application is connected when one of its variables is an alias of the database’s built-in variables (PLATFORM_DATABASE_…).</p>
      <PermissionNote id={note} reason={permissions.reason('write')} />
      {applications.isPending ? <Spinner label="Loading the connected applications…" /> : null}
      <ErrorMessage message={applications.isError ? messageOf(applications.error) : undefined} />
      {applications.isSuccess && list.length === 0 ? <p className="muted">No application is connected.</p> : null}
      {list.length === 0 ? null : (
        <ul className="plain-list" aria-label="Connected applications">
          {list.map((application) => (
            <li key={application.id} className="card-heading-row">
              <span>{application.name}</span>
              <Button variant="quiet-danger" onPress={() => setDisconnecting(application)} isDisabled={cannotWrite} aria-label={`Disconnect ${application.name}…`} aria-describedby={cannotWrite ? note : undefined}>
                Disconnect…
              </Button>
            </li>
          ))}
        </ul>
      )}
      {disconnecting === undefined ? null : <DisconnectDialog databaseId={context.serviceId} application={disconnecting} onClose={() => setDisconnecting(undefined)} />}
    </section>
  );
}

function DisconnectDialog({ databaseId, application, onClose }: { databaseId: string; application: Application; onClose: () => void }) {
  const remove = api.useMutation('delete', '/database/{databaseId}/application/{targetApplicationId}', useRefreshThenClose(['/database/{databaseId}/application'], onClose));
  return (
    <ConfirmByNameDialog
      title={`Disconnect ${application.name}`}
      name={application.name}
      explanation="Its variables that alias the database’s are removed; from its next deployment it no longer reaches the database through them. The database is unchanged."
      confirmLabel="Disconnect"
      pending={remove.isPending}
      error={remove.isError ? messageOf(remove.error) : undefined}
      onConfirm={() => remove.mutate({ params: { path: { databaseId, targetApplicationId: application.id } } })}
      onClose={onClose}
    />
  );
}
