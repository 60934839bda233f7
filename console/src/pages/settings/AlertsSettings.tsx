import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { CheckboxGroup } from '../../ui/CheckboxGroup.tsx';
import { ActionsMenu, Button, CheckboxField, ErrorMessage, ModalDialog, RelativeTime, SelectField, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection, ListTable } from '../../ui/ListSection.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { SecretShownOnce } from '../../ui/SecretShownOnce.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Receiver = components['schemas']['AlertReceiverResponse'];
type EmailReceiver = components['schemas']['EmailAlertReceiverResponse'];
type SlackReceiver = components['schemas']['SlackAlertReceiverResponse'];
type ReceiverCreation = components['schemas']['AlertReceiverCreationRequest'];
type Rule = components['schemas']['AlertRuleResponse'];
type Condition = components['schemas']['AlertRuleCondition'];
type Validation = { delivered: boolean; message: string; response_status: number | null };
type ServiceLight = components['schemas']['ServiceLightResponse'];
type OrganizationEnvironment = components['schemas']['OrganizationEnvironmentResponse'];

const RECEIVERS = '/organization/{organizationId}/alert-receivers' as const;
const RULES = '/organization/{organizationId}/alert-rules' as const;

/** The three kinds of receiver the API serves with its two types (docs/alerts.md, "Receivers"). */
type ReceiverKind = 'EMAIL' | 'SLACK' | 'GENERIC';
const RECEIVER_KINDS: readonly { value: ReceiverKind; label: string }[] = [
  { value: 'EMAIL', label: 'E-mail (through an SMTP server)' },
  { value: 'SLACK', label: 'Slack incoming webhook (or a Slack-compatible chat)' },
  { value: 'GENERIC', label: 'Webhook (signed JSON for any HTTP endpoint)' },
];

function kindOf(receiver: Receiver): ReceiverKind {
  return receiver.type === 'EMAIL' ? 'EMAIL' : receiver.webhook_format === 'GENERIC' ? 'GENERIC' : 'SLACK';
}

/** Where a receiver sends: the mailbox and its server, or the webhook's scheme and host (the API never answers the URL). */
function destinationOf(receiver: Receiver): string {
  if (receiver.type === 'EMAIL') return `E-mail to ${receiver.to} via ${receiver.smarthost}`;
  return `${receiver.webhook_format === 'GENERIC' ? 'Webhook' : 'Slack'} · ${receiver.webhook_url_hint}`;
}

type Measure = 'deployment_failed' | 'workload_failed' | 'workload_restarts';
const MEASURES: readonly { value: Measure; label: string; workload: boolean }[] = [
  { value: 'deployment_failed', label: 'The last deployment failed', workload: false },
  { value: 'workload_failed', label: 'The workload gave up restarting', workload: true },
  { value: 'workload_restarts', label: 'Restarts after a crash since the last deployment', workload: true },
];
type Operator = NonNullable<Condition['operator']>;
const OPERATORS: readonly { value: Operator; label: string; symbol: string }[] = [
  { value: 'NONE', label: 'Above 0 (no threshold)', symbol: '> 0' },
  { value: 'ABOVE', label: 'Above', symbol: '>' },
  { value: 'ABOVE_OR_EQUAL', label: 'At least', symbol: '≥' },
  { value: 'EQUAL', label: 'Equal to', symbol: '=' },
  { value: 'BELOW_OR_EQUAL', label: 'At most', symbol: '≤' },
  { value: 'BELOW', label: 'Below', symbol: '<' },
];
type Aggregation = NonNullable<Condition['function']>;
const FUNCTIONS: readonly { value: Aggregation; label: string }[] = [
  { value: 'MAX', label: 'The highest value of its services' },
  { value: 'MIN', label: 'The lowest value' },
  { value: 'AVG', label: 'The average' },
  { value: 'SUM', label: 'The sum' },
  { value: 'COUNT', label: 'How many services are above 0' },
];
type Severity = Rule['severity'];
const SEVERITIES: readonly { value: Severity; label: string }[] = [
  { value: 'LOW', label: 'Low' },
  { value: 'MEDIUM', label: 'Medium' },
  { value: 'HIGH', label: 'High' },
  { value: 'CRITICAL', label: 'Critical' },
];
type DurationUnit = 'S' | 'M' | 'H' | 'D';
const DURATION_UNITS: readonly { value: DurationUnit; label: string; seconds: number }[] = [
  { value: 'S', label: 'seconds', seconds: 1 },
  { value: 'M', label: 'minutes', seconds: 60 },
  { value: 'H', label: 'hours', seconds: 3600 },
  { value: 'D', label: 'days', seconds: 86_400 },
];

/** PT5M → { amount: '5', unit: 'M' }: the largest unit that divides the duration; an unreadable one as minutes 0. */
function durationParts(iso: string): { amount: string; unit: DurationUnit } {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(iso);
  if (match === null) return { amount: '0', unit: 'M' };
  const seconds = Number(match[1] ?? 0) * 86_400 + Number(match[2] ?? 0) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4] ?? 0);
  const unit = [...DURATION_UNITS].reverse().find((candidate) => seconds % candidate.seconds === 0 && seconds >= candidate.seconds) ?? DURATION_UNITS[1];
  return { amount: String(seconds / (unit?.seconds ?? 60)), unit: unit?.value ?? 'M' };
}

/** { 5, M } → PT5M; days have no T. */
function isoDuration(amount: string, unit: DurationUnit): string {
  const value = amount.trim() === '' ? '0' : amount.trim();
  return unit === 'D' ? `P${value}D` : `PT${value}${unit}`;
}

function durationText(iso: string): string {
  const { amount, unit } = durationParts(iso);
  if (amount === '0') return 'at once';
  return `for ${amount} ${DURATION_UNITS.find((entry) => entry.value === unit)?.label ?? ''}`;
}

function conditionText(condition: Condition, forDuration: string): string {
  const measure = MEASURES.find((entry) => entry.value === condition.promql)?.label ?? condition.promql;
  const operator = OPERATORS.find((entry) => entry.value === (condition.operator ?? 'NONE'));
  const comparison = condition.operator === undefined || condition.operator === 'NONE' || condition.threshold === undefined ? '' : ` ${operator?.symbol ?? condition.operator} ${condition.threshold}`;
  return `${measure}${comparison}, ${durationText(forDuration)}`;
}

/** A rule's state as a chip: firing reads as an error, on its way as busy, quiet as idle. */
const RULE_STATES: Record<Rule['state'], { tone: string; label: string }> = {
  UNDEPLOYED: { tone: 'STOPPED', label: 'Not evaluated yet' },
  OK: { tone: 'DEPLOYED', label: 'OK' },
  TRIGGERED: { tone: 'QUEUED', label: 'Triggered' },
  PENDING_NOTIFICATION: { tone: 'DEPLOYMENT_ERROR', label: 'Firing, not yet sent' },
  NOTIFIED: { tone: 'DEPLOYMENT_ERROR', label: 'Firing' },
  SUPPRESSED: { tone: 'STOPPED', label: 'Disabled' },
  UNROUTED: { tone: 'DEPLOYMENT_ERROR', label: 'Firing, no receiver' },
};

/** The things a rule can watch, named as people know them (clusters, project › environment, project › environment › service). */
interface Targets {
  clusters: { id: string; name: string }[];
  environments: { id: string; label: string }[];
  services: ServiceLight[];
}

function useTargets(organizationId: string): Targets {
  const path = { params: { path: { organizationId } } };
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', path);
  const projects = api.useQuery('get', '/organization/{organizationId}/project', path);
  const environments = api.useQuery('get', '/organization/{organizationId}/environments', path);
  const services = api.useQuery('get', '/organization/{organizationId}/services', path);
  const projectNames = new Map((projects.data?.results ?? []).map((project) => [project.id, project.name]));
  return {
    clusters: (clusters.data?.results ?? []).map((cluster) => ({ id: cluster.id, name: cluster.name })),
    environments: (environments.data?.results ?? []).map((environment: OrganizationEnvironment) => ({ id: environment.id, label: `${projectNames.get(environment.project.id) ?? 'project'} › ${environment.name}` })),
    services: (services.data?.results ?? []).filter((service) => SERVICE_TARGET_TYPES[service.service_type] !== undefined),
  };
}

/** The rule target type of each service type a rule can watch (databases and agentic workflows have no measure). */
const SERVICE_TARGET_TYPES: Partial<Record<ServiceLight['service_type'], Rule['target']['target_type']>> = {
  APPLICATION: 'APPLICATION',
  CONTAINER: 'CONTAINER',
  JOB: 'JOB',
  HELM: 'HELM',
  TERRAFORM: 'TERRAFORM',
};

function serviceLabel(service: ServiceLight): string {
  return `${service.project_name} › ${service.environment_name} › ${service.name}`;
}

function targetText(target: Rule['target'], targets: Targets): string {
  const type = target.target_type.trim();
  if (type === 'CLUSTER') return `Cluster ${targets.clusters.find((cluster) => cluster.id === target.target_id)?.name ?? target.target_id.slice(0, 8)}`;
  if (type === 'ENVIRONMENT') return `Environment ${targets.environments.find((environment) => environment.id === target.target_id)?.label ?? target.target_id.slice(0, 8)}`;
  const service = targets.services.find((candidate) => candidate.id === target.target_id);
  return `${type.charAt(0)}${type.slice(1).toLowerCase()} ${service === undefined ? target.target_id.slice(0, 8) : serviceLabel(service)}`;
}

/**
 * Alerts (docs/alerts.md): the receivers Slipway tells (a mailbox, a Slack or generic webhook; each can be sent a
 * test message) and the rules that say what to watch and whom to tell, with their state and firing history. Receivers
 * hold credentials: managing them needs the admin grant, testing one and managing rules the write grant.
 */
export function AlertsSettings() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const receivers = api.useQuery('get', RECEIVERS, path);
  const rules = api.useQuery('get', RULES, path);
  const targets = useTargets(organizationId);
  const permissions = useOrganizationPermissions(organizationId);
  const adminNote = useId();
  const writeNote = useId();
  const [dialog, setDialog] = useState<
    { kind: 'new-receiver' } | { kind: 'edit-receiver' | 'delete-receiver'; receiver: Receiver } | { kind: 'new-rule' } | { kind: 'edit-rule' | 'delete-rule' | 'history'; rule: Rule } | undefined
  >();
  const [tests, setTests] = useState<Record<string, Validation | { error: string } | 'sending'>>({});
  const validate = api.useMutation('post', '/alert-receivers/{alertReceiverId}/validate');
  async function sendTest(receiver: Receiver) {
    setTests((current) => ({ ...current, [receiver.id]: 'sending' }));
    try {
      const outcome = await validate.mutateAsync({ params: { path: { alertReceiverId: receiver.id } }, body: {} });
      setTests((current) => ({ ...current, [receiver.id]: outcome }));
    } catch (error) {
      setTests((current) => ({ ...current, [receiver.id]: { error: messageOf(error) } }));
    }
  }
  const receiverList = receivers.data?.results ?? [];
  const ruleList = rules.data?.results ?? [];
  const receiverNames = new Map(receiverList.map((receiver) => [receiver.id, receiver.name]));
  const canAdmin = permissions.can('admin');
  const canWrite = permissions.can('write');
  return (
    <>
      <ListSection
        id="alert-receivers-heading"
        title="Alert receivers"
        intro="Where alerts go: a mailbox through an SMTP server, a Slack incoming webhook, or any HTTP endpoint as signed JSON. Send a test message to check one."
        query={receivers}
        count={receiverList.length}
        loadingLabel="Loading alert receivers…"
        {...(canAdmin ? { create: { label: 'New receiver', onPress: () => setDialog({ kind: 'new-receiver' }) } } : {})}
        empty={{ title: 'No receivers yet', text: 'Add a receiver first: every rule tells at least one.' }}
        status={<PermissionNote id={adminNote} reason={permissions.reason('admin')} />}
        columns={['Receiver', 'Resolved alerts', 'Test message']}
      >
        {receiverList.map((receiver) => {
          const test = tests[receiver.id];
          return (
            <tr key={receiver.id}>
              <th scope="row">
                {receiver.name}
                <span className="kind-label">{destinationOf(receiver)}</span>
                {receiver.description === '' ? null : <span className="kind-label">{receiver.description}</span>}
              </th>
              <td data-label="Resolved alerts">{receiver.send_resolved ? 'Told when resolved' : <span className="muted">Not told</span>}</td>
              <td data-label="Test message" aria-live="polite">
                {test === undefined ? (
                  <span className="muted">not sent</span>
                ) : test === 'sending' ? (
                  <StatusChip state="QUEUED" label="Sending…" />
                ) : 'error' in test ? (
                  <ErrorMessage message={test.error} />
                ) : (
                  <ValidationOutcome outcome={test} />
                )}
              </td>
              <td className="actions-cell">
                <Button variant="secondary" onPress={() => void sendTest(receiver)} isDisabled={!canWrite} aria-describedby={canWrite ? undefined : writeNote}>
                  Send test<span className="visually-hidden"> to {receiver.name}</span>
                </Button>{' '}
                <ActionsMenu
                  label={`Actions for ${receiver.name}`}
                  actions={[
                    { id: 'edit-receiver', label: 'Edit…', isDisabled: !canAdmin },
                    { id: 'delete-receiver', label: 'Delete…', danger: true, isDisabled: !canAdmin },
                  ]}
                  onAction={(id) => setDialog({ kind: id as 'edit-receiver' | 'delete-receiver', receiver })}
                />
              </td>
            </tr>
          );
        })}
      </ListSection>
      <ListSection
        id="alert-rules-heading"
        title="Alert rules"
        intro="What to watch (a cluster, an environment or a service), for how long the condition must hold before it fires, and whom to tell. Rules are evaluated every minute."
        query={rules}
        count={ruleList.length}
        loadingLabel="Loading alert rules…"
        {...(canWrite && receiverList.length > 0 ? { create: { label: 'New rule', onPress: () => setDialog({ kind: 'new-rule' }) } } : {})}
        empty={{ title: 'No rules yet', text: receiverList.length === 0 ? 'Add a receiver above, then a rule that tells it.' : 'Add a rule: say, tell the on-call mailbox when a production deployment fails.' }}
        status={<PermissionNote id={writeNote} reason={permissions.reason('write')} />}
        columns={['Rule', 'Condition', 'State', 'Receivers']}
      >
        {ruleList.map((rule) => (
          <tr key={rule.id}>
            <th scope="row">
              {rule.name}
              <span className="kind-label">{targetText(rule.target, targets)}</span>
            </th>
            <td data-label="Condition">
              {conditionText(rule.condition, rule.for_duration)}
              <span className="kind-label">{SEVERITIES.find((entry) => entry.value === rule.severity)?.label ?? rule.severity} severity</span>
            </td>
            <td data-label="State">
              <StatusChip state={RULE_STATES[rule.state].tone} label={RULE_STATES[rule.state].label} />
              <span className="kind-label">
                checked <RelativeTime at={rule.last_evaluated_at} />
              </span>
            </td>
            <td data-label="Receivers">{rule.alert_receiver_ids.length === 0 ? <span className="muted">none left</span> : rule.alert_receiver_ids.map((id) => receiverNames.get(id) ?? id.slice(0, 8)).join(', ')}</td>
            <td className="actions-cell">
              <Button variant="secondary" onPress={() => setDialog({ kind: 'history', rule })}>
                History<span className="visually-hidden"> of {rule.name}</span>
              </Button>{' '}
              <ActionsMenu
                label={`Actions for ${rule.name}`}
                actions={[
                  { id: 'edit-rule', label: 'Edit…', isDisabled: !canWrite },
                  { id: 'delete-rule', label: 'Delete…', danger: true, isDisabled: !canWrite },
                ]}
                onAction={(id) => setDialog({ kind: id as 'edit-rule' | 'delete-rule', rule })}
              />
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new-receiver' ? <NewReceiverDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit-receiver' ? <EditReceiverDialog receiver={dialog.receiver} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete-receiver' ? <DeleteReceiverDialog receiver={dialog.receiver} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'new-rule' ? <RuleDialog organizationId={organizationId} receivers={receiverList} targets={targets} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit-rule' ? <RuleDialog organizationId={organizationId} rule={dialog.rule} receivers={receiverList} targets={targets} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete-rule' ? <DeleteRuleDialog rule={dialog.rule} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'history' ? <RuleHistoryDialog rule={dialog.rule} targets={targets} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

function ValidationOutcome({ outcome }: { outcome: Validation }) {
  return (
    <>
      <StatusChip state={outcome.delivered ? 'DEPLOYED' : 'DEPLOYMENT_ERROR'} label={outcome.delivered ? 'Delivered' : 'Not delivered'} />
      <span className="kind-label">
        {outcome.response_status === null ? '' : `HTTP ${outcome.response_status} · `}
        {outcome.message}
      </span>
    </>
  );
}

/** The fields every receiver has, and each kind's, as the form holds them. */
interface ReceiverForm {
  kind: ReceiverKind;
  name: string;
  description: string;
  sendResolved: boolean;
  owner: string;
  severity: string;
  to: string;
  from: string;
  smarthost: string;
  username: string;
  password: string;
  removePassword: boolean;
  requireTls: boolean;
  webhookUrl: string;
  signingSecret: string;
}

function formOf(receiver: Receiver | undefined): ReceiverForm {
  const email = receiver?.type === 'EMAIL' ? (receiver as EmailReceiver) : undefined;
  return {
    kind: receiver === undefined ? 'EMAIL' : kindOf(receiver),
    name: receiver?.name ?? '',
    description: receiver?.description ?? '',
    sendResolved: receiver?.send_resolved ?? true,
    owner: receiver?.owner ?? '',
    severity: receiver?.severity ?? '',
    to: email?.to ?? '',
    from: email?.from ?? '',
    smarthost: email?.smarthost ?? '',
    username: email?.auth_username ?? '',
    password: '',
    removePassword: false,
    requireTls: email?.require_tls ?? false,
    webhookUrl: '',
    signingSecret: '',
  };
}

function optional(text: string): string | null {
  return text.trim() === '' ? null : text.trim();
}

/** The creation body of the form (also what the test message is sent with: the receiver as it would be saved). */
function creationBody(organizationId: string, form: ReceiverForm): ReceiverCreation {
  const common = { organization_id: organizationId, name: form.name.trim(), description: form.description.trim(), send_resolved: form.sendResolved, owner: optional(form.owner), severity: optional(form.severity) };
  if (form.kind === 'EMAIL') {
    return { ...common, type: 'EMAIL', to: form.to.trim(), from: form.from.trim(), smarthost: form.smarthost.trim(), auth_username: optional(form.username), auth_password: form.password, require_tls: form.requireTls };
  }
  return { ...common, type: 'SLACK', webhook_url: form.webhookUrl.trim(), webhook_format: form.kind, ...(form.signingSecret.trim() === '' ? {} : { signing_secret: form.signingSecret.trim() }) };
}

/** The fields of a receiver's form, the kind's own below the common ones; `editing` words the secrets as replacements. */
function ReceiverFields({ form, set, fields, editing }: { form: ReceiverForm; set: (change: Partial<ReceiverForm>) => void; fields: Map<string, string>; editing?: EmailReceiver | SlackReceiver }) {
  const at = (field: string) => fields.get(field) ?? fields.get(`alert_receiver/${field}`);
  return (
    <>
      <TextField label="Name" value={form.name} onChange={(name) => set({ name })} isRequired autoFocus maxLength={255} errorMessage={at('name')} />
      <TextField label="Description (optional)" value={form.description} onChange={(description) => set({ description })} maxLength={2000} errorMessage={at('description')} />
      {form.kind === 'EMAIL' ? (
        <>
          <div className="field-row">
            <TextField label="To" value={form.to} onChange={(to) => set({ to })} isRequired maxLength={320} placeholder="oncall@example.com" errorMessage={at('to')} />
            <TextField label="From" value={form.from} onChange={(from) => set({ from })} isRequired maxLength={320} placeholder="alerts@example.com" errorMessage={at('from')} />
          </div>
          <TextField label="SMTP server" value={form.smarthost} onChange={(smarthost) => set({ smarthost })} isRequired maxLength={300} placeholder="smtp.example.com:587" description="host or host:port; port 25 unless given, 465 speaks TLS from the start." errorMessage={at('smarthost')} />
          <div className="field-row">
            <TextField label="SMTP user name (optional)" value={form.username} onChange={(username) => set({ username })} maxLength={320} errorMessage={at('auth_username')} />
            <TextField
              label={editing === undefined ? 'SMTP password (optional)' : 'New SMTP password (optional)'}
              type="password"
              value={form.password}
              onChange={(password) => set({ password, removePassword: false })}
              maxLength={1024}
              description={editing === undefined ? 'Empty: the server takes mail without authentication.' : (editing as EmailReceiver).auth_password_set ? 'A password is set; leave empty to keep it.' : 'None set: the server takes mail without authentication.'}
              errorMessage={at('auth_password')}
            />
          </div>
          {editing !== undefined && (editing as EmailReceiver).auth_password_set ? (
            <CheckboxField id="receiver-remove-password" label="Remove the stored password" checked={form.removePassword} onChange={(removePassword) => set({ removePassword, password: '' })} />
          ) : null}
          <CheckboxField id="receiver-require-tls" label="Require TLS (STARTTLS)" checked={form.requireTls} onChange={(requireTls) => set({ requireTls })} />
        </>
      ) : (
        <>
          <TextField
            label={editing === undefined ? 'Webhook URL' : 'New webhook URL (optional)'}
            type="url"
            value={form.webhookUrl}
            onChange={(webhookUrl) => set({ webhookUrl })}
            isRequired={editing === undefined}
            maxLength={2048}
            placeholder={form.kind === 'SLACK' ? 'https://hooks.slack.com/services/…' : 'https://alerts.example.com/slipway'}
            description={editing === undefined ? 'Kept sealed: answers show only its scheme and host.' : `Now ${(editing as SlackReceiver).webhook_url_hint}; leave empty to keep it.`}
            errorMessage={at('webhook_url')}
          />
          <TextField
            label={editing === undefined ? 'Signing secret (optional)' : 'New signing secret (optional)'}
            type="password"
            value={form.signingSecret}
            onChange={(signingSecret) => set({ signingSecret })}
            maxLength={256}
            description={editing === undefined ? 'Every delivery is signed (Standard Webhooks). Empty: Slipway generates one and shows it once.' : 'Leave empty to keep the current one.'}
            errorMessage={at('signing_secret')}
          />
        </>
      )}
      <CheckboxField id="receiver-send-resolved" label="Also tell when an alert resolves" checked={form.sendResolved} onChange={(sendResolved) => set({ sendResolved })} />
      <div className="field-row">
        <TextField label="Owner (optional)" value={form.owner} onChange={(owner) => set({ owner })} maxLength={255} description="Who answers it, for the notifications." errorMessage={at('owner')} />
        <TextField label="Severity label (optional)" value={form.severity} onChange={(severity) => set({ severity })} maxLength={255} errorMessage={at('severity')} />
      </div>
    </>
  );
}

/**
 * A new receiver is tested before it is saved: the form sends a test message to the receiver it describes
 * (validateNewAlertReceiver stores nothing) and creates it once the message is delivered. An undelivered test shows
 * why, and the person may create it anyway (an endpoint not reachable yet). A generated signing secret is shown once.
 */
function NewReceiverDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [form, setForm] = useState<ReceiverForm>(formOf(undefined));
  const [tested, setTested] = useState<{ body: string; outcome: Validation } | undefined>();
  const [generated, setGenerated] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const refreshThenClose = useRefreshThenClose([RECEIVERS], onClose);
  const validate = api.useMutation('post', '/alert-receivers/validate');
  const create = api.useMutation('post', '/alert-receivers', {
    onSuccess: async (created) => {
      if (created.type === 'EMAIL' || created.signing_secret === undefined || form.signingSecret.trim() !== '') return refreshThenClose.onSuccess();
      await queryClient.invalidateQueries({ queryKey: ['get', RECEIVERS] });
      setGenerated(created.signing_secret);
    },
  });
  const failed = create.isError ? create : validate;
  const fields = fieldErrorsOf(failed.error);
  const summary = create.isError || validate.isError ? summaryOf(failed.error) : undefined;
  const body = creationBody(organizationId, form);
  const bodyText = JSON.stringify(body);
  const undelivered = tested !== undefined && tested.body === bodyText && !tested.outcome.delivered;
  function set(change: Partial<ReceiverForm>) {
    validate.reset();
    create.reset();
    setForm((current) => ({ ...current, ...change }));
  }
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (validate.isPending || create.isPending) return;
    if (undelivered) {
      create.mutate({ body });
      return;
    }
    try {
      const outcome = await validate.mutateAsync({ body: { alert_receiver: body } });
      setTested({ body: bodyText, outcome });
      if (outcome.delivered) create.mutate({ body });
    } catch {
      // Shown from the mutation's error: the API's refusal of a field, at that field.
    }
  }
  if (generated !== undefined) {
    return (
      <SecretShownOnce
        title="Receiver created"
        notice="Slipway signs every delivery with this secret. Copy it to the receiver now if it checks signatures: it is shown only once (a new one can be set by editing the receiver)."
        label="Signing secret"
        value={generated}
        copyLabel="Copy the signing secret"
        onClose={onClose}
      />
    );
  }
  return (
    <ModalDialog title="New alert receiver" isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={(event) => void submit(event)} className="form">
        <SelectField id="receiver-kind" label="Kind" value={form.kind} onChange={(kind) => set({ kind })} options={RECEIVER_KINDS} />
        <ReceiverFields form={form} set={set} fields={fields} />
        <div aria-live="polite">
          {validate.isPending ? <p className="muted">Sending a test message…</p> : null}
          {tested !== undefined && tested.body === bodyText ? (
            <p className={tested.outcome.delivered ? 'notice' : 'error-message'}>
              {tested.outcome.delivered ? 'Test message delivered' : 'The test message was not delivered'}: {tested.outcome.message}
              {tested.outcome.response_status === null ? '' : ` (HTTP ${tested.outcome.response_status})`}
            </p>
          ) : null}
        </div>
        <FormActions error={summary} onCancel={onClose} submitLabel={undelivered ? 'Create anyway' : 'Test and create'} />
      </Form>
    </ModalDialog>
  );
}

/** Edit: read afresh (getAlertReceiver), the type fixed, secrets not typed kept. */
function EditReceiverDialog({ receiver, onClose }: { receiver: Receiver; onClose: () => void }) {
  const stored = api.useQuery('get', '/alert-receivers/{alertReceiverId}', { params: { path: { alertReceiverId: receiver.id } } });
  return (
    <ModalDialog title={`Edit ${receiver.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      {stored.isPending ? <Spinner label="Loading the receiver…" /> : null}
      <ErrorMessage message={stored.isError ? messageOf(stored.error) : undefined} />
      {stored.data === undefined ? null : <EditReceiverForm receiver={stored.data} onClose={onClose} />}
    </ModalDialog>
  );
}

function EditReceiverForm({ receiver, onClose }: { receiver: Receiver; onClose: () => void }) {
  const [form, setForm] = useState<ReceiverForm>(formOf(receiver));
  const edit = api.useMutation('put', '/alert-receivers/{alertReceiverId}', useRefreshThenClose([RECEIVERS, '/alert-receivers/{alertReceiverId}'], onClose));
  const fields = fieldErrorsOf(edit.error);
  function set(change: Partial<ReceiverForm>) {
    edit.reset();
    setForm((current) => ({ ...current, ...change }));
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    const common = { name: form.name.trim(), description: form.description.trim(), send_resolved: form.sendResolved, owner: optional(form.owner), severity: optional(form.severity) };
    const body =
      receiver.type === 'EMAIL'
        ? {
            ...common,
            type: 'EMAIL' as const,
            to: form.to.trim(),
            from: form.from.trim(),
            smarthost: form.smarthost.trim(),
            auth_username: optional(form.username),
            require_tls: form.requireTls,
            // Absent keeps the stored password, empty removes it.
            ...(form.removePassword ? { auth_password: '' } : form.password === '' ? {} : { auth_password: form.password }),
          }
        : {
            ...common,
            type: 'SLACK' as const,
            webhook_format: form.kind === 'GENERIC' ? ('GENERIC' as const) : ('SLACK' as const),
            ...(form.webhookUrl.trim() === '' ? {} : { webhook_url: form.webhookUrl.trim() }),
            ...(form.signingSecret.trim() === '' ? {} : { signing_secret: form.signingSecret.trim() }),
          };
    edit.mutate({ params: { path: { alertReceiverId: receiver.id } }, body });
  }
  return (
    <Form onSubmit={submit} className="form">
      {receiver.type === 'EMAIL' ? null : (
        <SelectField id="receiver-format" label="Format" value={form.kind} onChange={(kind) => set({ kind })} options={RECEIVER_KINDS.filter((kind) => kind.value !== 'EMAIL')} />
      )}
      <ReceiverFields form={form} set={set} fields={fields} editing={receiver} />
      <FormActions error={edit.isError ? summaryOf(edit.error) : undefined} onCancel={onClose} submitLabel="Save" />
    </Form>
  );
}

function DeleteReceiverDialog({ receiver, onClose }: { receiver: Receiver; onClose: () => void }) {
  const remove = api.useMutation('delete', '/alert-receivers/{alertReceiverId}', useRefreshThenClose([RECEIVERS, RULES], onClose));
  return (
    <DeleteByNameDialog
      name={receiver.name}
      explanation="Nothing more is sent to it, and it is taken off every rule that tells it (a rule with no receiver left fires unrouted)."
      confirmLabel="Delete receiver"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { alertReceiverId: receiver.id } } })}
      onClose={onClose}
    />
  );
}

type TargetLevel = 'CLUSTER' | 'ENVIRONMENT' | 'SERVICE';

/**
 * A rule: its target (chosen at creation: a cluster, an environment, or a service, and the cluster it is on), the
 * measure and its comparison, how long it must hold, severity, the notification's words and the receivers. An edit
 * keeps the cluster and the target (the API's rule).
 */
function RuleDialog({ organizationId, rule, receivers, targets, onClose }: { organizationId: string; rule?: Rule; receivers: readonly Receiver[]; targets: Targets; onClose: () => void }) {
  const storedLevel: TargetLevel = rule === undefined ? 'SERVICE' : rule.target.target_type.trim() === 'CLUSTER' ? 'CLUSTER' : rule.target.target_type === 'ENVIRONMENT' ? 'ENVIRONMENT' : 'SERVICE';
  const [level, setLevel] = useState<TargetLevel>(storedLevel);
  const [targetId, setTargetId] = useState(rule?.target.target_id ?? '');
  const [name, setName] = useState(rule?.name ?? '');
  const [description, setDescription] = useState(rule?.description ?? '');
  const [measure, setMeasure] = useState<Measure>((rule?.condition.promql as Measure | undefined) ?? 'deployment_failed');
  const [aggregation, setAggregation] = useState<Aggregation>(rule?.condition.function === undefined || rule.condition.function === 'NONE' ? 'MAX' : rule.condition.function);
  const [operator, setOperator] = useState<Operator>(rule?.condition.operator ?? 'NONE');
  const [threshold, setThreshold] = useState(rule?.condition.threshold === undefined ? '' : String(rule.condition.threshold));
  const initialDuration = durationParts(rule?.for_duration ?? 'PT5M');
  const [amount, setAmount] = useState(initialDuration.amount);
  const [unit, setUnit] = useState<DurationUnit>(initialDuration.unit);
  const [severity, setSeverity] = useState<Severity>(rule?.severity ?? 'HIGH');
  const [tag, setTag] = useState(rule?.tag ?? '');
  const [summaryText, setSummaryText] = useState(rule?.presentation.summary ?? '');
  const [runbook, setRunbook] = useState(rule?.presentation.runbook_url ?? '');
  const [receiverIds, setReceiverIds] = useState<string[]>(rule?.alert_receiver_ids ?? (receivers[0] === undefined ? [] : [receivers[0].id]));
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  // An environment's cluster is the environment's own (its answer names it); a service's is in the list.
  const environment = api.useQuery('get', '/environment/{environmentId}', { params: { path: { environmentId: targetId } } }, { enabled: rule === undefined && level === 'ENVIRONMENT' && targetId !== '' });
  const service = targets.services.find((candidate) => candidate.id === targetId);
  const clusterId = rule?.cluster_id ?? (level === 'CLUSTER' ? targetId : level === 'ENVIRONMENT' ? (environment.data?.cluster_id ?? '') : (service?.cluster_id ?? ''));
  const refreshThenClose = useRefreshThenClose([RULES], onClose);
  const create = api.useMutation('post', '/alert-rules', refreshThenClose);
  const edit = api.useMutation('put', '/alert-rules/{alertRuleId}', refreshThenClose);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, rule !== undefined);
  const change =
    <Value,>(setter: (value: Value) => void) =>
    (value: Value) => {
      reset();
      setter(value);
    };
  const targetOptions =
    level === 'CLUSTER'
      ? targets.clusters.map((cluster) => ({ value: cluster.id, label: cluster.name }))
      : level === 'ENVIRONMENT'
        ? targets.environments.map((entry) => ({ value: entry.id, label: entry.label }))
        : targets.services.map((entry) => ({ value: entry.id, label: `${serviceLabel(entry)} (${entry.service_type.toLowerCase()})` }));
  const measures = MEASURES.filter((entry) => level !== 'CLUSTER' || !entry.workload);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const condition: Condition = {
      kind: 'BUILT',
      promql: measure,
      operator,
      ...(operator === 'NONE' || threshold.trim() === '' ? {} : { threshold: Number(threshold) }),
      ...(level === 'ENVIRONMENT' ? { function: aggregation } : {}),
    };
    const common = {
      name: name.trim(),
      description: description.trim(),
      tag: tag.trim(),
      condition,
      for_duration: isoDuration(amount, unit),
      severity,
      presentation: { summary: optional(summaryText), runbook_url: optional(runbook) },
      enabled,
      alert_receiver_ids: receiverIds,
    };
    if (rule !== undefined) {
      edit.mutate({ params: { path: { alertRuleId: rule.id } }, body: common });
      return;
    }
    const targetType = level === 'CLUSTER' ? 'CLUSTER' : level === 'ENVIRONMENT' ? 'ENVIRONMENT' : (SERVICE_TARGET_TYPES[service?.service_type ?? 'APPLICATION'] ?? 'APPLICATION');
    create.mutate({ body: { ...common, organization_id: organizationId, cluster_id: clusterId, target: { target_type: targetType, target_id: targetId } } });
  }
  const targetError = fields.get('target/target_id') ?? fields.get('target') ?? fields.get('cluster_id');
  return (
    <ModalDialog title={rule === undefined ? 'New alert rule' : `Edit ${rule.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={change(setName)} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={change(setDescription)} maxLength={2000} errorMessage={fields.get('description')} />
        {rule === undefined ? (
          <>
            <SelectField
              id="rule-level"
              label="Watch"
              value={level}
              onChange={(next) => {
                reset();
                setLevel(next);
                setTargetId('');
                if (next === 'CLUSTER' && MEASURES.find((entry) => entry.value === measure)?.workload === true) setMeasure('deployment_failed');
              }}
              options={[
                { value: 'SERVICE', label: 'A service' },
                { value: 'ENVIRONMENT', label: 'An environment' },
                { value: 'CLUSTER', label: 'A cluster' },
              ]}
            />
            <SelectField
              id="rule-target"
              label={level === 'CLUSTER' ? 'Cluster' : level === 'ENVIRONMENT' ? 'Environment' : 'Service'}
              value={targetId}
              onChange={change(setTargetId)}
              options={[{ value: '', label: targetOptions.length === 0 ? 'None in this organization' : 'Choose…' }, ...targetOptions]}
              errorMessage={targetError}
            />
          </>
        ) : (
          <p className="muted">Watches {targetText(rule.target, targets).toLowerCase().replace(/^./, (first) => first.toUpperCase())} (a rule keeps its target).</p>
        )}
        <fieldset className="fieldset">
          <legend>Condition</legend>
          <SelectField id="rule-measure" label="Measure" value={measure} onChange={change(setMeasure)} options={measures} errorMessage={fields.get('condition/promql') ?? fields.get('condition')} />
          {level === 'ENVIRONMENT' ? <SelectField id="rule-function" label="Across the environment's services" value={aggregation} onChange={change(setAggregation)} options={FUNCTIONS} errorMessage={fields.get('condition/function')} /> : null}
          <div className="field-row">
            <SelectField id="rule-operator" label="Fires when the value is" value={operator} onChange={change(setOperator)} options={OPERATORS} errorMessage={fields.get('condition/operator')} />
            {operator === 'NONE' ? null : <TextField label="Threshold" value={threshold} onChange={change(setThreshold)} isRequired inputMode="numeric" errorMessage={fields.get('condition/threshold')} />}
          </div>
          <div className="field-row">
            <TextField label="For at least" value={amount} onChange={change(setAmount)} isRequired inputMode="numeric" description="0: as soon as it holds; at most 7 days." errorMessage={fields.get('for_duration')} />
            <SelectField id="rule-duration-unit" label="Unit" value={unit} onChange={change(setUnit)} options={DURATION_UNITS} />
          </div>
        </fieldset>
        <div className="field-row">
          <SelectField id="rule-severity" label="Severity" value={severity} onChange={change(setSeverity)} options={SEVERITIES} errorMessage={fields.get('severity')} />
          <TextField label="Tag (optional)" value={tag} onChange={change(setTag)} maxLength={255} errorMessage={fields.get('tag')} />
        </div>
        <TextField label="Summary (optional)" value={summaryText} onChange={change(setSummaryText)} maxLength={2000} description="The notification's first line." errorMessage={fields.get('presentation/summary')} />
        <TextField label="Runbook URL (optional)" type="url" value={runbook} onChange={change(setRunbook)} maxLength={2048} placeholder="https://wiki.example.com/runbooks/deploys" errorMessage={fields.get('presentation/runbook_url')} />
        <CheckboxGroup
          id="rule-receivers"
          legend="Tell"
          options={receivers.map((receiver) => ({ value: receiver.id, label: `${receiver.name} (${destinationOf(receiver)})` }))}
          selected={receiverIds}
          onChange={change(setReceiverIds)}
          description="At least one receiver."
          errorMessage={[...fields.entries()].find(([field]) => field.startsWith('alert_receiver_ids'))?.[1]}
        />
        <CheckboxField id="rule-enabled" label="Enabled" checked={enabled} onChange={change(setEnabled)} description="A disabled rule is not evaluated; an alert it has open ends without a resolution notice." />
        <FormActions
          error={summary}
          onCancel={onClose}
          submitLabel={rule === undefined ? 'Create rule' : 'Save'}
          submitDisabled={receiverIds.length === 0 || (rule === undefined && (targetId === '' || clusterId === ''))}
        />
      </Form>
    </ModalDialog>
  );
}

function DeleteRuleDialog({ rule, onClose }: { rule: Rule; onClose: () => void }) {
  const remove = api.useMutation('delete', '/alert-rules/{alertRuleId}', useRefreshThenClose([RULES], onClose));
  return (
    <DeleteByNameDialog
      name={rule.name}
      explanation="The rule stops being evaluated; its firing history goes with it. An alert it has open is not resolved to anyone."
      confirmLabel="Delete rule"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { alertRuleId: rule.id } } })}
      onClose={onClose}
    />
  );
}

/** A rule's state and its newest firings, read afresh (getAlertRule). */
function RuleHistoryDialog({ rule, targets, onClose }: { rule: Rule; targets: Targets; onClose: () => void }) {
  const stored = api.useQuery('get', '/alert-rules/{alertRuleId}', { params: { path: { alertRuleId: rule.id } } });
  const current = stored.data;
  return (
    <ModalDialog title={`History of ${rule.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <div className="form">
        {stored.isPending ? <Spinner label="Loading the rule…" /> : null}
        <ErrorMessage message={stored.isError ? messageOf(stored.error) : undefined} />
        {current === undefined ? null : (
          <>
            <dl className="facts">
              <div>
                <dt>Watches</dt>
                <dd>{targetText(current.target, targets)}</dd>
              </div>
              <div>
                <dt>State</dt>
                <dd>
                  <StatusChip state={RULE_STATES[current.state].tone} label={RULE_STATES[current.state].label} />
                  {current.starts_at === undefined ? null : (
                    <span className="kind-label">
                      holding since <RelativeTime at={current.starts_at} />
                    </span>
                  )}
                </dd>
              </div>
              <div>
                <dt>Last checked</dt>
                <dd>
                  <RelativeTime at={current.last_evaluated_at} />
                </dd>
              </div>
            </dl>
            {current.firings.length === 0 ? (
              <p className="muted">It has not fired.</p>
            ) : (
              <ListTable label="Firings" columns={['Fired', 'Value', 'Resolved', 'Notification']}>
                {current.firings.map((firing) => (
                  <tr key={firing.id}>
                    <th scope="row">
                      <RelativeTime at={firing.fired_at} />
                    </th>
                    <td data-label="Value">{firing.value}</td>
                    <td data-label="Resolved">{firing.resolved_at === null ? <StatusChip state="DEPLOYMENT_ERROR" label="Open" /> : <RelativeTime at={firing.resolved_at} />}</td>
                    <td data-label="Notification">{firing.notified_at === null ? <span className="error-text">{firing.notification_error ?? 'not sent yet'}</span> : <>sent <RelativeTime at={firing.notified_at} /></>}</td>
                    <td />
                  </tr>
                ))}
              </ListTable>
            )}
          </>
        )}
        <div className="form-actions">
          <Button onPress={onClose}>Close</Button>
        </div>
      </div>
    </ModalDialog>
  );
}
