import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, summaryOf, fieldErrorsOf, type Environment } from '../../api/client.ts';
import type { Permissions } from '../../auth/permissions.ts';
import { Button, ConfirmByNameDialog, ErrorMessage, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { plural } from '../live.ts';
import { MODES } from '../ProjectPage.tsx';
import { downloadFile } from './download.ts';

/**
 * The environment's settings: its name and mode, its export as Terraform, the database versions its cluster offers,
 * the sections `children` brings (other settings of the environment), and last the danger zone (clean the failed runs
 * of its jobs; uninstall it, confirmed by its name).
 */
export function EnvironmentSettings({ environment, permissions, children }: { environment: Environment; permissions: Permissions; children?: ReactNode }) {
  return (
    <>
      <section aria-labelledby="environment-general-heading" className="card settings-card">
        <h2 id="environment-general-heading" className="card-title">
          General
        </h2>
        <EditEnvironmentForm key={environment.id} environment={environment} permissions={permissions} />
      </section>
      <TerraformExport environment={environment} />
      <DatabaseVersions environmentId={environment.id} />
      {children}
      <DangerZone environment={environment} permissions={permissions} />
    </>
  );
}

function EditEnvironmentForm({ environment, permissions }: { environment: Environment; permissions: Permissions }) {
  const [name, setName] = useState(environment.name);
  const [mode, setMode] = useState(environment.mode);
  const [saved, setSaved] = useState(false);
  const queryClient = useQueryClient();
  const writeNote = useId();
  const cannotWrite = !permissions.can('write');
  const edit = api.useMutation('put', '/environment/{environmentId}', {
    onSuccess: async () => {
      await Promise.all(
        (['/environment/{environmentId}', '/project/{projectId}/environment', '/project/{projectId}/environment/overview'] as const).map((path) => queryClient.invalidateQueries({ queryKey: ['get', path] })),
      );
      setSaved(true);
    },
  });
  useEffect(() => {
    if (!saved) return;
    const timer = setTimeout(() => setSaved(false), 4000);
    return () => clearTimeout(timer);
  }, [saved]);
  const fields = fieldErrorsOf(edit.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    setSaved(false);
    edit.mutate({ params: { path: { environmentId: environment.id } }, body: { name: name.trim(), mode } });
  }
  const changed = name.trim() !== environment.name || mode !== environment.mode;
  return (
    <Form onSubmit={submit} className="form">
      <div className="field-grid">
        <TextField label="Name" value={name} onChange={(value) => (edit.reset(), setName(value))} isRequired maxLength={255} errorMessage={fields.get('name')} />
        <SelectField id="environment-edit-mode" label="Mode" value={mode} onChange={(value) => (edit.reset(), setMode(value))} options={MODES} errorMessage={fields.get('mode')} />
      </div>
      <ErrorMessage message={edit.isError ? summaryOf(edit.error) : undefined} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={cannotWrite || !changed || name.trim() === ''} aria-describedby={cannotWrite ? writeNote : undefined}>
          Save changes
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
    </Form>
  );
}

function TerraformExport({ environment }: { environment: Environment }) {
  const [error, setError] = useState<string | undefined>();
  async function download() {
    setError(undefined);
    try {
      await downloadFile(`/environment/${environment.id}/terraformExport`, `${environment.name.replace(/[^A-Za-z0-9._-]+/g, '-')}.tf`);
    } catch (caught) {
      setError(messageOf(caught));
    }
  }
  return (
    <section aria-labelledby="terraform-export-heading" className="card settings-card">
      <h2 id="terraform-export-heading" className="card-title">
        Export as Terraform
      </h2>
      <p className="muted">One .tf file: the provider, this environment and each of its services as resources. Variables and secrets are not exported.</p>
      <div className="form-actions form-actions-start">
        <Button variant="secondary" onPress={() => void download()}>
          Download Terraform file
        </Button>
      </div>
      <ErrorMessage message={error} />
    </section>
  );
}

const DATABASE_NAMES = { POSTGRESQL: 'PostgreSQL', MYSQL: 'MySQL', MONGODB: 'MongoDB', REDIS: 'Redis' } as const;

/** Each version once, with the modes it runs in ("container, managed"), in the API's order. */
function modesByVersion(versions: readonly { name: string; supported_mode: 'CONTAINER' | 'MANAGED' }[]): [string, string[]][] {
  const modes = new Map<string, string[]>();
  for (const version of versions) modes.set(version.name, [...(modes.get(version.name) ?? []), version.supported_mode === 'CONTAINER' ? 'container' : 'managed']);
  return Array.from(modes);
}

function DatabaseVersions({ environmentId }: { environmentId: string }) {
  const configurations = api.useQuery('get', '/environment/{environmentId}/databaseConfiguration', { params: { path: { environmentId } } });
  const results = configurations.data?.results ?? [];
  return (
    <section aria-labelledby="database-versions-heading" className="card settings-card">
      <h2 id="database-versions-heading" className="card-title">
        Database versions
      </h2>
      <p className="muted">The databases this environment’s cluster can run, each version with the modes it supports.</p>
      {configurations.isPending ? <Spinner label="Loading the database versions…" /> : null}
      <ErrorMessage message={configurations.isError ? messageOf(configurations.error) : undefined} />
      {results.length === 0 ? null : (
        <table className="table database-versions-table" aria-labelledby="database-versions-heading">
          <thead>
            <tr>
              <th scope="col">Database</th>
              <th scope="col">Versions</th>
            </tr>
          </thead>
          <tbody>
            {results.map((configuration) => (
              <tr key={configuration.database_type}>
                <th scope="row" data-label="Database">
                  {DATABASE_NAMES[configuration.database_type]}
                </th>
                <td data-label="Versions">
                  <ul className="version-list">
                    {modesByVersion(configuration.version).map(([name, modes]) => (
                      <li key={name}>
                        <code className="version">{name}</code> <span className="muted">{modes.join(', ')}</span>
                      </li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function DangerZone({ environment, permissions }: { environment: Environment; permissions: Permissions }) {
  const [uninstalling, setUninstalling] = useState(false);
  const [cleaned, setCleaned] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const deployNote = useId();
  const cannotDeploy = !permissions.can('deploy');
  const refreshStatuses = () =>
    Promise.all(
      (['/environment/{environmentId}/statuses', '/environment/{environmentId}/statusesWithStages', '/environment/{environmentId}/log'] as const).map((path) => queryClient.invalidateQueries({ queryKey: ['get', path] })),
    );
  const clean = api.useMutation('post', '/environment/{environmentId}/cleanFailedJobs', {
    onSuccess: async (answer) => {
      setCleaned(answer.clean_job_ids.length === 0 ? 'No job had a failed run to clean.' : `Cleaned the failed runs of ${plural(answer.clean_job_ids.length, 'job', 'jobs')}.`);
      await refreshStatuses();
    },
  });
  const uninstall = api.useMutation('post', '/environment/{environmentId}/uninstall', {
    onSuccess: async () => {
      setUninstalling(false);
      await refreshStatuses();
    },
  });
  return (
    <section aria-labelledby="environment-danger-heading" className="card settings-card danger-zone">
      <h2 id="environment-danger-heading" className="card-title">
        Danger zone
      </h2>
      <p>Cleaning the failed jobs forgets the failed last run of each of its jobs, so they read as not run.</p>
      <div className="form-actions form-actions-start">
        <Button
          variant="secondary"
          onPress={() => (setCleaned(undefined), clean.mutate({ params: { path: { environmentId: environment.id } }, body: {} }))}
          isDisabled={cannotDeploy}
          aria-describedby={cannotDeploy ? deployNote : undefined}
        >
          Clean failed jobs
        </Button>
        <span role="status" className="saved-note">
          {cleaned ?? ''}
        </span>
      </div>
      <ErrorMessage message={clean.isError ? messageOf(clean.error) : undefined} />
      <p>Uninstalling removes the workloads of every service from the cluster. The environment, its services, their settings and variables stay; a deploy brings them back.</p>
      <Button variant="danger" onPress={() => (uninstall.reset(), setUninstalling(true))} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
        Uninstall environment…
      </Button>
      <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
      {uninstalling ? (
        <ConfirmByNameDialog
          title={`Uninstall ${environment.name}`}
          name={environment.name}
          explanation="This removes the workloads of every service of this environment from the cluster. Their settings and variables stay."
          confirmLabel="Uninstall environment"
          pending={uninstall.isPending}
          error={uninstall.isError ? messageOf(uninstall.error) : undefined}
          onConfirm={() => uninstall.mutate({ params: { path: { environmentId: environment.id } } })}
          onClose={() => setUninstalling(false)}
        />
      ) : null}
    </section>
  );
}
