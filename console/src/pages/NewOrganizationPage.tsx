import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf } from '../api/client.ts';
import { Button, ErrorMessage, TextField } from '../ui/controls.tsx';

/** Create an organization; for a person who has none yet, this is the onboarding page. */
export function NewOrganizationPage() {
  const organizations = api.useQuery('get', '/organization');
  const first = organizations.data?.results.length === 0;
  const [name, setName] = useState('');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const create = api.useMutation('post', '/organization', {
    onSuccess: async (organization) => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization'] });
      await navigate({ to: '/organization/$organizationId', params: { organizationId: organization.id } });
    },
  });
  useEffect(() => {
    document.title = 'New organization · Slipway';
  }, []);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({ body: { name: name.trim() } });
  }

  return (
    <main className="page narrow">
      <h1>{first ? 'Create your first organization' : 'New organization'}</h1>
      <p className="muted">
        {first
          ? 'Welcome to Slipway. An organization holds your projects, clusters and team; you can invite people to it later.'
          : 'An organization holds projects, clusters and members of its own.'}
      </p>
      <Form className="card form" onSubmit={submit}>
        <TextField label="Organization name" value={name} onChange={setName} isRequired autoFocus maxLength={255} />
        <ErrorMessage message={create.isError ? messageOf(create.error) : undefined} />
        <div className="form-actions">
          <Button type="submit">
            Create organization
          </Button>
        </div>
      </Form>
    </main>
  );
}
