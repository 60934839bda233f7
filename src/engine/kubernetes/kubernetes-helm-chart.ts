import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { SpecHelmChart } from '../../protocol/agent-protocol.ts';
import { serviceLabels, type ServiceIdentity } from './kubernetes-names.ts';
import type { KubeObject } from './kubernetes-workload.ts';

/**
 * The chart half of the HELM kind (kubernetes-helm.ts runs the deployment): the real `helm template` run in a
 * private home of its own (its cache, config and data in a temporary directory removed after, no kubeconfig: a
 * template needs no cluster), then what it rendered parsed, checked against the service's rules and labelled as
 * Slipway labels every object it applies.
 */

export const HELM_MISSING_MESSAGE = 'no helm binary on this agent: install helm (version 3 or 4) on its PATH or set SLIPWAY_HELM_BINARY to its path';

/** The agent's helm (--helm-binary, SLIPWAY_HELM_BINARY), else `helm` on the PATH. */
export function helmBinaryOf(configured: string | undefined): string {
  return configured ?? 'helm';
}

export interface ValuesOverride {
  set: Array<[string, string]>;
  set_string: Array<[string, string]>;
  set_json: Array<[string, string]>;
  files: Array<{ name: string; content: string }>;
}

/** Where the chart is: a chart of a Helm repository (HTTPS or OCI), or a directory on this machine (a git checkout). */
export type ChartLocation = { kind: 'repository'; chart: SpecHelmChart } | { kind: 'directory'; path: string };

export interface HelmTemplateRun {
  binary: string;
  release: string;
  namespace: string;
  chart: ChartLocation;
  values: ValuesOverride;
  arguments: readonly string[];
  /** The server's version (`v1.29.4`) and the API versions it serves, for charts that look at `.Capabilities`. */
  kubeVersion: string | undefined;
  apiVersions: readonly string[];
  signal?: AbortSignal | undefined;
}

interface HelmResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

class HelmMissing extends Error {}

function runHelm(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: string | undefined, signal: AbortSignal | undefined): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env, stdio: ['pipe', 'pipe', 'pipe'], signal });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? new HelmMissing(HELM_MISSING_MESSAGE) : error));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }));
    child.stdin.end(stdin ?? '');
  });
}

/** Helm's own words, without a secret it was given (a repository password never reaches a log line). */
function helmFailure(what: string, result: HelmResult, secrets: readonly string[]): Error {
  let message = result.stderr.trim().split('\n').filter((line) => line.trim() !== '').slice(-5).join(' ');
  for (const secret of secrets) if (secret !== '') message = message.replaceAll(secret, '***');
  return new Error(`${what} failed${result.code === null ? '' : ` (exit code ${result.code})`}: ${message === '' ? 'helm said nothing' : message}`);
}

/** The version of the helm binary (`v4.1.4+g…`); a binary that is not there fails with {@link HELM_MISSING_MESSAGE}. */
export async function helmVersion(binary: string): Promise<string> {
  let result: HelmResult;
  try {
    result = await runHelm(binary, ['version', '--short'], { PATH: process.env.PATH ?? '/usr/bin:/bin' }, undefined, undefined);
  } catch (error) {
    if (error instanceof HelmMissing) throw new Error(HELM_MISSING_MESSAGE, { cause: error });
    throw error;
  }
  if (result.code !== 0) throw helmFailure(`${binary} version`, result, []);
  return result.stdout.trim();
}

/**
 * Runs `helm template` and answers what it printed. A repository's login goes to helm on its standard input
 * (`helm repo add … --password-stdin`, `helm registry login … --password-stdin`), never on a command line.
 */
export async function helmTemplate(run: HelmTemplateRun): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'slipway-helm-'));
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
      // Never the agent's cluster: a template is rendered offline.
      KUBECONFIG: path.join(home, 'no-kubeconfig'),
    };
    const secrets: string[] = [];
    const helm = async (what: string, args: string[], stdin?: string): Promise<string> => {
      const result = await runHelm(run.binary, args, env, stdin, run.signal);
      if (result.code !== 0) throw helmFailure(what, result, secrets);
      return result.stdout;
    };
    let chartReference: string;
    const versionFlags: string[] = [];
    if (run.chart.kind === 'directory') {
      chartReference = run.chart.path;
    } else {
      const { chart } = run.chart;
      const login = chart.credentials;
      if (login !== null) secrets.push(login.password);
      const tls = chart.skip_tls_verification ? ['--insecure-skip-tls-verify'] : [];
      if (chart.kind === 'HTTPS') {
        const loginFlags = login === null ? [] : ['--username', login.username, '--password-stdin'];
        await helm(`reading the chart repository ${chart.repository_url}`, ['repo', 'add', 'slipway-chart', chart.repository_url, ...loginFlags, ...tls], login?.password);
        chartReference = `slipway-chart/${chart.chart_name}`;
      } else {
        const location = chart.repository_url.replace(/^oci:\/\//, '').replace(/\/+$/, '');
        if (login !== null) {
          const host = location.split('/')[0] ?? location;
          await helm(`signing in to the registry ${host}`, ['registry', 'login', host, '--username', login.username, '--password-stdin', ...(chart.skip_tls_verification ? ['--insecure'] : [])], login.password);
        }
        chartReference = `oci://${location}/${chart.chart_name}`;
        versionFlags.push(...tls);
      }
      versionFlags.push('--version', chart.chart_version);
    }
    const valuesFlags: string[] = [];
    if (run.values.files.length > 0) await mkdir(path.join(home, 'values'));
    for (const [index, file] of run.values.files.entries()) {
      const filePath = path.join(home, 'values', `${index}-${file.name}`);
      await writeFile(filePath, file.content, { mode: 0o600 });
      valuesFlags.push('--values', filePath);
    }
    for (const [key, value] of run.values.set) valuesFlags.push('--set', `${key}=${value}`);
    for (const [key, value] of run.values.set_string) valuesFlags.push('--set-string', `${key}=${value}`);
    for (const [key, value] of run.values.set_json) valuesFlags.push('--set-json', `${key}=${value}`);
    const capabilities = [...(run.kubeVersion === undefined ? [] : ['--kube-version', run.kubeVersion]), ...run.apiVersions.flatMap((version) => ['--api-versions', version])];
    return await helm(
      `helm template of ${run.chart.kind === 'directory' ? 'the chart from git' : `chart ${run.chart.chart.chart_name} ${run.chart.chart.chart_version}`}`,
      ['template', run.release, chartReference, '--namespace', run.namespace, ...versionFlags, ...capabilities, ...valuesFlags, ...run.arguments],
    );
  } catch (error) {
    if (error instanceof HelmMissing) throw new Error(HELM_MISSING_MESSAGE, { cause: error });
    throw error;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** The YAML documents helm printed, as objects (a `List` stands for its items; empty documents are left out). */
export function parseRendered(output: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(output)) {
    if (document.errors.length > 0) throw new Error(`the chart rendered YAML that does not parse: ${document.errors[0]?.message ?? ''}`);
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    const items = typeof value === 'object' && (value as { kind?: unknown }).kind === 'List' ? ((value as { items?: unknown[] }).items ?? []) : [value];
    for (const item of items) {
      const object = item as Partial<KubeObject> | null;
      if (typeof object !== 'object' || object === null || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata?.name !== 'string') {
        throw new Error('the chart rendered a document that is not a Kubernetes object (apiVersion, kind and metadata.name are required)');
      }
      objects.push(object as KubeObject);
    }
  }
  return objects;
}

export const HOOK_ANNOTATION = 'helm.sh/hook';
const HOOK_WEIGHT = 'helm.sh/hook-weight';
const HOOK_DELETE_POLICY = 'helm.sh/hook-delete-policy';

export interface ChartHook {
  object: KubeObject;
  /** `hook-succeeded` in its delete policy: removed once it ran. */
  deleteWhenSucceeded: boolean;
}

export interface PreparedChart {
  /** The release's objects: applied, pruned to and kept for rollback as any other kind's. */
  objects: KubeObject[];
  /** Hooks of this run, in weight order: before the objects (pre-install or pre-upgrade) and after. */
  before: ChartHook[];
  after: ChartHook[];
  /** What was left out, said in the deployment's log: tests, and hooks of other events. */
  skipped: string[];
}

export interface ChartRules {
  service: ServiceIdentity;
  namespace: string;
  allowClusterWide: boolean;
  /** True on an upgrade (a release of the service ran before): picks pre-upgrade over pre-install hooks. */
  upgrade: boolean;
  /** Whether the server serves the kind in a namespace; undefined when it does not serve it at all. */
  namespaced(apiVersion: string, kind: string): boolean | undefined;
}

const describe = (object: KubeObject) => `${object.kind}/${object.metadata.name}`;

function labelled(metadata: Record<string, unknown> | undefined, labels: Record<string, string>): Record<string, unknown> {
  return { ...metadata, labels: { ...(metadata?.labels as Record<string, string> | undefined), ...labels } };
}

/** Slipway's labels on an object and on what it makes pods and claims from (pod templates, a CronJob's Job template, claim templates). */
export function withServiceLabels(object: KubeObject, labels: Record<string, string>): KubeObject {
  const result = { ...object, metadata: labelled(object.metadata, labels) } as KubeObject;
  const spec = object.spec as Record<string, unknown> | undefined;
  if (spec === undefined || typeof spec !== 'object' || spec === null) return result;
  const next: Record<string, unknown> = { ...spec };
  const template = spec.template as { metadata?: Record<string, unknown> } | undefined;
  if (template !== undefined && template !== null && typeof template === 'object') next.template = { ...template, metadata: labelled(template.metadata, labels) };
  const claims = spec.volumeClaimTemplates;
  if (Array.isArray(claims)) next.volumeClaimTemplates = claims.map((claim: { metadata?: Record<string, unknown> }) => ({ ...claim, metadata: labelled(claim.metadata, labels) }));
  const jobTemplate = spec.jobTemplate as { metadata?: Record<string, unknown>; spec?: { template?: { metadata?: Record<string, unknown> } } } | undefined;
  if (jobTemplate !== undefined && jobTemplate !== null) {
    const podTemplate = jobTemplate.spec?.template;
    next.jobTemplate = {
      ...jobTemplate,
      metadata: labelled(jobTemplate.metadata, labels),
      ...(podTemplate === undefined ? {} : { spec: { ...jobTemplate.spec, template: { ...podTemplate, metadata: labelled(podTemplate.metadata, labels) } } }),
    };
  }
  return { ...result, spec: next };
}

/**
 * Checks the rendered objects against the service's rules and makes them Slipway's: each namespaced object in the
 * environment's namespace (one naming another, and any cluster-scoped object, is refused unless the service allows
 * cluster-wide resources: the original's whitelist), every object labelled; hooks sorted out as this driver runs them.
 */
export function prepareChart(rendered: readonly KubeObject[], rules: ChartRules): PreparedChart {
  const labels = serviceLabels(rules.service);
  const refused: string[] = [];
  const prepared: PreparedChart = { objects: [], before: [], after: [], skipped: [] };
  const hooks: Array<{ weight: number; order: number; phase: 'before' | 'after'; hook: ChartHook }> = [];
  for (const [order, object] of rendered.entries()) {
    const hookEvents = (object.metadata.annotations?.[HOOK_ANNOTATION] ?? '')
      .split(',')
      .map((event) => event.trim())
      .filter((event) => event !== '');
    if (hookEvents.some((event) => event.startsWith('test'))) {
      prepared.skipped.push(`${describe(object)} (a test hook)`);
      continue;
    }
    const namespaced = rules.namespaced(object.apiVersion, object.kind);
    if (namespaced === undefined) throw new Error(`the chart renders ${describe(object)}, a kind this cluster does not serve in ${object.apiVersion}`);
    const named = object.metadata.namespace;
    if (!namespaced && !rules.allowClusterWide) refused.push(`${describe(object)} is cluster-wide`);
    if (namespaced && named !== undefined && named !== rules.namespace && !rules.allowClusterWide) refused.push(`${describe(object)} names namespace ${named}`);
    const metadata = { ...object.metadata };
    if (namespaced && (named === undefined || !rules.allowClusterWide)) metadata.namespace = rules.namespace;
    if (!namespaced) delete metadata.namespace;
    const labelledObject = withServiceLabels({ ...object, metadata }, labels);
    if (hookEvents.length === 0) {
      prepared.objects.push(labelledObject);
      continue;
    }
    const beforeEvent = rules.upgrade ? 'pre-upgrade' : 'pre-install';
    const afterEvent = rules.upgrade ? 'post-upgrade' : 'post-install';
    const phase = hookEvents.includes(beforeEvent) ? 'before' : hookEvents.includes(afterEvent) ? 'after' : undefined;
    if (phase === undefined) {
      prepared.skipped.push(`${describe(object)} (a ${hookEvents.join(',')} hook)`);
      continue;
    }
    const weight = Number.parseInt(object.metadata.annotations?.[HOOK_WEIGHT] ?? '0', 10);
    const policies = (object.metadata.annotations?.[HOOK_DELETE_POLICY] ?? '').split(',').map((policy) => policy.trim());
    hooks.push({ weight: Number.isNaN(weight) ? 0 : weight, order, phase, hook: { object: labelledObject, deleteWhenSucceeded: policies.includes('hook-succeeded') } });
  }
  if (refused.length > 0) {
    throw new Error(`the chart renders objects outside the environment's namespace, which this service does not allow (allow_cluster_wide_resources is off): ${refused.join('; ')}`);
  }
  hooks.sort((a, b) => a.weight - b.weight || a.order - b.order);
  for (const { phase, hook } of hooks) prepared[phase].push(hook);
  return prepared;
}
