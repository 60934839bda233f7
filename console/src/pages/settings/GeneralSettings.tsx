import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf, type Organization } from '../../api/client.ts';
import { Button, ConfirmByNameDialog, ErrorMessage, Spinner, TextField } from '../../ui/controls.tsx';
import { InstallationCard } from './InstallationCard.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

/** General: the organization's name, description and website; the danger zone (delete, typed confirmation). */
export function GeneralSettings() {
  const { organizationId } = route.useParams();
  const organization = api.useQuery('get', '/organization/{organizationId}', { params: { path: { organizationId } } });
  const [deleting, setDeleting] = useState(false);
  if (organization.isPending) return <Spinner label="Loading the organization…" />;
  if (organization.isError) return <ErrorMessage message={messageOf(organization.error)} />;
  return (
    <>
      <section aria-labelledby="general-heading" className="card settings-card">
        <h2 id="general-heading" className="card-title">
          General
        </h2>
        <EditOrganizationForm key={organization.data.id} organization={organization.data} />
      </section>
      <InstallationCard />
      <section aria-labelledby="danger-heading" className="card settings-card danger-zone">
        <h2 id="danger-heading" className="card-title">
          Danger zone
        </h2>
        <p>Deleting the organization deletes its projects, environments, services and clusters, and removes every member. It cannot be undone.</p>
        <Button variant="danger" onPress={() => setDeleting(true)}>
          Delete organization…
        </Button>
      </section>
      {deleting ? <DeleteOrganizationDialog organization={organization.data} onClose={() => setDeleting(false)} /> : null}
    </>
  );
}

function EditOrganizationForm({ organization }: { organization: Organization }) {
  const [name, setName] = useState(organization.name);
  const [description, setDescription] = useState(organization.description ?? '');
  const [website, setWebsite] = useState(organization.website_url ?? '');
  const [saved, setSaved] = useState(false);
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/organization/{organizationId}', {
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}'] }), queryClient.invalidateQueries({ queryKey: ['get', '/organization'] })]);
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
    edit.mutate({
      params: { path: { organizationId: organization.id } },
      body: { name: name.trim(), description: description.trim() === '' ? null : description.trim(), website_url: website.trim() === '' ? null : website.trim() },
    });
  }
  const changed = name.trim() !== organization.name || description.trim() !== (organization.description ?? '') || website.trim() !== (organization.website_url ?? '');
  return (
    <Form onSubmit={submit} className="form">
      <TextField label="Name" value={name} onChange={(value) => (edit.reset(), setName(value))} isRequired maxLength={255} errorMessage={fields.get('name')} />
      <TextField label="Description (optional)" value={description} onChange={(value) => (edit.reset(), setDescription(value))} maxLength={2000} errorMessage={fields.get('description')} />
      <TextField label="Website (optional)" type="url" value={website} onChange={(value) => (edit.reset(), setWebsite(value))} maxLength={2048} placeholder="https://example.com" errorMessage={fields.get('website_url')} />
      <ErrorMessage message={edit.isError ? summaryOf(edit.error) : undefined} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={!changed || name.trim() === ''}>
          Save changes
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </Form>
  );
}

function DeleteOrganizationDialog({ organization, onClose }: { organization: Organization; onClose: () => void }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const remove = api.useMutation('delete', '/organization/{organizationId}', {
    onSuccess: async () => {
      // Gone from the list first, so that `/` opens another organization (or the first-organization page), then away
      // from this one's pages before their queries could ask for it again.
      queryClient.setQueriesData<{ results: Organization[] }>({ queryKey: ['get', '/organization'] }, (list) =>
        list === undefined ? list : { ...list, results: list.results.filter((entry) => entry.id !== organization.id) },
      );
      onClose();
      await navigate({ to: '/' });
      queryClient.removeQueries({ queryKey: ['get', '/organization/{organizationId}'] });
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization'] });
    },
  });
  return (
    <ConfirmByNameDialog
      title={`Delete ${organization.name}`}
      name={organization.name}
      explanation="This deletes the organization with all its projects, environments, services and clusters. Its members lose access. It cannot be undone."
      confirmLabel="Delete organization"
      pending={remove.isPending}
      error={remove.isError ? messageOf(remove.error) : undefined}
      onConfirm={() => remove.mutate({ params: { path: { organizationId: organization.id } } })}
      onClose={onClose}
    />
  );
}
