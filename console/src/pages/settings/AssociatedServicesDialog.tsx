import { Link } from '@tanstack/react-router';
import { messageOf } from '../../api/client.ts';
import { Button, ErrorMessage, ModalDialog, Spinner } from '../../ui/controls.tsx';
import type { ListQueryState } from '../../ui/ListSection.tsx';

/** A service as the associatedServices listings (git tokens, container registries, Helm repositories) name it. */
export interface AssociatedService {
  project_id: string;
  project_name: string;
  environment_id: string;
  environment_name: string;
  service_id: string;
  service_name: string;
  service_type: string;
}

/** The console's path noun of a listed service type (a cron or lifecycle job is a job). */
const KIND_OF_TYPE: Record<string, string> = {
  APPLICATION: 'application',
  CONTAINER: 'container',
  CRON: 'job',
  LIFECYCLE: 'job',
  HELM: 'helm',
  TERRAFORM: 'terraform',
  AGENTIC_WORKFLOW: 'agenticWorkflow',
};

const TYPE_LABEL: Record<string, string> = { CRON: 'cron job', LIFECYCLE: 'lifecycle job', AGENTIC_WORKFLOW: 'agentic workflow', HELM: 'Helm chart' };

/**
 * "Services using X": the services an organization resource is used by (those the caller may read), each a link to
 * its page with its project and environment, so a resource that cannot be deleted shows what to move first.
 */
export function AssociatedServicesDialog(props: { organizationId: string; title: string; query: ListQueryState & { data?: { results: AssociatedService[] } }; onClose: () => void }) {
  const { query, organizationId } = props;
  const services = query.data?.results ?? [];
  return (
    <ModalDialog title={props.title} isOpen onOpenChange={(open) => (open ? undefined : props.onClose())}>
      {query.isPending ? <Spinner label="Loading the services…" /> : null}
      <ErrorMessage message={query.isError ? messageOf(query.error) : undefined} />
      {query.isSuccess && services.length === 0 ? <p className="muted">No service you can see uses it.</p> : null}
      <ul className="plain-list service-links">
        {services.map((service) => {
          const kind = KIND_OF_TYPE[service.service_type];
          return (
            <li key={service.service_id}>
              {kind === undefined ? (
                <strong>{service.service_name}</strong>
              ) : (
                <Link
                  to="/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId"
                  params={{ organizationId, projectId: service.project_id, environmentId: service.environment_id, kind, serviceId: service.service_id }}
                >
                  <strong>{service.service_name}</strong>
                </Link>
              )}{' '}
              <span className="muted">({TYPE_LABEL[service.service_type] ?? service.service_type.toLowerCase()})</span>
              <span className="kind-label">
                {service.project_name} › {service.environment_name}
              </span>
            </li>
          );
        })}
      </ul>
      <div className="form-actions">
        <Button onPress={props.onClose}>Close</Button>
      </div>
    </ModalDialog>
  );
}
