import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, messageOf } from '../../api/client.ts';
import { ModalDialog } from '../../ui/controls.tsx';
import { FormActions } from '../../ui/dialogs.tsx';
import type { ServiceContext } from '../ServicePage.tsx';

/**
 * Uninstall a service (the danger zone): its cluster's agent removes what it runs, and the service stays with its
 * settings, variables, domains and history, "never deployed" until a deploy brings it back. No typed name: nothing is
 * lost that a deploy does not restore (a database's data is the exception, said in the dialog).
 */
export function UninstallServiceDialog({ context, name, onUninstalled, onClose }: { context: ServiceContext; name: string; onUninstalled: () => void; onClose: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState(false);
  const queryClient = useQueryClient();
  const label = context.kind.label.toLowerCase();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      await apiRequest('POST', `${context.base}/uninstall`, {});
      await queryClient.invalidateQueries({ queryKey: ['service-status', context.base] });
      onUninstalled();
    } catch (caught) {
      setError(messageOf(caught));
      setPending(false);
    }
  }
  return (
    <ModalDialog title={`Uninstall ${name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <p>
          The cluster removes what the {label} runs{context.kind.name === 'database' ? ', its data included' : ''}. The {label} stays here with its settings, variables and history, and runs again when you
          deploy it.
        </p>
        <FormActions error={error} onCancel={onClose} submitLabel={`Uninstall ${label}`} danger />
      </Form>
    </ModalDialog>
  );
}
