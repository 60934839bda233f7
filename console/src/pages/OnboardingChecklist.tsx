import { useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, messageOf } from '../api/client.ts';
import { Button, ErrorMessage } from '../ui/controls.tsx';

/**
 * The first steps of a new organization, while the person's onboarding is IN_PROGRESS (getOrganizationOnboarding):
 * each step ticked from what the organization already has, with a link to where it is done. "Hide" dismisses it and
 * "Done" completes it (updateOrganizationOnboarding: the person's own status; nobody else's changes).
 */
export function OnboardingChecklist({ organizationId }: { organizationId: string }) {
  const path = { params: { path: { organizationId } } };
  const onboarding = api.useQuery('get', '/organization/{organizationId}/onboarding', path);
  const inProgress = onboarding.data?.status === 'IN_PROGRESS';
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', path, { enabled: inProgress });
  const projects = api.useQuery('get', '/organization/{organizationId}/project', path, { enabled: inProgress });
  const services = api.useQuery('get', '/organization/{organizationId}/services', path, { enabled: inProgress });
  const members = api.useQuery('get', '/organization/{organizationId}/member', path, { enabled: inProgress });
  const queryClient = useQueryClient();
  const update = api.useMutation('post', '/organization/{organizationId}/onboarding', {
    onSuccess: (answer) => queryClient.setQueryData(['get', '/organization/{organizationId}/onboarding', path], answer),
  });
  if (!inProgress) return null;
  const params = { organizationId };
  const steps = [
    { done: (clusters.data?.results.length ?? 0) > 0, text: 'Add a cluster to deploy on', link: <Link to="/organization/$organizationId/clusters" params={params}>Clusters</Link> },
    { done: (projects.data?.results.length ?? 0) > 0, text: 'Create a project', link: null },
    { done: (services.data?.results.length ?? 0) > 0, text: 'Create a service in one of its environments', link: null },
    { done: (members.data?.results.length ?? 0) > 1, text: 'Invite a teammate', link: <Link to="/organization/$organizationId/settings/members" params={params}>Members</Link> },
    { done: false, text: 'Be told when a deployment fails', link: <Link to="/organization/$organizationId/settings/alerts" params={params}>Alerts</Link>, optional: true },
  ];
  const required = steps.filter((step) => step.optional !== true);
  const doneCount = required.filter((step) => step.done).length;
  const allDone = doneCount === required.length;
  const body = (status: 'DISMISSED' | 'COMPLETED') => ({ ...path, body: { status } });
  return (
    <section aria-labelledby="onboarding-heading" className="card onboarding">
      <div className="section-heading">
        <h2 id="onboarding-heading">Get started</h2>
        <span className="muted">
          {doneCount} of {required.length} done
        </span>
      </div>
      <ol className="onboarding-steps">
        {steps.map((step) => (
          <li key={step.text} className={step.done ? 'onboarding-step-done' : undefined}>
            <span aria-hidden="true" className="onboarding-mark">
              {step.done ? '✓' : '○'}
            </span>
            <span>
              {step.text}
              {step.optional === true ? ' (optional)' : ''}
              <span className="visually-hidden">{step.done ? ': done' : ': to do'}</span>
              {step.link === null || step.done ? null : <> · {step.link}</>}
            </span>
          </li>
        ))}
      </ol>
      <ErrorMessage message={update.isError ? messageOf(update.error) : undefined} />
      <div className="form-actions form-actions-start">
        {allDone ? <Button onPress={() => update.mutate(body('COMPLETED'))}>Done</Button> : null}
        <Button variant="secondary" onPress={() => update.mutate(body('DISMISSED'))}>
          Hide the checklist
        </Button>
      </div>
    </section>
  );
}
