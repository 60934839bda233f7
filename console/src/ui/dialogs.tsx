import { useQueryClient } from '@tanstack/react-query';
import { fieldErrorsOf, messageOf, summaryOf, type paths } from '../api/client.ts';
import { Button, ConfirmByNameDialog, ErrorMessage } from './controls.tsx';

/** What the dialogs below read of a mutation (a TanStack Query mutation result). */
export interface MutationState {
  isPending: boolean;
  isError: boolean;
  error: unknown;
}

/**
 * The options of a dialog's mutation: on success, the lists it changed are fetched again (their GET queries, by the
 * path they were asked with), then the dialog closes, so the closed dialog reveals the list as it now is.
 */
export function useRefreshThenClose(listPaths: readonly (keyof paths)[], onClose: () => void) {
  const queryClient = useQueryClient();
  return {
    onSuccess: async () => {
      await Promise.all(listPaths.map((path) => queryClient.invalidateQueries({ queryKey: ['get', path] })));
      onClose();
    },
  };
}

/**
 * A failed form request split for the form: each 400 detail at its field (`fields.get('url')`), and the message
 * without the details for the form's foot.
 */
export function formErrorsOf(mutation: MutationState): { fields: Map<string, string>; summary: string | undefined } {
  return { fields: fieldErrorsOf(mutation.error), summary: mutation.isError ? summaryOf(mutation.error) : undefined };
}

/**
 * A dialog that both creates and edits holds the two mutations (their paths differ): the one in use, its errors split
 * for the form, and `reset` that clears both once the person changes a field (the old refusal no longer applies).
 */
export function createOrEdit(create: MutationState & { reset: () => void }, edit: MutationState & { reset: () => void }, editing: boolean) {
  const mutation = editing ? edit : create;
  return {
    ...formErrorsOf(mutation),
    isPending: mutation.isPending,
    reset: () => {
      create.reset();
      edit.reset();
    },
  };
}

/** The foot of a dialog's form: the request's refusal (announced), Cancel, and the submit button. */
export function FormActions({ error, onCancel, submitLabel, danger, submitDisabled }: { error: string | undefined; onCancel: () => void; submitLabel: string; danger?: boolean; submitDisabled?: boolean }) {
  return (
    <div className="form-foot">
      <ErrorMessage message={error} />
      <div className="form-actions">
        <Button variant="secondary" onPress={onCancel}>
          Cancel
        </Button>
        <Button type="submit" variant={danger === true ? 'danger' : 'primary'} isDisabled={submitDisabled}>
          {submitLabel}
        </Button>
      </div>
    </div>
  );
}

/** "Delete <name>": the name typed to confirm, the delete request's refusal (a 409 naming what still uses it) shown in the dialog. */
export function DeleteByNameDialog(props: { name: string; explanation: string; confirmLabel: string; mutation: MutationState; onConfirm: () => void; onClose: () => void }) {
  return (
    <ConfirmByNameDialog
      title={`Delete ${props.name}`}
      name={props.name}
      explanation={props.explanation}
      confirmLabel={props.confirmLabel}
      pending={props.mutation.isPending}
      error={props.mutation.isError ? messageOf(props.mutation.error) : undefined}
      onConfirm={props.onConfirm}
      onClose={props.onClose}
    />
  );
}
