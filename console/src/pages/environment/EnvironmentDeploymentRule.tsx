import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryWithFieldsOf, type paths } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, Spinner } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { scheduleBody, ScheduleFields, scheduleOf, type ScheduleDraft } from './DeploymentSchedule.tsx';

const RULE = '/environment/{environmentId}/deploymentRule' as const;
type EnvironmentRule = paths[typeof RULE]['get']['responses'][200]['content']['application/json'];

/**
 * The environment's own deployment rule, its auto-stop schedule (docs/deployment-rules.md, "The environment's
 * schedule"): the project's matching rule gave it at creation, and it is the environment's to change here. The
 * preview flags the API stores are sent back as they are: Slipway has no preview environments for them to act on.
 */
export function EnvironmentDeploymentRule({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const rule = api.useQuery('get', RULE, { params: { path: { environmentId } } });
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="card settings-card environment-rule">
      <h2 id={headingId} className="card-title">
        Deployment rule
      </h2>
      <p className="muted">Stops this environment at night or over the weekend and deploys it again in the morning. Changes apply from now on: a stop time already past today is not acted on.</p>
      {rule.isPending ? <Spinner label="Loading the deployment rule…" /> : null}
      <ErrorMessage message={rule.isError ? messageOf(rule.error) : undefined} />
      {rule.data === undefined ? null : <EnvironmentRuleForm key={rule.data.id} organizationId={organizationId} environmentId={environmentId} rule={rule.data} />}
    </section>
  );
}

function EnvironmentRuleForm({ organizationId, environmentId, rule }: { organizationId: string; environmentId: string; rule: EnvironmentRule }) {
  const [draft, setDraft] = useState<ScheduleDraft>(() => scheduleOf(rule));
  const [saved, setSaved] = useState(false);
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const formId = useId();
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/environment/{environmentId}/deploymentRule/{deploymentRuleId}', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', RULE] });
      setSaved(true);
    },
  });
  useEffect(() => {
    if (!saved) return;
    const timer = setTimeout(() => setSaved(false), 4000);
    return () => clearTimeout(timer);
  }, [saved]);
  const fields = fieldErrorsOf(edit.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    setSaved(false);
    edit.mutate({
      params: { path: { environmentId, deploymentRuleId: rule.id } },
      body: { ...scheduleBody(draft), on_demand_preview: rule.on_demand_preview, auto_preview: rule.auto_preview },
    });
  }
  return (
    <Form onSubmit={submit} className="form">
      <ScheduleFields id={formId} draft={draft} onChange={(next) => (edit.reset(), setDraft(next))} fields={fields} />
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      <ErrorMessage message={edit.isError ? summaryWithFieldsOf(edit.error, fields.size) : undefined} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
          Save
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </Form>
  );
}
