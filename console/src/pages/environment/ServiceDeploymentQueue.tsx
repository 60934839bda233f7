import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, RelativeTime, StatusChip } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { useLiveInterval } from '../live.ts';
import { ACTIONS } from '../ServiceDeployments.tsx';

/**
 * A service's deployment queue, above its deployments: its own requests and its environment's actions that concern
 * it, each cancellable. Nothing is shown while nothing waits.
 */
export function ServiceDeploymentQueue({ serviceId, organizationId }: { serviceId: string; organizationId: string }) {
  const queue = api.useQuery('get', '/service/{serviceId}/deploymentQueue', { params: { path: { serviceId } } }, { refetchInterval: useLiveInterval() });
  const [error, setError] = useState<{ id: string; message: string } | undefined>();
  const queryClient = useQueryClient();
  const permissions = useOrganizationPermissions(organizationId);
  const cannotDeploy = !permissions.can('deploy');
  const deployNote = useId();
  const cancel = api.useMutation('post', '/deploymentQueue/{deploymentRequestId}/cancelDeployment', {
    onError: (caught, variables) => setError({ id: variables.params.path.deploymentRequestId, message: messageOf(caught) }),
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: ['get', '/service/{serviceId}/deploymentQueue'] }), queryClient.invalidateQueries({ queryKey: ['service-status'] })]),
  });
  const entries = queue.data?.results ?? [];
  if (queue.isError) return <ErrorMessage message={messageOf(queue.error)} />;
  if (entries.length === 0) return null;
  return (
    <section aria-labelledby="service-queue-heading" className="section environment-queue">
      <h2 id="service-queue-heading" className="card-title">
        Deployment queue
      </h2>
      <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
      <table className="table queue-table" aria-labelledby="service-queue-heading">
        <thead>
          <tr>
            <th scope="col">Action</th>
            <th scope="col">Status</th>
            <th scope="col">Requested</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const id = entry.identifier.deployment_request_id;
            const action = ACTIONS[entry.status_details.action];
            return (
              <tr key={id}>
                <th scope="row" data-label="Action">
                  {action} <span className="muted">{entry.requested_for === 'ENVIRONMENT' ? 'with its environment' : 'of this service'}</span>
                </th>
                <td data-label="Status">
                  <StatusChip state={entry.status} />
                  {error?.id === id ? <ErrorMessage message={error.message} /> : null}
                </td>
                <td data-label="Requested">
                  <RelativeTime at={entry.created_at} /> <span className="muted">by {entry.auditing_data.triggered_by}</span>
                </td>
                <td className="actions-cell">
                  <Button
                    variant="secondary"
                    aria-label={`Cancel the queued ${action.toLowerCase()}`}
                    onPress={() => (setError(undefined), cancel.mutate({ params: { path: { deploymentRequestId: id } } }))}
                    isDisabled={cannotDeploy || entry.status === 'CANCELING'}
                    aria-describedby={cannotDeploy ? deployNote : undefined}
                  >
                    Cancel
                  </Button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
