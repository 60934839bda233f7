import { useState, type ReactNode } from 'react';
import { api, fetchClient, messageOf, summaryOf } from '../../api/client.ts';
import { Button, ErrorMessage, SelectField } from '../../ui/controls.tsx';

/** A git source as the creation request sends it (NewServicePage's `gitRepository`). */
export interface GitSource {
  url: string;
  provider: 'GITHUB' | 'GITLAB' | 'BITBUCKET';
  branch: string;
  root_path: string;
  git_token_id?: string;
}

function CheckBlock({ label, pending, onCheck, error, children }: { label: string; pending: boolean; onCheck: () => void; error: string | undefined; children: ReactNode }) {
  return (
    <div className="source-check">
      <Button variant="secondary" onPress={onCheck} isDisabled={pending}>
        {pending ? 'Checking…' : label}
      </Button>
      <ErrorMessage message={error} />
      <div role="status" className="source-check-answer">
        {children}
      </div>
    </div>
  );
}

/** checkContainerImage: whether the registry lists the tag, with the registry's stored login, before creating. */
export function ContainerImageCheck({ environmentId, registryId, image, tag }: { environmentId: string; registryId: string; image: string; tag: string }) {
  const check = api.useMutation('post', '/environment/{environmentId}/checkContainerImage');
  const answer = check.data;
  return (
    <CheckBlock
      label="Check the image"
      pending={check.isPending}
      error={check.isError ? messageOf(check.error) : undefined}
      onCheck={() => check.mutate({ params: { path: { environmentId } }, body: { registry_id: registryId, image_name: image.trim(), tag: tag.trim() } })}
    >
      {answer === undefined ? null : answer.exists ? (
        <p className="source-check-answer">
          ✓ The registry has <code>{`${answer.image_name}:${answer.tag}`}</code>.
        </p>
      ) : (
        <p className="source-check-answer error-text">
          ✗ The registry does not list <code>{`${answer.image_name}:${answer.tag}`}</code>.
        </p>
      )}
    </CheckBlock>
  );
}

/**
 * checkGitFile then checkDockerfile: whether the branch has the Dockerfile (or, without one named, a Dockerfile at the
 * root path), and what it declares — its build arguments and the images it builds from.
 */
export function GitSourceCheck({ environmentId, source, dockerfilePath }: { environmentId: string; source: GitSource; dockerfilePath: string }) {
  const files = api.useMutation('post', '/environment/{environmentId}/checkGitFile');
  const dockerfile = api.useMutation('post', '/environment/{environmentId}/checkDockerfile');
  const named = dockerfilePath.trim();
  const path = named === '' ? 'Dockerfile' : named;
  async function check() {
    files.reset();
    dockerfile.reset();
    const found = await files.mutateAsync({ params: { path: { environmentId } }, body: { git_repository: source, files: [path] } }).catch(() => undefined);
    if (found?.files[0]?.exists === true) dockerfile.mutate({ params: { path: { environmentId } }, body: { git_repository: source, dockerfile_path: path } });
  }
  const exists = files.data?.files[0]?.exists;
  const read = dockerfile.data;
  const failure = files.isError ? files.error : dockerfile.isError ? dockerfile.error : undefined;
  return (
    <CheckBlock label="Check the repository" pending={files.isPending || dockerfile.isPending} error={failure === undefined ? undefined : summaryOf(failure)} onCheck={() => void check()}>
      {exists === undefined ? null : exists ? (
        <p className="source-check-answer">✓ The branch has {path}.</p>
      ) : named === '' ? (
        <p className="source-check-answer">The branch has no Dockerfile at its root path: Slipway finds how to build and start the code.</p>
      ) : (
        <p className="source-check-answer error-text">✗ The branch has no {path}.</p>
      )}
      {read === undefined ? null : (
        <p className="source-check-answer">
          Builds from {read.repositories.length === 0 ? 'no image' : read.repositories.join(', ')}; build arguments: {read.arg.length === 0 ? 'none' : read.arg.join(', ')}.
        </p>
      )}
    </CheckBlock>
  );
}

/** checkHelmRepository: the chart at the git source's root path (its Chart.yaml), before creating. */
export function HelmChartCheck({ environmentId, source }: { environmentId: string; source: GitSource }) {
  const check = api.useMutation('post', '/environment/{environmentId}/checkHelmRepository');
  const answer = check.data;
  return (
    <CheckBlock label="Check the chart" pending={check.isPending} error={check.isError ? summaryOf(check.error) : undefined} onCheck={() => check.mutate({ params: { path: { environmentId } }, body: { git_repository: source } })}>
      {answer === undefined ? null : (
        <p className="source-check-answer">
          ✓ Chart <code>{answer.chart_name}</code> {answer.chart_version}
          {answer.app_version === undefined ? '' : ` (app ${answer.app_version})`}, {answer.has_default_values ? 'with' : 'without'} a values.yaml.
        </p>
      )}
    </CheckBlock>
  );
}

export type HelmSource = { git_repository: GitSource } | { helm_repository: { repository: string; chart_name: string; chart_version: string } };

/** createHelmDefaultValues: the chart's own values.yaml, loaded into the override field to edit (the button says when it replaces what is there). */
export function HelmDefaultValues({ environmentId, source, current, onLoaded }: { environmentId: string; source: HelmSource; current: string; onLoaded: (values: string) => void }) {
  const [state, setState] = useState<{ pending: boolean; error: string | undefined; loaded: boolean }>({ pending: false, error: undefined, loaded: false });
  async function load() {
    if (state.pending) return;
    setState({ pending: true, error: undefined, loaded: false });
    const answer = await fetchClient.POST('/environment/{environmentId}/helmDefaultValues', { params: { path: { environmentId } }, body: { source }, parseAs: 'text' }).catch((error: unknown) => ({ data: undefined, error }));
    if (answer.data === undefined) {
      // An error body comes as text too: read it as the API's JSON when it is.
      let error: unknown = answer.error;
      if (typeof error === 'string') {
        try {
          error = JSON.parse(error);
        } catch {
          error = { message: error };
        }
      }
      setState({ pending: false, error: messageOf(error), loaded: false });
      return;
    }
    onLoaded(answer.data);
    setState({ pending: false, error: undefined, loaded: true });
  }
  return (
    <CheckBlock label={current.trim() === '' ? 'Load the chart’s default values' : 'Replace with the chart’s default values'} pending={state.pending} error={state.error} onCheck={() => void load()}>
      {state.loaded ? <p className="source-check-answer">Loaded the chart’s values.yaml: edit what you want to override, remove the rest.</p> : null}
    </CheckBlock>
  );
}

/** listTerraformVersions: the engine's versions the installation runs; empty means the files' terraform block decides. */
export function TerraformVersionField({ engine, value, onChange, errorMessage }: { engine: 'TERRAFORM' | 'OPEN_TOFU'; value: string; onChange: (value: string) => void; errorMessage: string | undefined }) {
  const versions = api.useQuery('get', '/terraform/availableVersion');
  const choices = (versions.data?.results ?? []).filter((entry) => entry.engine === engine).map((entry) => ({ value: entry.version, label: entry.version }));
  return (
    <SelectField
      id="terraform-version"
      label="Version"
      value={value}
      onChange={onChange}
      options={[{ value: '', label: 'As the files’ terraform block requires' }, ...choices]}
      errorMessage={errorMessage ?? (versions.isError ? messageOf(versions.error) : undefined)}
      description={versions.isPending ? 'Reading the versions…' : 'The engine version to run the files with.'}
    />
  );
}
