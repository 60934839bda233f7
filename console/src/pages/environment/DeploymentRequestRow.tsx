import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useState } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { Button, ErrorMessage, RelativeTime, StatusChip } from '../../ui/controls.tsx';

/**
 * The parts of a queued deployment request's row that the environment's queue and a service's queue share: its
 * status (with the refusal of a cancel, if it failed), who asked and when, and its Cancel button. One cancel mutation
 * per queue refreshes what that queue's page shows.
 */
export function useDeploymentRequestCancel(refreshed: readonly QueryKey[]) {
  const [error, setError] = useState<{ id: string; message: string } | undefined>();
  const queryClient = useQueryClient();
  const cancel = api.useMutation('post', '/deploymentQueue/{deploymentRequestId}/cancelDeployment', {
    onError: (caught, variables) => setError({ id: variables.params.path.deploymentRequestId, message: messageOf(caught) }),
    onSettled: () => Promise.all(refreshed.map((queryKey) => queryClient.invalidateQueries({ queryKey }))),
  });
  return {
    errorOf: (id: string) => (error?.id === id ? error.message : undefined),
    cancel: (id: string) => (setError(undefined), cancel.mutate({ params: { path: { deploymentRequestId: id } } })),
  };
}

export type DeploymentRequestCancel = ReturnType<typeof useDeploymentRequestCancel>;

interface Request {
  identifier: { deployment_request_id: string };
  status: string;
  created_at: string;
  auditing_data: { triggered_by: string };
}

export function RequestStatusCell({ entry, cancel }: { entry: Request; cancel: DeploymentRequestCancel }) {
  return (
    <td data-label="Status">
      <StatusChip state={entry.status} />
      <ErrorMessage message={cancel.errorOf(entry.identifier.deployment_request_id)} />
    </td>
  );
}

export function RequestedCell({ entry }: { entry: Request }) {
  return (
    <td data-label="Requested">
      <RelativeTime at={entry.created_at} /> <span className="muted">by {entry.auditing_data.triggered_by}</span>
    </td>
  );
}

/** `permissionNote`: the id of the note saying why the person's role cannot cancel; the button is disabled then. */
export function CancelRequestCell({ entry, cancel, label, permissionNote }: { entry: Request; cancel: DeploymentRequestCancel; label: string; permissionNote: string | undefined }) {
  return (
    <td className="actions-cell">
      <Button
        variant="secondary"
        aria-label={label}
        onPress={() => cancel.cancel(entry.identifier.deployment_request_id)}
        isDisabled={permissionNote !== undefined || entry.status === 'CANCELING'}
        aria-describedby={permissionNote}
      >
        Cancel
      </Button>
    </td>
  );
}
