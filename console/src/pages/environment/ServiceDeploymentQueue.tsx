import { useId } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { ErrorMessage } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { useLiveInterval } from '../live.ts';
import { ACTIONS } from '../ServiceDeployments.tsx';
import { CancelRequestCell, RequestedCell, RequestStatusCell, useDeploymentRequestCancel } from './DeploymentRequestRow.tsx';

/**
 * A service's deployment queue, above its deployments: its own requests and its environment's actions that concern
 * it, each cancellable. Nothing is shown while nothing waits.
 */
export function ServiceDeploymentQueue({ serviceId, organizationId }: { serviceId: string; organizationId: string }) {
  const queue = api.useQuery('get', '/service/{serviceId}/deploymentQueue', { params: { path: { serviceId } } }, { refetchInterval: useLiveInterval() });
  const permissions = useOrganizationPermissions(organizationId);
  const cannotDeploy = !permissions.can('deploy');
  const deployNote = useId();
  const cancel = useDeploymentRequestCancel([['get', '/service/{serviceId}/deploymentQueue'], ['service-status']]);
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
                <RequestStatusCell entry={entry} cancel={cancel} />
                <RequestedCell entry={entry} />
                <CancelRequestCell entry={entry} cancel={cancel} label={`Cancel the queued ${action.toLowerCase()}`} permissionNote={cannotDeploy ? deployNote : undefined} />
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
