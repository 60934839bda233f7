import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, type components } from '../../api/client.ts';
import { Button, ModalDialog, RelativeTime, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { SecretShownOnce } from '../../ui/SecretShownOnce.tsx';
import { PolicyEditor, type SampleRequest } from './PolicyEditor.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type PolicyToken = components['schemas']['OrganizationPolicyApiToken'];

/** A starting point that compiles: reads only. */
const STARTER_POLICY = `package slipway

default allow := false

# Reads only
allow if input.method == "GET"
`;

/** Policy API tokens: no role, a Rego policy decides every request they make; the value is shown once. */
export function PolicyTokensSettings() {
  const { organizationId } = route.useParams();
  const tokens = api.useQuery('get', '/organization/{organizationId}/policyApiToken', { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'policy' | 'delete'; token: PolicyToken } | undefined>();
  const list = tokens.data?.results ?? [];
  return (
    <>
      <ListSection
        id="policy-tokens-heading"
        title="Policy tokens"
        intro="For agents and automations: a policy token has no role; its Rego policy alone decides each request it makes, never beyond this organization. The value is shown once."
        query={tokens}
        count={list.length}
        loadingLabel="Loading policy tokens…"
        create={{ label: 'New policy token', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No policy tokens yet', text: 'Create one per agent, with a policy that allows exactly what it needs.' }}
        columns={['Name', 'Policy', 'Created', 'Expires']}
      >
        {list.map((token) => (
          <tr key={token.id}>
            <th scope="row">
              {token.name}
              <span className="kind-label">
                <code>{token.token_start}…</code>
                {token.description ? ` · ${token.description}` : ''}
              </span>
            </th>
            <td data-label="Policy">
              <Button variant="secondary" onPress={() => setDialog({ kind: 'policy', token })}>
                View policy<span className="visually-hidden"> of {token.name}</span>
              </Button>
            </td>
            <td data-label="Created">
              <RelativeTime at={token.created_at} />
              {token.creator_name === null ? null : <span className="kind-label">by {token.creator_name}</span>}
            </td>
            <td data-label="Expires">{token.expires_at === null ? <span className="muted">never</span> : <time dateTime={token.expires_at}>{new Date(token.expires_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' })}</time>}</td>
            <td className="actions-cell">
              <Button variant="quiet-danger" aria-label={`Delete ${token.name}`} onPress={() => setDialog({ kind: 'delete', token })}>
                Delete
              </Button>
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <CreatePolicyTokenDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'policy' ? <PolicyDialog organizationId={organizationId} token={dialog.token} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeletePolicyTokenDialog organizationId={organizationId} token={dialog.token} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

function CreatePolicyTokenDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [policy, setPolicy] = useState(STARTER_POLICY);
  const [sample, setSample] = useState<SampleRequest>({ method: 'GET', path: `/organization/${organizationId}/project`, operationId: '', tokenName: 'agent' });
  const queryClient = useQueryClient();
  const create = api.useMutation('post', '/organization/{organizationId}/policyApiToken', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/policyApiToken'] }),
  });
  const { fields, summary } = formErrorsOf(create);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({
      params: { path: { organizationId } },
      body: { name: name.trim(), opa_policy: policy, ...(description.trim() === '' ? {} : { description: description.trim() }) },
    });
  }
  if (create.isSuccess) {
    return (
      <SecretShownOnce
        title={`Policy token ${create.data.name} created`}
        notice="Copy the token now: it is shown only once. If it is lost, delete it and create another."
        label="Token"
        value={create.data.token}
        copyLabel="Copy the token"
        onClose={onClose}
      />
    );
  }
  return (
    <ModalDialog title="New policy token" isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(value) => (create.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={2000} errorMessage={fields.get('description')} />
        <PolicyEditor
          organizationId={organizationId}
          policy={policy}
          onPolicyChange={(value) => (create.reset(), setPolicy(value))}
          sample={sample}
          onSampleChange={setSample}
          errorMessage={fields.get('opa_policy')}
        />
        <FormActions error={summary} onCancel={onClose} submitLabel="Create token" />
      </Form>
    </ModalDialog>
  );
}

/**
 * A token's policy cannot be changed (the API has no edit: a token's policy is fixed at creation), but it can be read
 * and tried against a request, and edited here as a draft to try before creating a replacement token.
 */
function PolicyDialog({ organizationId, token, onClose }: { organizationId: string; token: PolicyToken; onClose: () => void }) {
  const [policy, setPolicy] = useState(token.opa_policy);
  const [sample, setSample] = useState<SampleRequest>({ method: 'GET', path: `/organization/${organizationId}/project`, operationId: '', tokenName: token.name });
  return (
    <ModalDialog title={`Policy of ${token.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <div className="form">
        <p className="muted">A token’s policy is fixed when it is created. Changes here are only tried, never saved: to change what the token may do, create another and delete this one.</p>
        <PolicyEditor organizationId={organizationId} policy={policy} onPolicyChange={setPolicy} sample={sample} onSampleChange={setSample} />
        <div className="form-actions">
          <Button onPress={onClose}>Close</Button>
        </div>
      </div>
    </ModalDialog>
  );
}

function DeletePolicyTokenDialog({ organizationId, token, onClose }: { organizationId: string; token: PolicyToken; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/policyApiToken/{policyApiTokenId}', useRefreshThenClose(['/organization/{organizationId}/policyApiToken'], onClose));
  return (
    <DeleteByNameDialog
      name={token.name}
      explanation="Every agent using this token is refused from now on. It cannot be undone."
      confirmLabel="Delete token"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, policyApiTokenId: token.id } } })}
      onClose={onClose}
    />
  );
}
