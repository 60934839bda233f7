import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type Project } from '../api/client.ts';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import { Button, ErrorMessage, ModalDialog, Spinner, TextField } from '../ui/controls.tsx';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { OnboardingChecklist } from './OnboardingChecklist.tsx';
import { OrganizationServices } from './OrganizationServices.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId');

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The organization overview: its name, its projects with their environment and service counts. */
export function OrganizationPage() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const organization = api.useQuery('get', '/organization/{organizationId}', path);
  const projects = api.useQuery('get', '/organization/{organizationId}/project', path);
  const stats = api.useQuery('get', '/organization/{organizationId}/project/stats', path);
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<Project | undefined>();
  const [deleting, setDeleting] = useState<Project | undefined>();
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const describedBy = cannotWrite ? writeNote : undefined;
  useEffect(() => {
    document.title = `${organization.data?.name ?? 'Organization'} · Slipway`;
  }, [organization.data?.name]);

  // An organization the caller may not read fails every request of the page: one refusal for the page, not one per
  // section, so the sections hold their errors until the organization itself has been read.
  if (organization.isError) {
    return (
      <main className="page">
        <h1>Organization</h1>
        <ErrorMessage message={messageOf(organization.error)} />
        <p>
          <Link to="/">Back to your organizations</Link>
        </p>
      </main>
    );
  }
  const servicesOf = new Map(stats.data?.results.map((entry) => [entry.id, entry.service_total_number]));
  const list = projects.data?.results ?? [];

  return (
    <main className="page">
      <div className="page-heading">
        <div>
          <p className="eyebrow">Organization</p>
          <h1>{organization.data?.name ?? '…'}</h1>
        </div>
      </div>
      <OnboardingChecklist organizationId={organizationId} />
      <section aria-labelledby="projects-heading" className="section">
        <div className="section-heading">
          <h2 id="projects-heading">Projects</h2>
          {list.length === 0 ? null : (
            <Button onPress={() => setCreating(true)} isDisabled={cannotWrite} aria-describedby={describedBy}>
              New project
            </Button>
          )}
        </div>
        <PermissionNote id={writeNote} reason={permissions.reason('write')} />
        {projects.isPending ? <Spinner label="Loading projects…" /> : null}
        <ErrorMessage message={organization.isSuccess && projects.isError ? messageOf(projects.error) : undefined} />
        {projects.isSuccess && list.length === 0 ? (
          <div className="empty card">
            <h3>No projects yet</h3>
            <p className="muted">A project groups the environments and services of one application or team.</p>
            <Button onPress={() => setCreating(true)} isDisabled={cannotWrite} aria-describedby={describedBy}>
              New project
            </Button>
          </div>
        ) : null}
        {list.length === 0 ? null : (
          <ul className="project-list" aria-label="Projects">
            {list.map((project) => (
              <li key={project.id} className="card project">
                <div className="project-main">
                  <h3 className="project-name">
                    <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId: project.id }}>
                      {project.name}
                    </Link>
                  </h3>
                  {project.description ? <p className="muted project-description">{project.description}</p> : null}
                  <p className="project-counts">
                    <span>{plural(project.associated_environments_count, 'environment', 'environments')}</span>
                    {servicesOf.has(project.id) ? <span>{plural(servicesOf.get(project.id) ?? 0, 'service', 'services')}</span> : null}
                  </p>
                </div>
                <div className="project-actions">
                  <Button variant="secondary" aria-label={`Rename ${project.name}`} onPress={() => setRenaming(project)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                    Rename
                  </Button>
                  <Button variant="quiet-danger" aria-label={`Delete ${project.name}`} onPress={() => setDeleting(project)} isDisabled={cannotWrite} aria-describedby={describedBy}>
                    Delete
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
      <OrganizationServices organizationId={organizationId} organizationRead={organization.isSuccess} />
      {creating ? <CreateProjectDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
      {renaming === undefined ? null : <RenameProjectDialog organizationId={organizationId} project={renaming} onClose={() => setRenaming(undefined)} />}
      {deleting === undefined ? null : <DeleteProjectDialog organizationId={organizationId} project={deleting} onClose={() => setDeleting(undefined)} />}
    </main>
  );
}

/** After a change: the project list and its counts are read again. */
function useRefreshProjects(organizationId: string) {
  const queryClient = useQueryClient();
  const path = { params: { path: { organizationId } } };
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/project', path] }),
      queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/project/stats', path] }),
    ]);
}

function CreateProjectDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const refresh = useRefreshProjects(organizationId);
  const create = api.useMutation('post', '/organization/{organizationId}/project', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({ params: { path: { organizationId } }, body: { name: name.trim(), ...(description.trim() === '' ? {} : { description: description.trim() }) } });
  }
  return (
    <ModalDialog title="New project" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={setName} isRequired autoFocus maxLength={255} />
        <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={1000} />
        <ErrorMessage message={create.isError ? messageOf(create.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">
            Create project
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function RenameProjectDialog({ organizationId, project, onClose }: { organizationId: string; project: Project; onClose: () => void }) {
  const [name, setName] = useState(project.name);
  const refresh = useRefreshProjects(organizationId);
  const rename = api.useMutation('put', '/project/{projectId}', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (rename.isPending) return;
    rename.mutate({ params: { path: { projectId: project.id } }, body: { name: name.trim(), description: project.description } });
  }
  return (
    <ModalDialog title={`Rename ${project.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="New name" value={name} onChange={setName} isRequired autoFocus maxLength={255} />
        <ErrorMessage message={rename.isError ? messageOf(rename.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit" isDisabled={name.trim() === '' || name.trim() === project.name}>
            Rename
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

/** Deleting takes the project's environments and services with it: the person types its name to confirm. */
function DeleteProjectDialog({ organizationId, project, onClose }: { organizationId: string; project: Project; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  const refresh = useRefreshProjects(organizationId);
  const remove = api.useMutation('delete', '/project/{projectId}', {
    onSuccess: async () => {
      await refresh();
      onClose();
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (typed === project.name && !remove.isPending) remove.mutate({ params: { path: { projectId: project.id } } });
  }
  return (
    <ModalDialog title={`Delete ${project.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <p>
          {project.associated_environments_count === 0
            ? 'This deletes the project. It cannot be undone.'
            : `This deletes the project with its ${plural(project.associated_environments_count, 'environment', 'environments')} and their services. It cannot be undone.`}
        </p>
        <TextField label={`Type ${project.name} to confirm`} value={typed} onChange={setTyped} isRequired autoFocus />
        <ErrorMessage message={remove.isError ? messageOf(remove.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit" variant="danger" isDisabled={typed !== project.name}>
            Delete project
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}
