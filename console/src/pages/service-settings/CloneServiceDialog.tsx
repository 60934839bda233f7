import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, summaryWithFieldsOf } from '../../api/client.ts';
import { ModalDialog, SelectField, TextField } from '../../ui/controls.tsx';
import { FormActions } from '../../ui/dialogs.tsx';
import type { ServiceContext } from '../ServicePage.tsx';

/**
 * Clone a service into its environment or another of the project: the API copies its settings, advanced settings,
 * own variables and secrets and deployment restrictions (never its domains or history); the clone, never deployed,
 * opens on its own page. The name's refusal shows at the field, a name taken there (409) at the foot.
 */
export function CloneServiceDialog({ context, name, onClose }: { context: ServiceContext; name: string; onClose: () => void }) {
  const environments = api.useQuery('get', '/project/{projectId}/environment', { params: { path: { projectId: context.projectId } } });
  const [draft, setDraft] = useState({ name: `${name}-copy`, environmentId: context.environmentId });
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const fields = fieldErrorsOf(error);
  const label = context.kind.label.toLowerCase();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      const clone = await apiRequest<{ id: string }>('POST', `${context.base}/clone`, { name: draft.name.trim(), environment_id: draft.environmentId });
      await queryClient.invalidateQueries({ queryKey: ['environment-services', draft.environmentId] });
      onClose();
      await navigate({
        to: '/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId',
        params: { organizationId: context.organizationId, projectId: context.projectId, environmentId: draft.environmentId, kind: context.kind.name, serviceId: clone.id },
      });
    } catch (caught) {
      setError(caught);
      setPending(false);
    }
  }
  const choices = (environments.data?.results ?? []).map((environment) => ({ value: environment.id, label: environment.id === context.environmentId ? `${environment.name} (this one)` : environment.name }));
  return (
    <ModalDialog title={`Clone ${name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <p className="muted">The copy keeps the {label}’s settings, variables, secrets and deployment restrictions; not its domains or history. It is not deployed.</p>
        <TextField label="Name of the copy" value={draft.name} onChange={(value) => (setDraft((previous) => ({ ...previous, name: value })), setError(undefined))} isRequired maxLength={63} errorMessage={fields.get('name')} />
        <SelectField
          id="clone-environment"
          label="Environment"
          value={draft.environmentId}
          onChange={(environmentId) => (setDraft((previous) => ({ ...previous, environmentId })), setError(undefined))}
          options={choices.length === 0 ? [{ value: context.environmentId, label: 'This environment' }] : choices}
          errorMessage={fields.get('environment_id')}
        />
        <FormActions error={error === undefined ? undefined : summaryWithFieldsOf(error, fields.size)} onCancel={onClose} submitLabel={`Clone ${label}`} />
      </Form>
    </ModalDialog>
  );
}
