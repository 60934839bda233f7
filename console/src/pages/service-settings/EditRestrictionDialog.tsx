import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, fieldErrorsOf, summaryOf } from '../../api/client.ts';
import { ModalDialog, SelectField, TextField } from '../../ui/controls.tsx';
import { FormActions } from '../../ui/dialogs.tsx';

export interface DeploymentRestriction {
  id: string;
  mode: 'MATCH' | 'EXCLUDE';
  type: 'PATH';
  value: string;
}

/** One deployment restriction changed in place (`edit<Kind>DeploymentRestriction`): its mode and its path. */
export function EditRestrictionDialog({ path, queryKey, restriction, onClose }: { path: string; queryKey: readonly unknown[]; restriction: DeploymentRestriction; onClose: () => void }) {
  const [mode, setMode] = useState(restriction.mode);
  const [value, setValue] = useState(restriction.value);
  const [state, setState] = useState<{ pending: boolean; error: unknown }>({ pending: false, error: undefined });
  const queryClient = useQueryClient();
  const fields = fieldErrorsOf(state.error);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (state.pending) return;
    setState({ pending: true, error: undefined });
    try {
      await apiRequest('PUT', `${path}/${restriction.id}`, { mode, type: 'PATH', value: value.trim() });
      await queryClient.invalidateQueries({ queryKey });
      onClose();
    } catch (error) {
      setState({ pending: false, error });
    }
  }
  return (
    <ModalDialog title={`Edit the restriction ${restriction.value}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        <SelectField
          id="edit-restriction-mode"
          label="Mode"
          value={mode}
          onChange={(next) => (setMode(next), setState({ pending: false, error: undefined }))}
          options={[
            { value: 'MATCH', label: 'Deploy when this path changes' },
            { value: 'EXCLUDE', label: 'Ignore changes to this path' },
          ]}
          errorMessage={fields.get('mode')}
        />
        <TextField label="Path" value={value} onChange={(next) => (setValue(next), setState({ pending: false, error: undefined }))} isRequired autoFocus maxLength={512} errorMessage={fields.get('value')} />
        <FormActions error={state.error === undefined || fields.size > 0 ? undefined : summaryOf(state.error)} onCancel={onClose} submitLabel={state.pending ? 'Saving…' : 'Save restriction'} />
      </Form>
    </ModalDialog>
  );
}
