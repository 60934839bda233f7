import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { api, messageOf } from '../api/client.ts';
import { KINDS } from '../services/kinds.ts';
import { ErrorMessage, SelectField, Spinner } from '../ui/controls.tsx';

/**
 * Every service of the organization in one table (listServicesByOrganizationId), narrowed by project, environment
 * (listEnvironmentsByOrganizationId) or cluster; each row opens the service's page. Its error shows once the page has
 * read the organization (`organizationRead`): before that, a failure is the page's to report.
 */
export function OrganizationServices({ organizationId, organizationRead }: { organizationId: string; organizationRead: boolean }) {
  const path = { params: { path: { organizationId } } };
  const [projectId, setProjectId] = useState('');
  const [environmentId, setEnvironmentId] = useState('');
  const [clusterId, setClusterId] = useState('');
  const projects = api.useQuery('get', '/organization/{organizationId}/project', path);
  const environments = api.useQuery('get', '/organization/{organizationId}/environments', path);
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', path);
  const query = { ...(projectId === '' ? {} : { project_id: projectId }), ...(environmentId === '' ? {} : { environment_id: environmentId }), ...(clusterId === '' ? {} : { cluster_id: clusterId }) };
  const services = api.useQuery('get', '/organization/{organizationId}/services', { params: { path: { organizationId }, query } });
  const list = services.data?.results ?? [];
  const filtered = projectId !== '' || environmentId !== '' || clusterId !== '';
  const projectNames = new Map((projects.data?.results ?? []).map((project) => [project.id, project.name]));
  const environmentOptions = (environments.data?.results ?? [])
    .filter((environment) => projectId === '' || environment.project.id === projectId)
    .map((environment) => ({ value: environment.id, label: projectId === '' ? `${projectNames.get(environment.project.id) ?? 'project'} › ${environment.name}` : environment.name }));
  return (
    <section aria-labelledby="all-services-heading" className="section organization-services">
      <div className="section-heading">
        <h2 id="all-services-heading">All services</h2>
      </div>
      <div className="card filters" role="search" aria-label="Filter the services">
        <SelectField
          id="all-services-project"
          label="Project"
          value={projectId}
          onChange={(next) => (setProjectId(next), setEnvironmentId(''))}
          options={[{ value: '', label: 'Any project' }, ...(projects.data?.results ?? []).map((project) => ({ value: project.id, label: project.name }))]}
        />
        <SelectField id="all-services-environment" label="Environment" value={environmentId} onChange={setEnvironmentId} options={[{ value: '', label: 'Any environment' }, ...environmentOptions]} />
        <SelectField id="all-services-cluster" label="Cluster" value={clusterId} onChange={setClusterId} options={[{ value: '', label: 'Any cluster' }, ...(clusters.data?.results ?? []).map((cluster) => ({ value: cluster.id, label: cluster.name }))]} />
      </div>
      {services.isPending ? <Spinner label="Loading the services…" /> : null}
      <ErrorMessage message={organizationRead && services.isError ? messageOf(services.error) : undefined} />
      {services.isSuccess && list.length === 0 ? <p className="muted">{filtered ? 'No service matches these filters.' : 'No services yet: open a project’s environment to create one.'}</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-labelledby="all-services-heading">
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col">Kind</th>
              <th scope="col">Where</th>
            </tr>
          </thead>
          <tbody>
            {list.map((service) => {
              const kind = KINDS.find((candidate) => candidate.type === service.service_type);
              return (
                <tr key={service.id}>
                  <th scope="row">
                    {kind === undefined ? (
                      service.name
                    ) : (
                      <Link
                        to="/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId"
                        params={{ organizationId, projectId: service.project_id, environmentId: service.environment_id, kind: kind.name, serviceId: service.id }}
                      >
                        {service.name}
                      </Link>
                    )}
                  </th>
                  <td data-label="Kind">
                    {kind?.label ?? service.service_type.toLowerCase()}
                    {service.job_type === undefined ? '' : service.job_type === 'CRON' ? ' (cron)' : ' (lifecycle)'}
                  </td>
                  <td data-label="Where">
                    {service.project_name} › {service.environment_name}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
