import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryWithFieldsOf } from '../api/client.ts';
import { kindNamed, type ServiceKind } from '../services/kinds.ts';
import { Breadcrumbs, Button, CheckboxField, ErrorMessage, SelectField, TextField } from '../ui/controls.tsx';
import { KeyValueRows, type KeyValueRow } from '../ui/KeyValueRows.tsx';
import { GitRepositoryPicker, type GitSource } from './GitRepositoryPicker.tsx';
import { TerraformVariablesFromRepository } from './TerraformVariablesFromRepository.tsx';
import { ContainerImageCheck, GitSourceCheck, HelmChartCheck, HelmDefaultValues, TerraformVersionField } from './service/SourceChecks.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/project/$projectId/environment/$environmentId/new/$kind');

/** Everything the seven wizards ask, as the text the fields hold; `bodyOf` turns it into the kind's request. */
interface Draft {
  name: string;
  description: string;
  gitTokenId: string;
  /** The provider of the git account chosen; '' when none (the URL tells). */
  gitProvider: GitSource['gitProvider'];
  repository: string;
  branch: string;
  rootPath: string;
  dockerfilePath: string;
  port: string;
  publiclyAccessible: boolean;
  healthCheck: 'HTTP' | 'TCP' | 'NONE';
  healthPath: string;
  cpu: string;
  memory: string;
  minInstances: string;
  maxInstances: string;
  registryId: string;
  image: string;
  tag: string;
  databaseType: 'POSTGRESQL' | 'MYSQL' | 'MONGODB' | 'REDIS';
  version: string;
  databaseMode: 'CONTAINER' | 'MANAGED';
  accessibility: 'PRIVATE' | 'PUBLIC';
  jobSource: 'GIT' | 'IMAGE';
  schedule: 'CRON' | 'LIFECYCLE';
  cron: string;
  timezone: string;
  command: string;
  onStart: boolean;
  onStop: boolean;
  onDelete: boolean;
  /** Where the chart is: a Helm repository of the organization, or a directory of a git repository. */
  helmSource: 'REPOSITORY' | 'GIT';
  helmRepositoryId: string;
  chartName: string;
  chartVersion: string;
  /** values.yaml content overriding the chart's defaults (one file, `values_override.file.raw`). */
  valuesYaml: string;
  /** `--set key=value` overrides. */
  helmSet: KeyValueRow[];
  engine: 'TERRAFORM' | 'OPEN_TOFU';
  /** An explicit engine version; empty: the files' terraform block decides. */
  terraformVersion: string;
  tfVars: KeyValueRow[];
  /** .tfvars files of the repository, one a line. */
  tfVarFiles: string;
  modelProvider: 'ANTHROPIC' | 'OPENAI' | 'MISTRAL' | 'OLLAMA' | 'OPENAI_COMPATIBLE';
  model: string;
  baseUrl: string;
  apiKeyVariable: string;
  instructions: string;
  agentSchedule: 'CRON' | 'DEPLOY';
}

const INITIAL: Draft = {
  name: '',
  description: '',
  gitTokenId: '',
  gitProvider: '',
  repository: '',
  branch: 'main',
  rootPath: '/',
  dockerfilePath: '',
  port: '8080',
  publiclyAccessible: true,
  healthCheck: 'TCP',
  healthPath: '/',
  cpu: '500',
  memory: '512',
  minInstances: '1',
  maxInstances: '1',
  registryId: '',
  image: '',
  tag: 'latest',
  databaseType: 'POSTGRESQL',
  version: '17',
  databaseMode: 'CONTAINER',
  accessibility: 'PRIVATE',
  jobSource: 'GIT',
  schedule: 'CRON',
  cron: '0 * * * *',
  timezone: 'Etc/UTC',
  command: '',
  onStart: true,
  onStop: false,
  onDelete: false,
  helmSource: 'REPOSITORY',
  helmRepositoryId: '',
  chartName: '',
  chartVersion: '',
  valuesYaml: '',
  helmSet: [],
  engine: 'TERRAFORM',
  terraformVersion: '',
  tfVars: [],
  tfVarFiles: '',
  modelProvider: 'ANTHROPIC',
  model: '',
  baseUrl: '',
  apiKeyVariable: 'ANTHROPIC_API_KEY',
  instructions: '',
  agentSchedule: 'DEPLOY',
};

/** Key/value rows with a key or a value: an added row left blank is dropped rather than sent. */
function filled(rows: readonly KeyValueRow[]): KeyValueRow[] {
  return rows.filter((row) => row.key.trim() !== '' || row.value !== '');
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

const DEFAULT_VERSIONS: Record<Draft['databaseType'], string> = { POSTGRESQL: '17', MYSQL: '8.4', MONGODB: '8.0', REDIS: '7' };

/** A number field's text as the API's integer; anything else goes as written, for the server to name the field. */
function integer(text: string): number | string {
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : text;
}

function providerOf(url: string): 'GITHUB' | 'GITLAB' | 'BITBUCKET' {
  if (/gitlab/i.test(url)) return 'GITLAB';
  if (/bitbucket/i.test(url)) return 'BITBUCKET';
  return 'GITHUB';
}

function words(command: string): string[] {
  return command.trim() === '' ? [] : command.trim().split(/\s+/);
}

function gitRepository(draft: Draft) {
  return {
    url: draft.repository.trim(),
    provider: draft.gitProvider === '' ? providerOf(draft.repository) : draft.gitProvider,
    branch: draft.branch.trim(),
    root_path: draft.rootPath.trim() === '' ? '/' : draft.rootPath.trim(),
    ...(draft.gitTokenId === '' ? {} : { git_token_id: draft.gitTokenId }),
  };
}

function workload(draft: Draft) {
  const port = integer(draft.port);
  const probeType = draft.healthCheck === 'HTTP' ? { http: { path: draft.healthPath.trim() || '/', port } } : { tcp: { port } };
  const probe = { type: probeType };
  return {
    ports: draft.port.trim() === '' ? [] : [{ internal_port: port, publicly_accessible: draft.publiclyAccessible, protocol: 'HTTP', is_default: true }],
    healthchecks: draft.healthCheck === 'NONE' || draft.port.trim() === '' ? {} : { readiness_probe: probe, liveness_probe: probe },
    cpu: integer(draft.cpu),
    memory: integer(draft.memory),
    min_running_instances: integer(draft.minInstances),
    max_running_instances: integer(draft.maxInstances),
  };
}

function helmSourceOf(draft: Draft) {
  return draft.helmSource === 'GIT' ? { git_repository: gitRepository(draft) } : { helm_repository: { repository: draft.helmRepositoryId, chart_name: draft.chartName, chart_version: draft.chartVersion } };
}

/** The creation request of `kind` from the wizard's fields. */
function bodyOf(kind: ServiceKind, draft: Draft): Record<string, unknown> {
  const common = { name: draft.name.trim(), ...(draft.description.trim() === '' ? {} : { description: draft.description.trim() }) };
  switch (kind.name) {
    case 'application':
      return { ...common, git_repository: gitRepository(draft), build_mode: 'DOCKER', ...(draft.dockerfilePath.trim() === '' ? {} : { dockerfile_path: draft.dockerfilePath.trim() }), ...workload(draft) };
    case 'container':
      return { ...common, registry_id: draft.registryId, image_name: draft.image.trim(), tag: draft.tag.trim(), ...workload(draft) };
    case 'database':
      return { ...common, type: draft.databaseType, version: draft.version.trim(), mode: draft.databaseMode, accessibility: draft.accessibility };
    case 'job': {
      const run = { ...(words(draft.command).length === 0 ? {} : { arguments: words(draft.command) }) };
      const source =
        draft.jobSource === 'GIT'
          ? { docker: { git_repository: gitRepository(draft), ...(draft.dockerfilePath.trim() === '' ? {} : { dockerfile_path: draft.dockerfilePath.trim() }) } }
          : { image: { registry_id: draft.registryId, image_name: draft.image.trim(), tag: draft.tag.trim() } };
      const schedule =
        draft.schedule === 'CRON'
          ? { cronjob: { scheduled_at: draft.cron.trim(), timezone: draft.timezone.trim(), ...run } }
          : { lifecycle_type: 'GENERIC', ...(draft.onStart ? { on_start: run } : {}), ...(draft.onStop ? { on_stop: run } : {}), ...(draft.onDelete ? { on_delete: run } : {}) };
      return { ...common, source, schedule, healthchecks: {}, cpu: integer(draft.cpu), memory: integer(draft.memory) };
    }
    case 'helm': {
      const set = filled(draft.helmSet).map((row) => [row.key.trim(), row.value]);
      const values_override = {
        ...(set.length === 0 ? {} : { set }),
        ...(draft.valuesYaml.trim() === '' ? {} : { file: { raw: { values: [{ name: 'values.yaml', content: draft.valuesYaml }] } } }),
      };
      return { ...common, source: helmSourceOf(draft), values_override };
    }
    case 'terraform': {
      const tfVars = filled(draft.tfVars).map((row) => ({ key: row.key.trim(), value: row.value }));
      return {
        ...common,
        terraform_files_source: { git_repository: gitRepository(draft) },
        terraform_variables_source: { tf_vars: tfVars, tf_var_file_paths: lines(draft.tfVarFiles) },
        engine: draft.engine,
        backend: { kubernetes: {} },
        provider_version: draft.terraformVersion === '' ? { read_from_terraform_block: true } : { read_from_terraform_block: false, explicit_version: draft.terraformVersion },
      };
    }
    case 'agenticWorkflow':
      return {
        ...common,
        model: {
          provider: draft.modelProvider,
          model: draft.model.trim(),
          ...(draft.baseUrl.trim() === '' ? {} : { base_url: draft.baseUrl.trim() }),
          ...(draft.apiKeyVariable.trim() === '' ? {} : { api_key_variable: draft.apiKeyVariable.trim() }),
        },
        instructions: draft.instructions,
        ...(draft.agentSchedule === 'CRON' ? { schedule: { scheduled_at: draft.cron.trim(), timezone: draft.timezone.trim() } } : {}),
        cpu: integer(draft.cpu),
        memory: integer(draft.memory),
      };
  }
}

interface Step {
  title: string;
  /** The request fields (paths in the error body) this step asks for: a 400 about one of them goes back to it. */
  fields: readonly string[];
}

const STEPS: Record<ServiceKind['name'], readonly Step[]> = {
  application: [
    { title: 'Source', fields: ['name', 'description', 'git_repository', 'build_mode', 'dockerfile_path'] },
    { title: 'Ports and health check', fields: ['ports', 'healthchecks'] },
    { title: 'Resources', fields: ['cpu', 'memory', 'min_running_instances', 'max_running_instances'] },
    { title: 'Review', fields: [] },
  ],
  container: [
    { title: 'Image', fields: ['name', 'description', 'registry_id', 'image_name', 'tag'] },
    { title: 'Ports and health check', fields: ['ports', 'healthchecks'] },
    { title: 'Resources', fields: ['cpu', 'memory', 'min_running_instances', 'max_running_instances'] },
    { title: 'Review', fields: [] },
  ],
  database: [
    { title: 'Database', fields: ['name', 'description', 'type', 'version', 'mode', 'accessibility'] },
    { title: 'Review', fields: [] },
  ],
  job: [
    { title: 'Source', fields: ['name', 'description', 'source'] },
    { title: 'Schedule', fields: ['schedule'] },
    { title: 'Resources', fields: ['cpu', 'memory'] },
    { title: 'Review', fields: [] },
  ],
  helm: [
    { title: 'Chart', fields: ['name', 'description', 'source'] },
    { title: 'Values', fields: ['values_override', 'arguments'] },
    { title: 'Review', fields: [] },
  ],
  terraform: [
    { title: 'Source', fields: ['name', 'description', 'terraform_files_source', 'engine', 'backend', 'provider_version'] },
    { title: 'Variables', fields: ['terraform_variables_source'] },
    { title: 'Review', fields: [] },
  ],
  agenticWorkflow: [
    { title: 'Model and instructions', fields: ['name', 'description', 'model', 'instructions'] },
    { title: 'Schedule and resources', fields: ['schedule', 'cpu', 'memory'] },
    { title: 'Review', fields: [] },
  ],
};

/** The step holding the first field the server named, if any of them. */
function stepOfError(steps: readonly Step[], fields: Map<string, string>): number | undefined {
  for (const field of fields.keys()) {
    const index = steps.findIndex((step) => step.fields.some((prefix) => field === prefix || field.startsWith(`${prefix}/`)));
    if (index >= 0) return index;
  }
  return undefined;
}

/** One wizard per service kind: a few steps, then a review; the server's refusals shown at their fields. */
export function NewServicePage() {
  const { organizationId, projectId, environmentId, kind: kindName } = route.useParams();
  const kind = kindNamed(kindName);
  const environment = api.useQuery('get', '/environment/{environmentId}', { params: { path: { environmentId } } });
  const project = api.useQuery('get', '/project/{projectId}', { params: { path: { projectId } } });
  useEffect(() => {
    document.title = `New ${kind?.label.toLowerCase() ?? 'service'} · Slipway`;
  }, [kind]);
  if (kind === undefined) {
    return (
      <main className="page">
        <h1>New service</h1>
        <ErrorMessage message={`There is no service kind "${kindName}". The console creates applications, containers, databases, jobs, Helm charts, Terraform services and agentic workflows.`} />
      </main>
    );
  }
  return (
    <main className="page narrow-wizard">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId }} activeOptions={{ exact: true }}>
            {project.data?.name ?? 'Project'}
          </Link>
        </li>
        <li>
          <Link to="/organization/$organizationId/project/$projectId/environment/$environmentId" params={{ organizationId, projectId, environmentId }} activeOptions={{ exact: true }}>
            {environment.data?.name ?? 'Environment'}
          </Link>
        </li>
        <li aria-current="page">New {kind.label.toLowerCase()}</li>
      </Breadcrumbs>
      <Wizard key={kind.name} kind={kind} organizationId={organizationId} projectId={projectId} environmentId={environmentId} />
    </main>
  );
}

function Wizard({ kind, organizationId, projectId, environmentId }: { kind: ServiceKind; organizationId: string; projectId: string; environmentId: string }) {
  const steps = STEPS[kind.name];
  const [step, setStep] = useState(0);
  const [draft, setDraft] = useState<Draft>(INITIAL);
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const organizationPath = { params: { path: { organizationId } } };
  const needsGit = kind.name === 'application' || kind.name === 'terraform' || (kind.name === 'job' && draft.jobSource === 'GIT') || (kind.name === 'helm' && draft.helmSource === 'GIT');
  const needsRegistry = kind.name === 'container' || (kind.name === 'job' && draft.jobSource === 'IMAGE');
  const gitTokens = api.useQuery('get', '/organization/{organizationId}/gitToken', organizationPath, { enabled: needsGit });
  const registries = api.useQuery('get', '/organization/{organizationId}/containerRegistry', organizationPath, { enabled: needsRegistry });
  const helmRepositories = api.useQuery('get', '/organization/{organizationId}/helmRepository', organizationPath, { enabled: kind.name === 'helm' });
  const charts = api.useQuery(
    'get',
    '/organization/{organizationId}/helmRepository/{helmRepositoryId}/charts',
    { params: { path: { organizationId, helmRepositoryId: draft.helmRepositoryId } } },
    { enabled: kind.name === 'helm' && draft.helmRepositoryId !== '' },
  );
  const fields = fieldErrorsOf(error);
  // An edit clears the server's field messages: a field marked invalid would keep the form from being sent again.
  const set = <Key extends keyof Draft>(key: Key) => (value: Draft[Key]) => {
    setDraft((previous) => ({ ...previous, [key]: value }));
    setError(undefined);
  };
  const update = (next: Partial<Draft>) => {
    setDraft((previous) => ({ ...previous, ...next }));
    setError(undefined);
  };
  const last = step === steps.length - 1;

  useEffect(() => {
    const first = registries.data?.results[0]?.id;
    if (needsRegistry && draft.registryId === '' && first !== undefined) setDraft((previous) => ({ ...previous, registryId: first }));
  }, [needsRegistry, draft.registryId, registries.data]);

  // The first Helm repository, its first chart and that chart's newest version are chosen until the person picks.
  useEffect(() => {
    const first = helmRepositories.data?.results[0]?.id;
    if (draft.helmRepositoryId === '' && first !== undefined) setDraft((previous) => ({ ...previous, helmRepositoryId: first }));
  }, [draft.helmRepositoryId, helmRepositories.data]);
  useEffect(() => {
    const list = charts.data?.results ?? [];
    const chart = list.find((candidate) => candidate.chart_name === draft.chartName) ?? list[0];
    if (chart === undefined) return;
    if (draft.chartName !== chart.chart_name || !chart.versions.includes(draft.chartVersion)) {
      setDraft((previous) => ({ ...previous, chartName: chart.chart_name, chartVersion: chart.versions.includes(previous.chartVersion) ? previous.chartVersion : (chart.versions[0] ?? '') }));
    }
  }, [charts.data, draft.chartName, draft.chartVersion]);

  function goTo(index: number) {
    setStep(index);
    // The new step's heading takes the focus, so a screen reader hears where it is and Tab starts from there.
    requestAnimationFrame(() => heading.current?.focus());
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!last) return goTo(step + 1);
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      const created = await apiRequest<{ id: string }>('POST', `/environment/${environmentId}/${kind.name}`, bodyOf(kind, draft));
      await queryClient.invalidateQueries({ queryKey: ['environment-services', environmentId] });
      await navigate({
        to: '/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId',
        params: { organizationId, projectId, environmentId, kind: kind.name, serviceId: created.id },
      });
    } catch (caught) {
      setError(caught);
      const back = stepOfError(steps, fieldErrorsOf(caught));
      if (back !== undefined && back !== step) goTo(back);
    } finally {
      setPending(false);
    }
  }

  return (
    <>
      <div className="page-heading">
        <p className="eyebrow">New service</p>
        <h1>New {kind.label.toLowerCase()}</h1>
        <p className="muted">{kind.description}</p>
      </div>
      <ol className="steps" aria-label="Steps">
        {steps.map((candidate, index) => (
          <li key={candidate.title} aria-current={index === step ? 'step' : undefined} className={index < step ? 'done' : undefined}>
            {index < step ? (
              <button type="button" className="step-link" onClick={() => goTo(index)}>
                <span className="step-number">{index + 1}</span> <span className="step-title">{candidate.title}</span>
              </button>
            ) : (
              <span>
                <span className="step-number">{index + 1}</span> {candidate.title}
              </span>
            )}
          </li>
        ))}
      </ol>
      <Form className="card form wizard" onSubmit={(event) => void submit(event)}>
        <h2 ref={heading} tabIndex={-1} className="wizard-step-title">
          {steps[step]?.title}
        </h2>
        {steps[step]?.title === 'Review' ? (
          <Review kind={kind} draft={draft} gitTokenName={gitTokens.data?.results.find((token) => token.id === draft.gitTokenId)?.name} registryName={registries.data?.results.find((registry) => registry.id === draft.registryId)?.name} />
        ) : (
          <StepFields
            kind={kind}
            organizationId={organizationId}
            environmentId={environmentId}
            title={steps[step]?.title ?? ''}
            draft={draft}
            set={set}
            update={update}
            fields={fields}
            registries={registries.data?.results ?? []}
            registriesLoaded={registries.isSuccess}
            helm={{ repositories: helmRepositories.data?.results ?? [], repositoriesLoaded: helmRepositories.isSuccess, charts: charts.data?.results ?? [], chartsPending: charts.isFetching, chartsError: charts.isError ? messageOf(charts.error) : undefined }}
          />
        )}
        <ErrorMessage message={error === undefined ? undefined : summaryWithFieldsOf(error, fields.size)} />
        <div className="form-actions">
          {step === 0 ? (
            <Link className="button button-secondary" to="/organization/$organizationId/project/$projectId/environment/$environmentId" params={{ organizationId, projectId, environmentId }}>
              Cancel
            </Link>
          ) : (
            <Button variant="secondary" onPress={() => goTo(step - 1)}>
              Back
            </Button>
          )}
          <Button type="submit">{last ? `Create ${kind.label.toLowerCase()}` : 'Next'}</Button>
        </div>
      </Form>
    </>
  );
}

function StepFields(props: {
  kind: ServiceKind;
  organizationId: string;
  environmentId: string;
  title: string;
  draft: Draft;
  set: <Key extends keyof Draft>(key: Key) => (value: Draft[Key]) => void;
  update: (next: Partial<Draft>) => void;
  fields: Map<string, string>;
  registries: { id: string; name: string; url?: string }[];
  registriesLoaded: boolean;
  helm: HelmChoices;
}) {
  const { kind, title, draft, set, fields } = props;
  const nameField = <TextField label="Name" value={draft.name} onChange={set('name')} isRequired autoFocus maxLength={63} errorMessage={fields.get('name')} description="Letters, digits and dashes; it becomes part of the service’s address." />;
  const descriptionField = <TextField label="Description (optional)" value={draft.description} onChange={set('description')} maxLength={1000} errorMessage={fields.get('description')} />;
  const git = (prefix: string) => (
    <GitRepositoryPicker
      organizationId={props.organizationId}
      source={draft}
      onChange={props.update}
      errors={{ gitTokenId: fields.get(`${prefix}/git_token_id`), url: fields.get(`${prefix}/url`), branch: fields.get(`${prefix}/branch`), rootPath: fields.get(`${prefix}/root_path`) }}
    />
  );
  const registry = (registryPath: string, imagePath: string, tagPath: string) => (
    <>
      {props.registriesLoaded && props.registries.length === 0 ? (
        <p className="notice">This organization has no container registry yet; add one with the API or the CLI, then come back.</p>
      ) : (
        <SelectField id="registry" label="Registry" value={draft.registryId} onChange={set('registryId')} options={props.registries.map((entry) => ({ value: entry.id, label: `${entry.name}${entry.url === undefined ? '' : ` (${entry.url})`}` }))} errorMessage={fields.get(registryPath)} />
      )}
      <div className="field-row">
        <TextField label="Image" value={draft.image} onChange={set('image')} isRequired placeholder="library/nginx" errorMessage={fields.get(imagePath)} />
        <TextField label="Tag" value={draft.tag} onChange={set('tag')} isRequired errorMessage={fields.get(tagPath)} />
      </div>
    </>
  );
  const resources = (
    <>
      <div className="field-row">
        <TextField label="CPU (millicores)" value={draft.cpu} onChange={set('cpu')} inputMode="numeric" errorMessage={fields.get('cpu')} description="1000 = one core" />
        <TextField label="Memory (MiB)" value={draft.memory} onChange={set('memory')} inputMode="numeric" errorMessage={fields.get('memory')} />
      </div>
      {kind.name !== 'application' && kind.name !== 'container' ? null : (
        <div className="field-row">
          <TextField label="Minimum instances" value={draft.minInstances} onChange={set('minInstances')} inputMode="numeric" errorMessage={fields.get('min_running_instances')} />
          <TextField label="Maximum instances" value={draft.maxInstances} onChange={set('maxInstances')} inputMode="numeric" errorMessage={fields.get('max_running_instances')} />
        </div>
      )}
    </>
  );

  if (title === 'Resources') return resources;
  if (title === 'Chart') {
    const gitChart = (
      <>
        {git('source/git_repository')}
        <HelmChartCheck environmentId={props.environmentId} source={gitRepository(draft)} />
      </>
    );
    return <HelmChartFields draft={draft} set={set} fields={fields} choices={props.helm} nameField={nameField} descriptionField={descriptionField} gitChart={gitChart} />;
  }
  if (title === 'Values') {
    return (
      <>
        <HelmDefaultValues environmentId={props.environmentId} source={helmSourceOf(draft)} current={draft.valuesYaml} onLoaded={set('valuesYaml')} />
        <div className="field">
          <label htmlFor="helm-values">Values override (YAML, optional)</label>
          <textarea id="helm-values" className="code-input" rows={10} value={draft.valuesYaml} onChange={(event) => set('valuesYaml')(event.target.value)} spellCheck={false} aria-describedby="helm-values-description" aria-invalid={fields.get('values_override/file/raw/values/0/content') === undefined ? undefined : true} />
          <span id="helm-values-description" className="field-description">
            Merged over the chart’s own values.yaml, as <code>helm install -f</code> would.
          </span>
          {fields.get('values_override/file/raw/values/0/content') === undefined ? null : <span className="field-error">{fields.get('values_override/file/raw/values/0/content')}</span>}
        </div>
        <KeyValueRows id="helm-set" legend="Values set one by one (--set)" rows={draft.helmSet} onChange={set('helmSet')} fields={fields} field="values_override/set" valueMaxLength={16384} />
      </>
    );
  }
  if (title === 'Variables') {
    return (
      <>
        <KeyValueRows id="tf-vars" legend="Terraform variables (-var)" rows={draft.tfVars} onChange={set('tfVars')} fields={fields} field="terraform_variables_source/tf_vars" valueMaxLength={16384} />
        <div className="field">
          <label htmlFor="tf-var-files">Variable files (optional)</label>
          <textarea id="tf-var-files" className="code-input" rows={3} value={draft.tfVarFiles} onChange={(event) => set('tfVarFiles')(event.target.value)} spellCheck={false} aria-describedby="tf-var-files-description" />
          <span id="tf-var-files-description" className="field-description">
            .tfvars files of the repository, one a line, relative to the root path.
          </span>
          {[...fields.entries()].filter(([field]) => field.startsWith('terraform_variables_source/tf_var_file_paths')).map(([field, message]) => (
            <span key={field} className="field-error">
              {message}
            </span>
          ))}
        </div>
        <TerraformVariablesFromRepository
          organizationId={props.organizationId}
          repository={gitRepository(draft)}
          rows={draft.tfVars}
          files={lines(draft.tfVarFiles)}
          onAddVariable={(row) => set('tfVars')([...filled(draft.tfVars), row])}
          onUseFile={(path) => set('tfVarFiles')([...lines(draft.tfVarFiles), path].join('\n'))}
        />
      </>
    );
  }
  if (title === 'Schedule and resources') {
    return (
      <>
        <SelectField
          id="agent-schedule"
          label="Runs"
          value={draft.agentSchedule}
          onChange={set('agentSchedule')}
          options={[
            { value: 'DEPLOY', label: 'When deployed' },
            { value: 'CRON', label: 'On a schedule (cron)' },
          ]}
        />
        {draft.agentSchedule === 'CRON' ? (
          <div className="field-row">
            <TextField label="Schedule" value={draft.cron} onChange={set('cron')} isRequired errorMessage={fields.get('schedule/scheduled_at')} description="Cron syntax: minute hour day month weekday." />
            <TextField label="Time zone" value={draft.timezone} onChange={set('timezone')} errorMessage={fields.get('schedule/timezone')} />
          </div>
        ) : null}
        {resources}
      </>
    );
  }
  if (title === 'Ports and health check') {
    const probeError = [...fields.entries()].find(([field]) => field.startsWith('healthchecks'))?.[1];
    return (
      <>
        <TextField label="Port" value={draft.port} onChange={set('port')} inputMode="numeric" errorMessage={fields.get('ports/0/internal_port') ?? fields.get('ports')} description="The port the service listens on (it reads PORT too). Empty: no port." />
        <CheckboxField id="public-port" label="Reachable from the internet (gets a URL)" checked={draft.publiclyAccessible} onChange={set('publiclyAccessible')} />
        <SelectField
          id="health-check"
          label="Health check"
          value={draft.healthCheck}
          onChange={set('healthCheck')}
          options={[
            { value: 'TCP', label: 'The port accepts connections (TCP)' },
            { value: 'HTTP', label: 'An HTTP path answers 2xx/3xx' },
            { value: 'NONE', label: 'None' },
          ]}
          errorMessage={probeError}
        />
        {draft.healthCheck === 'HTTP' ? <TextField label="Health check path" value={draft.healthPath} onChange={set('healthPath')} errorMessage={fields.get('healthchecks/readiness_probe/type/http/path')} /> : null}
      </>
    );
  }
  if (title === 'Schedule') {
    return (
      <>
        <SelectField
          id="job-schedule"
          label="Runs"
          value={draft.schedule}
          onChange={set('schedule')}
          options={[
            { value: 'CRON', label: 'On a schedule (cron)' },
            { value: 'LIFECYCLE', label: 'At the environment’s lifecycle events' },
          ]}
        />
        {draft.schedule === 'CRON' ? (
          <div className="field-row">
            <TextField label="Schedule" value={draft.cron} onChange={set('cron')} isRequired errorMessage={fields.get('schedule/cronjob/scheduled_at')} description="Cron syntax: minute hour day month weekday." />
            <TextField label="Time zone" value={draft.timezone} onChange={set('timezone')} errorMessage={fields.get('schedule/cronjob/timezone')} />
          </div>
        ) : (
          <fieldset className="fieldset">
            <legend>Run when the environment</legend>
            <CheckboxField id="on-start" label="starts (deploy)" checked={draft.onStart} onChange={set('onStart')} />
            <CheckboxField id="on-stop" label="stops" checked={draft.onStop} onChange={set('onStop')} />
            <CheckboxField id="on-delete" label="is deleted" checked={draft.onDelete} onChange={set('onDelete')} />
            {fields.get('schedule') === undefined ? null : <span className="field-error">{fields.get('schedule')}</span>}
          </fieldset>
        )}
        <TextField label="Command (optional)" value={draft.command} onChange={set('command')} description="The arguments of the program it runs (its entrypoint), separated by spaces. Empty: as built." errorMessage={fields.get('schedule/cronjob/arguments') ?? fields.get('schedule/on_start/arguments')} />
      </>
    );
  }
  // The first step.
  switch (kind.name) {
    case 'application':
      return (
        <>
          {nameField}
          {git('git_repository')}
          <TextField label="Dockerfile (optional)" value={draft.dockerfilePath} onChange={set('dockerfilePath')} errorMessage={fields.get('dockerfile_path')} description="Without one, Slipway finds how to build and start the code." />
          <GitSourceCheck environmentId={props.environmentId} source={gitRepository(draft)} dockerfilePath={draft.dockerfilePath} />
          {descriptionField}
        </>
      );
    case 'container':
      return (
        <>
          {nameField}
          {registry('registry_id', 'image_name', 'tag')}
          <ContainerImageCheck environmentId={props.environmentId} registryId={draft.registryId} image={draft.image} tag={draft.tag} />
          {descriptionField}
        </>
      );
    case 'database':
      return (
        <>
          {nameField}
          <div className="field-row">
            <SelectField
              id="database-type"
              label="Type"
              value={draft.databaseType}
              onChange={(value) => {
                set('databaseType')(value);
                set('version')(DEFAULT_VERSIONS[value]);
              }}
              options={[
                { value: 'POSTGRESQL', label: 'PostgreSQL' },
                { value: 'MYSQL', label: 'MySQL' },
                { value: 'MONGODB', label: 'MongoDB' },
                { value: 'REDIS', label: 'Redis' },
              ]}
              errorMessage={fields.get('type')}
            />
            <TextField label="Version" value={draft.version} onChange={set('version')} isRequired errorMessage={fields.get('version')} />
          </div>
          <SelectField
            id="database-mode"
            label="Mode"
            value={draft.databaseMode}
            onChange={set('databaseMode')}
            options={[
              { value: 'CONTAINER', label: 'Container: run by Slipway on the cluster' },
              { value: 'MANAGED', label: 'Managed: the cloud provider’s service' },
            ]}
            errorMessage={fields.get('mode') ?? fields.get('instance_type')}
          />
          <SelectField
            id="database-accessibility"
            label="Reachable from"
            value={draft.accessibility}
            onChange={set('accessibility')}
            options={[
              { value: 'PRIVATE', label: 'This environment’s services only' },
              { value: 'PUBLIC', label: 'The internet' },
            ]}
            errorMessage={fields.get('accessibility')}
          />
          {descriptionField}
        </>
      );
    case 'job':
      return (
        <>
          {nameField}
          <SelectField
            id="job-source"
            label="Source"
            value={draft.jobSource}
            onChange={set('jobSource')}
            options={[
              { value: 'GIT', label: 'A git repository' },
              { value: 'IMAGE', label: 'An image from a registry' },
            ]}
          />
          {draft.jobSource === 'GIT' ? git('source/docker/git_repository') : registry('source/image/registry_id', 'source/image/image_name', 'source/image/tag')}
          {descriptionField}
        </>
      );
    case 'terraform':
      return (
        <>
          {nameField}
          {git('terraform_files_source/git_repository')}
          <SelectField
            id="terraform-engine"
            label="Engine"
            value={draft.engine}
            onChange={set('engine')}
            options={[
              { value: 'TERRAFORM', label: 'Terraform' },
              { value: 'OPEN_TOFU', label: 'OpenTofu' },
            ]}
            errorMessage={fields.get('engine')}
            description="The state is kept in the cluster."
          />
          <TerraformVersionField engine={draft.engine} value={draft.terraformVersion} onChange={set('terraformVersion')} errorMessage={fields.get('provider_version/explicit_version')} />
          {descriptionField}
        </>
      );
    case 'agenticWorkflow':
      return (
        <>
          {nameField}
          <div className="field-row">
            <SelectField
              id="agent-provider"
              label="Model provider"
              value={draft.modelProvider}
              onChange={(value) => {
                set('modelProvider')(value);
                set('apiKeyVariable')(value === 'OLLAMA' ? '' : `${value === 'OPENAI_COMPATIBLE' ? 'OPENAI' : value}_API_KEY`);
              }}
              options={[
                { value: 'ANTHROPIC', label: 'Anthropic' },
                { value: 'OPENAI', label: 'OpenAI' },
                { value: 'MISTRAL', label: 'Mistral' },
                { value: 'OLLAMA', label: 'Ollama' },
                { value: 'OPENAI_COMPATIBLE', label: 'OpenAI-compatible' },
              ]}
              errorMessage={fields.get('model/provider')}
            />
            <TextField label="Model" value={draft.model} onChange={set('model')} isRequired errorMessage={fields.get('model/model')} />
          </div>
          {draft.modelProvider === 'OLLAMA' || draft.modelProvider === 'OPENAI_COMPATIBLE' ? (
            <TextField label="Base URL" value={draft.baseUrl} onChange={set('baseUrl')} isRequired type="url" errorMessage={fields.get('model/base_url')} />
          ) : null}
          {draft.modelProvider === 'OLLAMA' ? null : (
            <TextField label="API key secret" value={draft.apiKeyVariable} onChange={set('apiKeyVariable')} isRequired errorMessage={fields.get('model/api_key_variable')} description="The name of the workflow’s secret holding the key (add it in its Variables tab); the key never goes in the settings." />
          )}
          <div className="field">
            <label htmlFor="agent-instructions">Instructions</label>
            <textarea id="agent-instructions" className="code-input" rows={8} value={draft.instructions} onChange={(event) => set('instructions')(event.target.value)} required aria-invalid={fields.get('instructions') === undefined ? undefined : true} aria-describedby={fields.get('instructions') === undefined ? undefined : 'agent-instructions-error'} />
            {fields.get('instructions') === undefined ? null : (
              <span id="agent-instructions-error" className="field-error">
                {fields.get('instructions')}
              </span>
            )}
          </div>
          {descriptionField}
        </>
      );
    case 'helm':
      return null;
  }
}

interface HelmChoices {
  repositories: { id: string; name: string; url?: string }[];
  repositoriesLoaded: boolean;
  charts: { chart_name: string; versions: string[] }[];
  chartsPending: boolean;
  chartsError: string | undefined;
}

/** A Helm chart's source: a repository of the organization, one of its charts (read from its index), a version. */
function HelmChartFields(props: { draft: Draft; set: <Key extends keyof Draft>(key: Key) => (value: Draft[Key]) => void; fields: Map<string, string>; choices: HelmChoices; nameField: ReactNode; descriptionField: ReactNode; gitChart: ReactNode }) {
  const { draft, set, fields, choices } = props;
  const chart = choices.charts.find((candidate) => candidate.chart_name === draft.chartName);
  const sourceField = (
    <SelectField
      id="helm-source"
      label="Source"
      value={draft.helmSource}
      onChange={set('helmSource')}
      options={[
        { value: 'REPOSITORY', label: 'A Helm repository' },
        { value: 'GIT', label: 'A git repository' },
      ]}
    />
  );
  if (draft.helmSource === 'GIT') {
    return (
      <>
        {props.nameField}
        {sourceField}
        {props.gitChart}
        {props.descriptionField}
      </>
    );
  }
  return (
    <>
      {props.nameField}
      {sourceField}
      {choices.repositoriesLoaded && choices.repositories.length === 0 ? (
        <p className="notice">This organization has no Helm repository yet; add one in the organization settings (Helm repositories), then come back.</p>
      ) : (
        <SelectField
          id="helm-repository"
          label="Helm repository"
          value={draft.helmRepositoryId}
          onChange={(value) => {
            set('helmRepositoryId')(value);
            set('chartName')('');
            set('chartVersion')('');
          }}
          options={choices.repositories.map((entry) => ({ value: entry.id, label: `${entry.name}${entry.url === undefined ? '' : ` (${entry.url})`}` }))}
          errorMessage={fields.get('source/helm_repository/repository') ?? fields.get('source')}
        />
      )}
      {choices.chartsPending && choices.charts.length === 0 ? <p className="muted">Reading the repository’s charts…</p> : null}
      <ErrorMessage message={choices.chartsError} />
      <div className="field-row">
        <SelectField
          id="helm-chart"
          label="Chart"
          value={draft.chartName}
          onChange={(value) => {
            set('chartName')(value);
            set('chartVersion')('');
          }}
          options={choices.charts.map((entry) => ({ value: entry.chart_name, label: entry.chart_name }))}
          errorMessage={fields.get('source/helm_repository/chart_name')}
        />
        <SelectField id="helm-version" label="Version" value={draft.chartVersion} onChange={set('chartVersion')} options={(chart?.versions ?? []).map((version) => ({ value: version, label: version }))} errorMessage={fields.get('source/helm_repository/chart_version')} />
      </div>
      {props.descriptionField}
    </>
  );
}

function Review({ kind, draft, gitTokenName, registryName }: { kind: ServiceKind; draft: Draft; gitTokenName: string | undefined; registryName: string | undefined }) {
  const rows: [string, ReactNode][] = [['Name', draft.name || '—']];
  if (kind.name === 'application' || (kind.name === 'job' && draft.jobSource === 'GIT')) {
    rows.push(['Repository', draft.repository || '—'], ['Branch', draft.branch], ['Root path', draft.rootPath || '/'], ['Git token', gitTokenName ?? 'none']);
  }
  if (kind.name === 'container' || (kind.name === 'job' && draft.jobSource === 'IMAGE')) rows.push(['Image', `${registryName ?? '?'} / ${draft.image}:${draft.tag}`]);
  if (kind.name === 'application' || kind.name === 'container') {
    rows.push(
      ['Port', draft.port === '' ? 'none' : `${draft.port}${draft.publiclyAccessible ? ', public' : ', private'}`],
      ['Health check', draft.healthCheck === 'HTTP' ? `HTTP ${draft.healthPath}` : draft.healthCheck === 'TCP' ? 'TCP' : 'none'],
      ['Instances', `${draft.minInstances}–${draft.maxInstances}`],
    );
  }
  if (kind.name === 'terraform') {
    rows.push(['Repository', draft.repository || '—'], ['Branch', draft.branch], ['Root path', draft.rootPath || '/'], ['Git token', gitTokenName ?? 'none'], ['Engine', `${draft.engine === 'OPEN_TOFU' ? 'OpenTofu' : 'Terraform'} ${draft.terraformVersion || '(as the files require)'}`]);
    rows.push(['Variables', filled(draft.tfVars).map((row) => row.key).join(', ') || 'none'], ['Variable files', lines(draft.tfVarFiles).join(', ') || 'none']);
  }
  if (kind.name === 'helm') {
    rows.push(['Chart', draft.helmSource === 'GIT' ? `${draft.repository || '—'} (${draft.branch}, ${draft.rootPath || '/'})` : `${draft.chartName || '—'} ${draft.chartVersion}`], ['Values override', draft.valuesYaml.trim() === '' ? 'none' : `${lines(draft.valuesYaml).length} lines of YAML`], ['Values set', filled(draft.helmSet).map((row) => row.key).join(', ') || 'none']);
  }
  if (kind.name === 'agenticWorkflow') rows.push(['Model', `${draft.modelProvider} ${draft.model || '—'}`], ['Runs', draft.agentSchedule === 'CRON' ? `${draft.cron} (${draft.timezone})` : 'when deployed']);
  if (kind.name === 'application' || kind.name === 'container' || kind.name === 'job' || kind.name === 'agenticWorkflow') rows.push(['Resources', `${draft.cpu} millicores, ${draft.memory} MiB`]);
  if (kind.name === 'database') rows.push(['Database', `${draft.databaseType} ${draft.version}`], ['Mode', draft.databaseMode], ['Reachable from', draft.accessibility === 'PUBLIC' ? 'the internet' : 'this environment']);
  if (kind.name === 'job') {
    const events = [draft.onStart ? 'start' : '', draft.onStop ? 'stop' : '', draft.onDelete ? 'delete' : ''].filter((event) => event !== '').join(', ');
    rows.push(['Runs', draft.schedule === 'CRON' ? `${draft.cron} (${draft.timezone})` : `at ${events || 'no event'}`], ['Command', draft.command || 'the image’s own']);
  }
  return (
    <dl className="facts">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
