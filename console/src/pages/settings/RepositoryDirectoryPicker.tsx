import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, type components } from '../../api/client.ts';
import { Button, ErrorMessage, ModalDialog, TextField } from '../../ui/controls.tsx';
import { formErrorsOf } from '../../ui/dialogs.tsx';

type Provider = components['schemas']['GitProviderEnum'];

function childPath(parent: string, name: string): string {
  return `${parent === '/' ? '' : parent}/${name}`;
}
function parentPath(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/**
 * The repository directory picker (listDirectoriesFromGitRepository): a repository URL and branch, read with a git
 * token, then its directories one level at a time — open one, go up — from the root. With `onPick`, the directory
 * shown can be chosen (a service's root path); without, it only browses.
 */
export function RepositoryDirectoryPicker(props: {
  organizationId: string;
  title: string;
  provider: Provider;
  gitTokenId?: string | undefined;
  url?: string;
  branch?: string;
  onPick?: (path: string) => void;
  onClose: () => void;
}) {
  const { organizationId } = props;
  const [url, setUrl] = useState(props.url ?? '');
  const [branch, setBranch] = useState(props.branch ?? '');
  const [path, setPath] = useState('/');
  const list = api.useMutation('post', '/organization/{organizationId}/listDirectoriesFromGitRepository');
  const { fields, summary } = formErrorsOf(list);
  function read(at: string) {
    if (list.isPending || url.trim() === '') return;
    setPath(at);
    list.mutate({
      params: { path: { organizationId } },
      body: {
        url: url.trim(),
        provider: props.provider,
        root_path: at,
        ...(branch.trim() === '' ? {} : { branch: branch.trim() }),
        ...(props.gitTokenId === undefined ? {} : { git_token_id: props.gitTokenId }),
      },
    });
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    read('/');
  }
  const directories = list.data?.results;
  return (
    <ModalDialog title={props.title} isOpen onOpenChange={(open) => (open ? undefined : props.onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Repository URL" value={url} onChange={(value) => (list.reset(), setUrl(value))} isRequired autoFocus type="url" maxLength={2048} errorMessage={fields.get('url')} placeholder="https://github.com/owner/repository.git" />
        <TextField label="Branch (optional)" value={branch} onChange={(value) => (list.reset(), setBranch(value))} maxLength={255} errorMessage={fields.get('branch')} description="Left empty, the repository's default branch." />
        <div className="form-actions form-actions-start">
          <Button type="submit" variant="secondary">
            List directories
          </Button>
        </div>
        <ErrorMessage message={summary} />
      </Form>
      {directories === undefined ? null : (
        <section aria-labelledby="directory-heading" className="directory-picker">
          <h3 id="directory-heading" className="directory-path">
            <span className="visually-hidden">Directory </span>
            <code>{path}</code>
          </h3>
          <ul className="directory-list" aria-labelledby="directory-heading">
            {path === '/' ? null : (
              <li>
                <Button variant="secondary" onPress={() => read(parentPath(path))}>
                  ↑ Up<span className="visually-hidden"> to {parentPath(path)}</span>
                </Button>
              </li>
            )}
            {directories.map((name) => (
              <li key={name}>
                <Button variant="secondary" onPress={() => read(childPath(path, name))}>
                  <span aria-hidden="true">▸ </span>
                  {name}/<span className="visually-hidden"> (open)</span>
                </Button>
              </li>
            ))}
          </ul>
          {directories.length === 0 ? <p className="muted">No directory here.</p> : null}
        </section>
      )}
      <div className="form-actions">
        {props.onPick === undefined || directories === undefined ? null : (
          <Button onPress={() => (props.onPick?.(path), props.onClose())}>
            Use {path}
          </Button>
        )}
        <Button variant={props.onPick === undefined ? 'primary' : 'secondary'} onPress={props.onClose}>
          {props.onPick === undefined ? 'Close' : 'Cancel'}
        </Button>
      </div>
    </ModalDialog>
  );
}
