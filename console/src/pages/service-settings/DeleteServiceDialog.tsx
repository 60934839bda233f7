import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { apiRequest, messageOf } from '../../api/client.ts';
import { ConfirmByNameDialog } from '../../ui/controls.tsx';
import type { ServiceContext } from '../ServicePage.tsx';

/** Delete a service by its typed name, then back to its environment's services (the overview and the danger zone). */
export function DeleteServiceDialog({ context, name, onClose }: { context: ServiceContext; name: string; onClose: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState(false);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  async function confirm() {
    setPending(true);
    setError(undefined);
    try {
      await apiRequest('DELETE', context.base);
      await queryClient.invalidateQueries({ queryKey: ['environment-services', context.environmentId] });
      await navigate({
        to: '/organization/$organizationId/project/$projectId/environment/$environmentId',
        params: { organizationId: context.organizationId, projectId: context.projectId, environmentId: context.environmentId },
      });
    } catch (caught) {
      setError(messageOf(caught));
      setPending(false);
    }
  }
  return (
    <ConfirmByNameDialog
      title={`Delete ${name}`}
      name={name}
      explanation={`This stops the ${context.kind.label.toLowerCase()} and deletes it with its variables${context.kind.name === 'database' ? ' and its data' : ''}. It cannot be undone.`}
      confirmLabel={`Delete ${context.kind.label.toLowerCase()}`}
      pending={pending}
      error={error}
      onConfirm={() => void confirm()}
      onClose={onClose}
    />
  );
}
