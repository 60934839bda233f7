import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, fieldErrorsOf, messageOf, summaryOf, summaryWithFieldsOf } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import type { AnyService } from '../../services/kinds.ts';
import { Button, CheckboxField, ErrorMessage, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import type { ServiceContext } from '../ServicePage.tsx';
import { CloneServiceDialog } from './CloneServiceDialog.tsx';
import { DeleteServiceDialog } from './DeleteServiceDialog.tsx';
import { EditRestrictionDialog } from './EditRestrictionDialog.tsx';
import { UninstallServiceDialog } from './UninstallServiceDialog.tsx';
import { parseSetting, requiredOf, showSetting, type Settings, type Stored } from './settings-bodies.ts';

/** A number field's text as the API's integer; anything else goes as written, for the server to name the field. */
function integer(text: string): number | string {
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : text;
}

function text(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/**
 * One section's request: a PUT of the kind's edit with its required fields and the section's own, so each section
 * saves alone; the 400's details go to the section's fields, "Saved." is announced for a few seconds.
 */
function useSectionSave(context: ServiceContext, service: Stored) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<{ pending: boolean; error: unknown; saved: boolean }>({ pending: false, error: undefined, saved: false });
  useEffect(() => {
    if (!state.saved) return;
    const timer = setTimeout(() => setState((previous) => ({ ...previous, saved: false })), 4000);
    return () => clearTimeout(timer);
  }, [state.saved]);
  async function save(body: Record<string, unknown>) {
    if (state.pending) return;
    setState({ pending: true, error: undefined, saved: false });
    try {
      await apiRequest('PUT', context.base, { ...requiredOf(context.kind, service), ...body });
      await queryClient.invalidateQueries({ queryKey: ['service', context.base] });
      setState({ pending: false, error: undefined, saved: true });
    } catch (error) {
      setState({ pending: false, error, saved: false });
    }
  }
  return { save, fields: fieldErrorsOf(state.error), error: state.error, saved: state.saved, clear: () => setState((previous) => (previous.error === undefined ? previous : { ...previous, error: undefined })) };
}

function SettingsCard({ id, title, intro, children }: { id: string; title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <section aria-labelledby={`${id}-heading`} className="card settings-card">
      <h2 id={`${id}-heading`} className="card-title">
        {title}
      </h2>
      {intro === undefined ? null : <p className="muted">{intro}</p>}
      {children}
    </section>
  );
}

function SaveFoot({ error, fieldCount, saved, disabled, noteId }: { error: unknown; fieldCount: number; saved: boolean; disabled: boolean; noteId: string | undefined }) {
  return (
    <>
      <ErrorMessage message={error === undefined ? undefined : summaryWithFieldsOf(error, fieldCount)} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={disabled} aria-describedby={noteId}>
          Save
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </>
  );
}

/**
 * A service's settings, for every kind: general (name, description, the kind's source), a cron job's schedule,
 * resources, ports, health checks, network, a database's connection, deployment restrictions, advanced settings, clone
 * and the danger zone (uninstall, delete), each section shown when the kind has it (`kind.settings`, or the kind's
 * name for what only one or two kinds have) and saved on its own.
 */
export function ServiceSettings({ context, service }: { context: ServiceContext; service: AnyService }) {
  const stored = service as unknown as Stored;
  const { kind } = context;
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotWrite = !permissions.can('write');
  const writeNote = useId();
  const props = { context, service: stored, readOnly: cannotWrite, noteId: cannotWrite ? writeNote : undefined };
  const [deleting, setDeleting] = useState(false);
  const [uninstalling, setUninstalling] = useState(false);
  const [cloning, setCloning] = useState(false);
  const [uninstalled, setUninstalled] = useState(false);
  const cannotDeploy = !permissions.can('deploy');
  const deployNote = useId();
  return (
    <div className="service-settings">
      <PermissionNote id={writeNote} reason={permissions.reason('write')} />
      <GeneralSection {...props} />
      {kind.name === 'job' && cronOf(stored) !== undefined ? <ScheduleSection {...props} /> : null}
      {kind.settings.resources === 'none' ? null : <ResourcesSection {...props} />}
      {kind.settings.ports ? <PortsSection {...props} /> : null}
      {kind.settings.healthChecks ? <HealthChecksSection {...props} /> : null}
      {kind.name === 'application' || kind.name === 'container' ? <NetworkSection {...props} /> : null}
      {kind.name === 'database' ? <DatabaseCredentialsSection {...props} /> : null}
      {kind.settings.deploymentRestrictions ? <DeploymentRestrictionsSection {...props} /> : null}
      {kind.settings.advancedSettings === undefined ? null : <AdvancedSettingsSection {...props} settingsKind={kind.settings.advancedSettings} />}
      {kind.name === 'agenticWorkflow' ? null : (
        <SettingsCard id="clone" title="Clone" intro={`A copy of the ${kind.label.toLowerCase()} in this environment or another of the project, with its settings and variables, not deployed.`}>
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => setCloning(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
              Clone {kind.label.toLowerCase()}…
            </Button>
          </div>
        </SettingsCard>
      )}
      <SettingsCard id="danger-zone" title="Danger zone">
        {kind.name === 'agenticWorkflow' ? null : (
          <>
            <p>Uninstalling the {kind.label.toLowerCase()} removes what it runs on the cluster and keeps it here, with its settings, to deploy again.</p>
            <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
            <div className="form-actions form-actions-start">
              <Button variant="secondary" onPress={() => (setUninstalled(false), setUninstalling(true))} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
                Uninstall {kind.label.toLowerCase()}…
              </Button>
              <span role="status" className="saved-note">
                {uninstalled ? 'Uninstall requested: the cluster removes it.' : ''}
              </span>
            </div>
          </>
        )}
        <p>Deleting the {kind.label.toLowerCase()} stops it and removes it with its variables{kind.name === 'database' ? ' and its data' : ''}, after you type its name.</p>
        <div className="form-actions form-actions-start">
          <Button variant="danger" onPress={() => setDeleting(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
            Delete {kind.label.toLowerCase()}…
          </Button>
        </div>
      </SettingsCard>
      {cloning ? <CloneServiceDialog context={context} name={stored.name} onClose={() => setCloning(false)} /> : null}
      {deleting ? <DeleteServiceDialog context={context} name={stored.name} onClose={() => setDeleting(false)} /> : null}
      {uninstalling ? <UninstallServiceDialog context={context} name={stored.name} onUninstalled={() => (setUninstalling(false), setUninstalled(true))} onClose={() => setUninstalling(false)} /> : null}
    </div>
  );
}

interface SectionProps {
  context: ServiceContext;
  service: Stored;
  readOnly: boolean;
  noteId: string | undefined;
}

/**
 * Name, description and the source fields the console edits: an application's git repository, a container's image, a
 * database's version and reachability, a Helm chart's version (from a Helm repository), a Terraform service's branch
 * and root path.
 */
function GeneralSection({ context, service, readOnly, noteId }: SectionProps) {
  const { kind } = context;
  const git = (service.git_repository ?? undefined) as { url: string; branch: string; root_path: string; provider: string; git_token_id?: string | null } | undefined;
  const terraformGit = (service.terraform_files_source as { git_repository: Record<string, unknown> & { branch: string; root_path: string } } | undefined)?.git_repository;
  const chart = (service.source as { repository?: { chart_version: string } } | undefined)?.repository;
  const [draft, setDraft] = useState({
    name: service.name,
    description: text(service.description),
    repository: text(git?.url),
    branch: text(git?.branch),
    rootPath: text(git?.root_path),
    dockerfilePath: text(service.dockerfile_path),
    image: text(service.image_name),
    chartVersion: text(chart?.chart_version),
    terraformBranch: text(terraformGit?.branch),
    terraformRootPath: text(terraformGit?.root_path),
    tag: text(service.tag),
    version: text(service.version),
    accessibility: service.accessibility === 'PUBLIC' ? ('PUBLIC' as const) : ('PRIVATE' as const),
  });
  const section = useSectionSave(context, service);
  const { fields } = section;
  // The versions the edit accepts (its own and the newer ones of its type), said beside the field.
  const versions = useQuery({
    queryKey: ['database-versions', context.base],
    queryFn: () => apiRequest<{ results: { name: string }[] }>('GET', `${context.base}/version`),
    enabled: kind.name === 'database',
  });
  const databaseVersions = versions.data === undefined || versions.data.results.length === 0 ? undefined : versions.data.results.map((version) => version.name).join(', ');
  const set = (key: keyof typeof draft) => (value: string) => {
    setDraft((previous) => ({ ...previous, [key]: value }));
    section.clear();
  };
  function submit(event: FormEvent) {
    event.preventDefault();
    const body: Record<string, unknown> = { name: draft.name.trim(), description: draft.description.trim() === '' ? null : draft.description.trim() };
    if (kind.name === 'application' && git !== undefined) {
      body.git_repository = { url: draft.repository.trim(), branch: draft.branch.trim(), root_path: draft.rootPath.trim() === '' ? '/' : draft.rootPath.trim(), provider: git.provider, ...(git.git_token_id ? { git_token_id: git.git_token_id } : {}) };
      body.dockerfile_path = draft.dockerfilePath.trim() === '' ? null : draft.dockerfilePath.trim();
    }
    if (kind.name === 'container') Object.assign(body, { image_name: draft.image.trim(), tag: draft.tag.trim() });
    if (kind.name === 'database') Object.assign(body, { version: draft.version.trim(), accessibility: draft.accessibility });
    if (kind.name === 'helm' && chart !== undefined) {
      const required = requiredOf(kind, service) as { source: { helm_repository: Record<string, unknown> } };
      body.source = { helm_repository: { ...required.source.helm_repository, chart_version: draft.chartVersion.trim() } };
    }
    if (kind.name === 'terraform' && terraformGit !== undefined) {
      body.terraform_files_source = { git_repository: { ...terraformGit, branch: draft.terraformBranch.trim(), root_path: draft.terraformRootPath.trim() === '' ? '/' : draft.terraformRootPath.trim() } };
    }
    void section.save(body);
  }
  return (
    <SettingsCard id="general" title="General">
      <Form className="form" onSubmit={submit}>
        <TextField label="Name" value={draft.name} onChange={set('name')} isRequired maxLength={63} errorMessage={fields.get('name')} description="Letters, digits and dashes; it is part of the service’s address." />
        <TextField label="Description (optional)" value={draft.description} onChange={set('description')} maxLength={2000} errorMessage={fields.get('description')} />
        {kind.name === 'application' && git !== undefined ? (
          <>
            <TextField label="Repository URL" value={draft.repository} onChange={set('repository')} isRequired type="url" errorMessage={fields.get('git_repository/url')} />
            <div className="field-row">
              <TextField label="Branch" value={draft.branch} onChange={set('branch')} isRequired errorMessage={fields.get('git_repository/branch')} />
              <TextField label="Root path" value={draft.rootPath} onChange={set('rootPath')} errorMessage={fields.get('git_repository/root_path')} />
            </div>
            <TextField label="Dockerfile (optional)" value={draft.dockerfilePath} onChange={set('dockerfilePath')} errorMessage={fields.get('dockerfile_path')} />
          </>
        ) : null}
        {kind.name === 'container' ? (
          <div className="field-row">
            <TextField label="Image" value={draft.image} onChange={set('image')} isRequired errorMessage={fields.get('image_name')} />
            <TextField label="Tag" value={draft.tag} onChange={set('tag')} isRequired errorMessage={fields.get('tag')} />
          </div>
        ) : null}
        {kind.name === 'database' ? (
          <>
            <TextField label="Version" value={draft.version} onChange={set('version')} isRequired errorMessage={fields.get('version')} description={databaseVersions === undefined ? undefined : `Versions it accepts: ${databaseVersions} (a database is upgraded, never downgraded).`} />
            <SelectField
              id="database-accessibility"
              label="Reachable from"
              value={draft.accessibility}
              onChange={(value) => (setDraft((previous) => ({ ...previous, accessibility: value })), section.clear())}
              options={[
                { value: 'PRIVATE', label: 'This environment only' },
                { value: 'PUBLIC', label: 'The internet' },
              ]}
              errorMessage={fields.get('accessibility')}
            />
          </>
        ) : null}
        {kind.name === 'helm' && chart !== undefined ? <TextField label="Chart version" value={draft.chartVersion} onChange={set('chartVersion')} isRequired errorMessage={fields.get('source/helm_repository/chart_version')} /> : null}
        {kind.name === 'terraform' && terraformGit !== undefined ? (
          <div className="field-row">
            <TextField label="Branch" value={draft.terraformBranch} onChange={set('terraformBranch')} isRequired errorMessage={fields.get('terraform_files_source/git_repository/branch')} />
            <TextField label="Root path" value={draft.terraformRootPath} onChange={set('terraformRootPath')} errorMessage={fields.get('terraform_files_source/git_repository/root_path')} />
          </div>
        ) : null}
        <SaveFoot error={section.error} fieldCount={fields.size} saved={section.saved} disabled={readOnly} noteId={noteId} />
      </Form>
    </SettingsCard>
  );
}

function ResourcesSection({ context, service, readOnly, noteId }: SectionProps) {
  const instances = context.kind.settings.resources === 'instances';
  // A database's disk: the API takes a larger (or smaller) volume at its edit like cpu and memory.
  const storage = context.kind.name === 'database';
  const [draft, setDraft] = useState({ cpu: text(service.cpu), memory: text(service.memory), min: text(service.min_running_instances), max: text(service.max_running_instances), storage: text(service.storage) });
  const section = useSectionSave(context, service);
  const { fields } = section;
  const set = (key: keyof typeof draft) => (value: string) => {
    setDraft((previous) => ({ ...previous, [key]: value }));
    section.clear();
  };
  function submit(event: FormEvent) {
    event.preventDefault();
    void section.save({
      cpu: integer(draft.cpu),
      memory: integer(draft.memory),
      ...(instances ? { min_running_instances: integer(draft.min), max_running_instances: integer(draft.max) } : {}),
      ...(storage ? { storage: integer(draft.storage) } : {}),
    });
  }
  return (
    <SettingsCard id="resources" title="Resources" intro="What each instance may use. A change applies at the next deployment.">
      <Form className="form" onSubmit={submit}>
        <div className="field-row">
          <TextField label="CPU (millicores)" value={draft.cpu} onChange={set('cpu')} inputMode="numeric" errorMessage={fields.get('cpu')} description="1000 = one core" />
          <TextField label="Memory (MiB)" value={draft.memory} onChange={set('memory')} inputMode="numeric" errorMessage={fields.get('memory')} />
        </div>
        {storage ? <TextField label="Storage (GiB)" value={draft.storage} onChange={set('storage')} inputMode="numeric" errorMessage={fields.get('storage')} /> : null}
        {instances ? (
          <div className="field-row">
            <TextField label="Minimum instances" value={draft.min} onChange={set('min')} inputMode="numeric" errorMessage={fields.get('min_running_instances')} />
            <TextField label="Maximum instances" value={draft.max} onChange={set('max')} inputMode="numeric" errorMessage={fields.get('max_running_instances')} />
          </div>
        ) : null}
        <SaveFoot error={section.error} fieldCount={fields.size} saved={section.saved} disabled={readOnly} noteId={noteId} />
      </Form>
    </SettingsCard>
  );
}

type StoredCron = Record<string, unknown> & { scheduled_at: string; timezone?: string };

/** A cron job's schedule as stored (a lifecycle job has none: its events are chosen at creation). */
function cronOf(service: Stored): StoredCron | undefined {
  return (service.schedule as { cronjob?: StoredCron | null } | undefined)?.cronjob ?? undefined;
}

/** When a cron job runs: its cron expression and time zone; its command is kept as stored. */
function ScheduleSection({ context, service, readOnly, noteId }: SectionProps) {
  const cron = cronOf(service) as StoredCron;
  const [draft, setDraft] = useState({ cron: cron.scheduled_at, timezone: text(cron.timezone) });
  const section = useSectionSave(context, service);
  const { fields } = section;
  const set = (key: keyof typeof draft) => (value: string) => {
    setDraft((previous) => ({ ...previous, [key]: value }));
    section.clear();
  };
  function submit(event: FormEvent) {
    event.preventDefault();
    const timezone = draft.timezone.trim();
    const cronjob: Record<string, unknown> = { ...cron, scheduled_at: draft.cron.trim() };
    if (timezone === '') delete cronjob.timezone;
    else cronjob.timezone = timezone;
    void section.save({ schedule: { cronjob } });
  }
  return (
    <SettingsCard id="schedule" title="Schedule" intro="When the job runs. A change applies at the next deployment.">
      <Form className="form" onSubmit={submit}>
        <div className="field-row">
          <TextField label="Cron expression" value={draft.cron} onChange={set('cron')} isRequired maxLength={255} errorMessage={fields.get('schedule/cronjob/scheduled_at')} description="Minute, hour, day of the month, month, day of the week: 0 3 * * * is every day at 03:00." />
          <TextField label="Time zone" value={draft.timezone} onChange={set('timezone')} maxLength={64} errorMessage={fields.get('schedule/cronjob/timezone')} description="An IANA name such as Europe/Paris; UTC when empty." />
        </div>
        <SaveFoot error={section.error} fieldCount={fields.size} saved={section.saved} disabled={readOnly} noteId={noteId} />
      </Form>
    </SettingsCard>
  );
}

interface PortRow {
  id?: string;
  port: string;
  publiclyAccessible: boolean;
  protocol: 'HTTP' | 'GRPC' | 'TCP' | 'UDP';
}

function PortsSection({ context, service, readOnly, noteId }: SectionProps) {
  const stored = (service.ports ?? []) as { id: string; internal_port: number; publicly_accessible: boolean; protocol: PortRow['protocol']; is_default: boolean }[];
  const [rows, setRows] = useState<PortRow[]>(stored.map((port) => ({ id: port.id, port: String(port.internal_port), publiclyAccessible: port.publicly_accessible, protocol: port.protocol })));
  const section = useSectionSave(context, service);
  const { fields } = section;
  function update(index: number, change: Partial<PortRow>) {
    setRows((previous) => previous.map((row, position) => (position === index ? { ...row, ...change } : row)));
    section.clear();
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    void section.save({
      ports: rows.map((row, index) => ({ ...(row.id === undefined ? {} : { id: row.id }), internal_port: integer(row.port), publicly_accessible: row.publiclyAccessible, protocol: row.protocol, is_default: index === 0 })),
    });
  }
  return (
    <SettingsCard id="ports" title="Ports" intro="The ports the service listens on; a public one gets a URL. The first is the default.">
      <Form className="form" onSubmit={submit}>
        {rows.length === 0 ? <p className="muted">No ports: the service is not reachable.</p> : null}
        {rows.map((row, index) => (
          <fieldset key={index} className="fieldset port-row">
            <legend>Port {index + 1}</legend>
            <div className="field-row">
              <TextField label={`Port number ${index + 1}`} value={row.port} onChange={(value) => update(index, { port: value })} inputMode="numeric" isRequired errorMessage={fields.get(`ports/${index}/internal_port`) ?? fields.get(`ports/${index}`)} />
              <SelectField
                id={`port-${index}-protocol`}
                label={`Protocol ${index + 1}`}
                value={row.protocol}
                onChange={(value) => update(index, { protocol: value })}
                options={[
                  { value: 'HTTP', label: 'HTTP' },
                  { value: 'GRPC', label: 'gRPC' },
                  { value: 'TCP', label: 'TCP' },
                  { value: 'UDP', label: 'UDP' },
                ]}
                errorMessage={fields.get(`ports/${index}/protocol`)}
              />
            </div>
            <CheckboxField id={`port-${index}-public`} label="Reachable from the internet" checked={row.publiclyAccessible} onChange={(checked) => update(index, { publiclyAccessible: checked })} />
            <Button variant="quiet-danger" onPress={() => (setRows((previous) => previous.filter((_, position) => position !== index)), section.clear())} aria-label={`Remove port ${index + 1}`}>
              Remove
            </Button>
          </fieldset>
        ))}
        <ErrorMessage message={fields.get('ports')} />
        <div>
          <Button variant="secondary" onPress={() => (setRows((previous) => [...previous, { port: '', publiclyAccessible: false, protocol: 'HTTP' }]), section.clear())}>
            Add a port
          </Button>
        </div>
        <SaveFoot error={section.error} fieldCount={fields.size} saved={section.saved} disabled={readOnly} noteId={noteId} />
      </Form>
    </SettingsCard>
  );
}

type ProbeKind = 'NONE' | 'TCP' | 'HTTP';
interface ProbeDraft {
  kind: ProbeKind;
  port: string;
  path: string;
  initialDelay: string;
  period: string;
  failureThreshold: string;
}
interface StoredProbe {
  type: { tcp?: { port?: number } | null; http?: { port?: number; path?: string } | null };
  initial_delay_seconds: number;
  period_seconds: number;
  failure_threshold: number;
  timeout_seconds?: number;
  success_threshold?: number;
}

function probeDraft(probe: StoredProbe | null | undefined, fallbackPort: string): ProbeDraft {
  const http = probe?.type.http ?? undefined;
  const tcp = probe?.type.tcp ?? undefined;
  return {
    kind: probe === null || probe === undefined ? 'NONE' : http !== undefined ? 'HTTP' : tcp !== undefined ? 'TCP' : 'NONE',
    port: text(http?.port ?? tcp?.port ?? fallbackPort),
    path: http?.path ?? '/',
    initialDelay: text(probe?.initial_delay_seconds ?? 30),
    period: text(probe?.period_seconds ?? 10),
    failureThreshold: text(probe?.failure_threshold ?? 9),
  };
}

function probeBody(draft: ProbeDraft) {
  if (draft.kind === 'NONE') return null;
  const port = integer(draft.port);
  return {
    type: draft.kind === 'HTTP' ? { http: { path: draft.path.trim() || '/', port } } : { tcp: { port } },
    initial_delay_seconds: integer(draft.initialDelay),
    period_seconds: integer(draft.period),
    failure_threshold: integer(draft.failureThreshold),
  };
}

function HealthChecksSection({ context, service, readOnly, noteId }: SectionProps) {
  const checks = (service.healthchecks ?? {}) as { readiness_probe?: StoredProbe | null; liveness_probe?: StoredProbe | null };
  const firstPort = text((service.ports as { internal_port: number }[] | undefined)?.[0]?.internal_port ?? (service.port as number | undefined));
  const [probes, setProbes] = useState({ readiness_probe: probeDraft(checks.readiness_probe, firstPort), liveness_probe: probeDraft(checks.liveness_probe, firstPort) });
  const section = useSectionSave(context, service);
  const { fields } = section;
  function update(which: keyof typeof probes, change: Partial<ProbeDraft>) {
    setProbes((previous) => ({ ...previous, [which]: { ...previous[which], ...change } }));
    section.clear();
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    void section.save({ healthchecks: { readiness_probe: probeBody(probes.readiness_probe), liveness_probe: probeBody(probes.liveness_probe) } });
  }
  const probeFields = (which: keyof typeof probes, label: string) => {
    const probe = probes[which];
    const at = (field: string) => fields.get(`healthchecks/${which}/${field}`);
    const typeError = [...fields.entries()].find(([field]) => field === `healthchecks/${which}` || field.startsWith(`healthchecks/${which}/type`))?.[1];
    return (
      <fieldset className="fieldset">
        <legend>{label}</legend>
        <SelectField
          id={`${which}-kind`}
          label={`${label}: check`}
          value={probe.kind}
          onChange={(value) => update(which, { kind: value })}
          options={[
            { value: 'TCP', label: 'The port accepts connections (TCP)' },
            { value: 'HTTP', label: 'An HTTP path answers 2xx/3xx' },
            { value: 'NONE', label: 'None' },
          ]}
          errorMessage={typeError}
        />
        {probe.kind === 'NONE' ? null : (
          <>
            <div className="field-row">
              <TextField label={`${label}: port`} value={probe.port} onChange={(value) => update(which, { port: value })} inputMode="numeric" errorMessage={at(`type/${probe.kind.toLowerCase()}/port`)} />
              {probe.kind === 'HTTP' ? <TextField label={`${label}: path`} value={probe.path} onChange={(value) => update(which, { path: value })} errorMessage={at('type/http/path')} /> : null}
            </div>
            <div className="field-row three">
              <TextField label={`${label}: initial delay (s)`} value={probe.initialDelay} onChange={(value) => update(which, { initialDelay: value })} inputMode="numeric" errorMessage={at('initial_delay_seconds')} />
              <TextField label={`${label}: every (s)`} value={probe.period} onChange={(value) => update(which, { period: value })} inputMode="numeric" errorMessage={at('period_seconds')} />
              <TextField label={`${label}: failures allowed`} value={probe.failureThreshold} onChange={(value) => update(which, { failureThreshold: value })} inputMode="numeric" errorMessage={at('failure_threshold')} />
            </div>
          </>
        )}
      </fieldset>
    );
  };
  return (
    <SettingsCard id="health-checks" title="Health checks" intro="Readiness decides when an instance gets traffic; liveness restarts one that stopped answering.">
      <Form className="form" onSubmit={submit}>
        {probeFields('readiness_probe', 'Readiness')}
        {probeFields('liveness_probe', 'Liveness')}
        <SaveFoot error={section.error} fieldCount={fields.size} saved={section.saved} disabled={readOnly} noteId={noteId} />
      </Form>
    </SettingsCard>
  );
}

interface Restriction {
  id: string;
  mode: 'MATCH' | 'EXCLUDE';
  type: 'PATH';
  value: string;
}

/** The paths whose changes in a push deploy the service automatically (MATCH) or do not (EXCLUDE). */
function DeploymentRestrictionsSection({ context, readOnly, noteId }: SectionProps) {
  const path = `${context.base}/deploymentRestriction`;
  const key = ['deployment-restrictions', context.base];
  const list = useQuery({ queryKey: key, queryFn: () => apiRequest<{ results: Restriction[] }>('GET', path) });
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<Restriction['mode']>('MATCH');
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [rowError, setRowError] = useState<{ id: string; message: string } | undefined>();
  const [pending, setPending] = useState(false);
  const [editing, setEditing] = useState<Restriction | undefined>();
  const fields = fieldErrorsOf(error);
  async function add(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      await apiRequest('POST', path, { mode, type: 'PATH', value: value.trim() });
      setValue('');
      await queryClient.invalidateQueries({ queryKey: key });
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }
  async function remove(restriction: Restriction) {
    setRowError(undefined);
    try {
      await apiRequest('DELETE', `${path}/${restriction.id}`);
      await queryClient.invalidateQueries({ queryKey: key });
    } catch (caught) {
      setRowError({ id: restriction.id, message: messageOf(caught) });
    }
  }
  const rows = list.data?.results ?? [];
  return (
    <SettingsCard id="deployment-restrictions" title="Deployment restrictions" intro="A push deploys the service automatically only when it changes a path that matches (and none excluded). Without restrictions, every push does.">
      {list.isPending ? <Spinner label="Loading the restrictions…" /> : null}
      <ErrorMessage message={list.isError ? messageOf(list.error) : undefined} />
      {list.isSuccess && rows.length === 0 ? <p className="muted">No restrictions: every push deploys.</p> : null}
      {rows.length === 0 ? null : (
        <table className="table" aria-label="Deployment restrictions">
          <thead>
            <tr>
              <th scope="col">Mode</th>
              <th scope="col">Path</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((restriction) => (
              <tr key={restriction.id}>
                <td data-label="Mode">{restriction.mode === 'MATCH' ? 'Deploy when changed' : 'Ignore changes'}</td>
                <td data-label="Path">
                  <code>{restriction.value}</code>
                  <ErrorMessage message={rowError?.id === restriction.id ? rowError.message : undefined} />
                </td>
                <td className="actions-cell">
                  <Button variant="secondary" onPress={() => setEditing(restriction)} isDisabled={readOnly} aria-label={`Edit the restriction ${restriction.value}…`} aria-describedby={noteId}>
                    Edit…
                  </Button>
                  <Button variant="quiet-danger" onPress={() => void remove(restriction)} isDisabled={readOnly} aria-label={`Delete the restriction ${restriction.value}`} aria-describedby={noteId}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Form className="form" onSubmit={(event) => void add(event)} aria-label="Add a deployment restriction">
        <div className="field-row">
          <SelectField
            id="restriction-mode"
            label="Mode"
            value={mode}
            onChange={(next) => (setMode(next), setError(undefined))}
            options={[
              { value: 'MATCH', label: 'Deploy when this path changes' },
              { value: 'EXCLUDE', label: 'Ignore changes to this path' },
            ]}
            errorMessage={fields.get('mode')}
          />
          <TextField label="Path" value={value} onChange={(next) => (setValue(next), setError(undefined))} isRequired maxLength={512} placeholder="src/" errorMessage={fields.get('value')} />
        </div>
        <ErrorMessage message={error === undefined || fields.size > 0 ? undefined : summaryOf(error)} />
        <div className="form-actions form-actions-start">
          <Button type="submit" variant="secondary" isDisabled={readOnly} aria-describedby={noteId}>
            Add restriction
          </Button>
        </div>
      </Form>
      {editing === undefined ? null : <EditRestrictionDialog path={path} queryKey={key} restriction={editing} onClose={() => setEditing(undefined)} />}
    </SettingsCard>
  );
}

/** `/<kind>/{id}/network` of applications and containers: whether the ingress keeps each client on one instance. */
function NetworkSection({ context, readOnly, noteId }: SectionProps) {
  const path = `${context.base}/network`;
  const network = useQuery({ queryKey: ['service-network', context.base], queryFn: () => apiRequest<{ sticky_session: boolean }>('GET', path) });
  return (
    <SettingsCard id="network" title="Network" intro="How the ingress routes the clients of its public ports. A change applies at the next deployment.">
      {network.isPending ? <Spinner label="Loading the network settings…" /> : null}
      <ErrorMessage message={network.isError ? messageOf(network.error) : undefined} />
      {network.data === undefined ? null : <NetworkForm context={context} path={path} stored={network.data.sticky_session} readOnly={readOnly} noteId={noteId} />}
    </SettingsCard>
  );
}

function NetworkForm({ context, path, stored, readOnly, noteId }: { context: ServiceContext; path: string; stored: boolean; readOnly: boolean; noteId: string | undefined }) {
  const queryClient = useQueryClient();
  const [sticky, setSticky] = useState(stored);
  const [state, setState] = useState<{ pending: boolean; error: unknown; saved: boolean }>({ pending: false, error: undefined, saved: false });
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (state.pending) return;
    setState({ pending: true, error: undefined, saved: false });
    try {
      await apiRequest('PUT', path, { sticky_session: sticky });
      await queryClient.invalidateQueries({ queryKey: ['service-network', context.base] });
      setState({ pending: false, error: undefined, saved: true });
    } catch (error) {
      setState({ pending: false, error, saved: false });
    }
  }
  return (
    <Form className="form" onSubmit={(event) => void submit(event)}>
      <CheckboxField id="network-sticky" label="Sticky sessions" checked={sticky} onChange={(checked) => (setSticky(checked), setState((previous) => ({ ...previous, error: undefined })))} description="Each client stays on the same instance (a cookie set by the ingress)." />
      <SaveFoot error={state.error} fieldCount={0} saved={state.saved} disabled={readOnly} noteId={noteId} />
    </Form>
  );
}

interface MasterCredentials {
  host: string;
  port: number;
  login: string;
  password: string;
}

/**
 * A database's master credentials, revealed on request only: the API needs the permission to reveal secrets and records
 * every reading in the audit log, so nothing is read before the person asks, and "Hide" forgets the answer.
 */
function DatabaseCredentialsSection({ context }: SectionProps) {
  const [credentials, setCredentials] = useState<MasterCredentials | undefined>();
  const [state, setState] = useState<{ pending: boolean; error: unknown }>({ pending: false, error: undefined });
  async function reveal() {
    if (state.pending) return;
    setState({ pending: true, error: undefined });
    try {
      setCredentials(await apiRequest<MasterCredentials>('GET', `${context.base}/masterCredentials`));
      setState({ pending: false, error: undefined });
    } catch (error) {
      setState({ pending: false, error });
    }
  }
  return (
    <SettingsCard id="credentials" title="Connection" intro="The host, port, login and password the environment’s services receive as built-in variables. Revealing them is recorded in the audit log.">
      {credentials === undefined ? (
        <div className="form-actions form-actions-start">
          <Button variant="secondary" onPress={() => void reveal()}>
            Reveal the credentials
          </Button>
        </div>
      ) : (
        <>
          <dl className="facts">
            <div>
              <dt>Host</dt>
              <dd>
                <code>{credentials.host}</code>
              </dd>
            </div>
            <div>
              <dt>Port</dt>
              <dd>{credentials.port}</dd>
            </div>
            <div>
              <dt>Login</dt>
              <dd>
                <code>{credentials.login}</code>
              </dd>
            </div>
          </dl>
          <div className="secret-value">
            <label htmlFor="database-password">Password</label>
            <div className="secret-value-row">
              <input id="database-password" readOnly value={credentials.password} onFocus={(event) => event.target.select()} spellCheck={false} autoComplete="off" />
              <CopyButton value={credentials.password} label="Copy the password" />
            </div>
          </div>
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => setCredentials(undefined)}>
              Hide
            </Button>
          </div>
        </>
      )}
      <ErrorMessage message={state.error === undefined ? undefined : messageOf(state.error)} />
    </SettingsCard>
  );
}

/**
 * The advanced settings: every key with the server's default beside it; a key whose value differs from its default is
 * an override. The API's edit replaces them all (a key left out goes back to its default), so the form sends the
 * override rows.
 */
function AdvancedSettingsSection({ context, readOnly, noteId, settingsKind }: SectionProps & { settingsKind: string }) {
  const defaults = useQuery({ queryKey: ['advanced-defaults', settingsKind], queryFn: () => apiRequest<Settings>('GET', `/default${settingsKind}AdvancedSettings`) });
  const current = useQuery({ queryKey: ['advanced-settings', context.base], queryFn: () => apiRequest<Settings>('GET', `${context.base}/advancedSettings`) });
  const queryClient = useQueryClient();
  async function save(body: Settings) {
    await apiRequest('PUT', `${context.base}/advancedSettings`, body);
    await queryClient.invalidateQueries({ queryKey: ['advanced-settings', context.base] });
  }
  return (
    <SettingsCard id="advanced-settings" title="Advanced settings" intro="Fine-tuning of the build, the deployment and the network. A key you do not set keeps the default shown.">
      {defaults.isPending || current.isPending ? <Spinner label="Loading the advanced settings…" /> : null}
      <ErrorMessage message={defaults.isError ? messageOf(defaults.error) : current.isError ? messageOf(current.error) : undefined} />
      {defaults.data === undefined || current.data === undefined ? null : <AdvancedSettingsForm key={JSON.stringify(current.data)} save={save} defaults={defaults.data} current={current.data} readOnly={readOnly} noteId={noteId} />}
    </SettingsCard>
  );
}

interface OverrideRow {
  key: string;
  value: string;
}

/** The override rows of an advanced settings map (a service's or a cluster's), saved whole by `save` (the API's PUT, then a fresh read). */
export function AdvancedSettingsForm({ save, defaults, current, readOnly, noteId }: { save: (body: Settings) => Promise<void>; defaults: Settings; current: Settings; readOnly: boolean; noteId: string | undefined }) {
  const keys = Object.keys(defaults).sort();
  const [rows, setRows] = useState<OverrideRow[]>(() => keys.filter((key) => JSON.stringify(current[key]) !== JSON.stringify(defaults[key])).map((key) => ({ key, value: showSetting(current[key]) })));
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const [saved, setSaved] = useState(false);
  const fields = fieldErrorsOf(error);
  function update(index: number, change: Partial<OverrideRow>) {
    setRows((previous) => previous.map((row, position) => (position === index ? { ...row, ...change } : row)));
    setError(undefined);
  }
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    setSaved(false);
    try {
      const body = Object.fromEntries(rows.filter((row) => row.key !== '').map((row) => [row.key, parseSetting(row.value, defaults[row.key])]));
      await save(body);
      setSaved(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }
  const unused = keys.filter((key) => !rows.some((row) => row.key === key));
  return (
    <Form className="form" onSubmit={(event) => void submit(event)}>
      {rows.length === 0 ? <p className="muted">Every key has its default.</p> : null}
      {rows.map((row, index) => {
        const message = fields.get(row.key);
        const valueId = `advanced-${index}-value`;
        return (
          <div key={row.key} className="advanced-row">
            <SelectField id={`advanced-${index}-key`} label={`Key ${index + 1}`} value={row.key} onChange={(key) => update(index, { key, value: showSetting(defaults[key]) })} options={[row.key, ...unused].map((key) => ({ value: key, label: key }))} />
            <div className="field">
              <label htmlFor={valueId}>Value {index + 1}</label>
              <input id={valueId} value={row.value} onChange={(event) => update(index, { value: event.target.value })} autoComplete="off" aria-invalid={message === undefined ? undefined : true} aria-describedby={`${valueId}-default${message === undefined ? '' : ` ${valueId}-error`}`} />
              <span id={`${valueId}-default`} className="field-description">
                Default: <code>{showSetting(defaults[row.key])}</code>
              </span>
              {message === undefined ? null : (
                <span id={`${valueId}-error`} className="field-error">
                  {message}
                </span>
              )}
            </div>
            <Button variant="quiet-danger" onPress={() => (setRows((previous) => previous.filter((_, position) => position !== index)), setError(undefined))} aria-label={`Back to the default: ${row.key}`}>
              Use default
            </Button>
          </div>
        );
      })}
      {unused.length === 0 ? null : (
        <div>
          <Button variant="secondary" onPress={() => (setRows((previous) => [...previous, { key: unused[0] ?? '', value: showSetting(defaults[unused[0] ?? '']) }]), setError(undefined))}>
            Override a key
          </Button>
        </div>
      )}
      <details className="advanced-defaults">
        <summary>Every key and its default ({keys.length})</summary>
        <table className="table" aria-label="Advanced settings and their defaults">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Default</th>
              <th scope="col">Now</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key}>
                <th scope="row" data-label="Key">
                  <code>{key}</code>
                </th>
                <td data-label="Default">
                  <code>{showSetting(defaults[key])}</code>
                </td>
                <td data-label="Now">
                  <code>{showSetting(current[key])}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <ErrorMessage message={error === undefined ? undefined : fields.size > 0 ? `${summaryOf(error)} See the keys marked above.` : summaryOf(error)} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={readOnly} aria-describedby={noteId}>
          Save advanced settings
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </Form>
  );
}
