import { api, messageOf, type paths } from '../api/client.ts';
import { Button, ErrorMessage } from '../ui/controls.tsx';
import type { KeyValueRow } from '../ui/KeyValueRows.tsx';

type GitRepositoryBody = paths['/organization/{organizationId}/parseTerraformVariablesFromGitRepo']['post']['requestBody']['content']['application/json']['git_repository'];

/**
 * The Terraform wizard's help with variables, read from the module in the repository chosen at the first step: the
 * variables its .tf files declare (parseTerraformVariablesFromGitRepo), each added as a row with its default, and the
 * .tfvars files beside it (listTfVarsFilesFromGitRepo), each used as a variable file. Nothing is added unasked.
 */
export function TerraformVariablesFromRepository(props: {
  organizationId: string;
  repository: GitRepositoryBody;
  rows: readonly KeyValueRow[];
  files: readonly string[];
  onAddVariable: (row: KeyValueRow) => void;
  onUseFile: (path: string) => void;
}) {
  const path = { params: { path: { organizationId: props.organizationId } } };
  const declared = api.useMutation('post', '/organization/{organizationId}/parseTerraformVariablesFromGitRepo');
  const files = api.useMutation('post', '/organization/{organizationId}/listTfVarsFilesFromGitRepo');
  const where = `${props.repository.url}${props.repository.branch ? ` (${props.repository.branch})` : ''}${props.repository.root_path && props.repository.root_path !== '/' ? `, ${props.repository.root_path}` : ''}`;
  const hasRow = (key: string) => props.rows.some((row) => row.key.trim() === key);
  return (
    <section aria-labelledby="tf-from-repository-heading" className="fieldset tf-from-repository">
      <h3 id="tf-from-repository-heading">From the repository</h3>
      <p className="muted">
        Read <span className="url">{where}</span> for the variables its module declares and its .tfvars files.
      </p>
      <div className="tf-from-repository-actions">
        <Button variant="secondary" onPress={() => (declared.isPending ? undefined : declared.mutate({ ...path, body: { git_repository: props.repository } }))}>
          Read the declared variables
        </Button>
        <Button variant="secondary" onPress={() => (files.isPending ? undefined : files.mutate({ ...path, body: { git_repository: props.repository, mode: { type: 'AutoDiscover' } } }))}>
          Find .tfvars files
        </Button>
      </div>
      {declared.isPending || files.isPending ? (
        <p className="loading" role="status">
          Reading the repository…
        </p>
      ) : null}
      <ErrorMessage message={declared.isError ? messageOf(declared.error) : undefined} />
      {declared.data === undefined ? null : declared.data.results.length === 0 ? (
        <p className="muted">The module declares no variable.</p>
      ) : (
        <table className="table" aria-label="Declared variables">
          <thead>
            <tr>
              <th scope="col">Variable</th>
              <th scope="col">Default</th>
              <th scope="col">Declared in</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {declared.data.results.map((variable) => (
              <tr key={variable.key}>
                <th scope="row">
                  <code>{variable.key}</code>
                  {variable.sensitive ? <span className="kind-label">sensitive</span> : null}
                  {variable.description === null ? null : <span className="kind-label">{variable.description}</span>}
                </th>
                <td data-label="Default">{variable.default === null ? <span className="muted">none (required)</span> : <code>{variable.default}</code>}</td>
                <td data-label="Declared in">{variable.source}</td>
                <td className="actions-cell">
                  {hasRow(variable.key) ? (
                    <span className="muted">Added</span>
                  ) : (
                    <Button variant="secondary" onPress={() => props.onAddVariable({ key: variable.key, value: variable.default ?? '' })}>
                      Add<span className="visually-hidden"> {variable.key}</span>
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorMessage message={files.isError ? messageOf(files.error) : undefined} />
      {files.data === undefined ? null : files.data.results.length === 0 ? (
        <p className="muted">No .tfvars file at the root path.</p>
      ) : (
        <table className="table" aria-label="Variable files found">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Sets</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {files.data.results.map((file) => (
              <tr key={file.source}>
                <th scope="row">
                  <code>{file.source}</code>
                </th>
                <td data-label="Sets">{Object.keys(file.variables).join(', ') || <span className="muted">nothing</span>}</td>
                <td className="actions-cell">
                  {props.files.includes(file.source) ? (
                    <span className="muted">Used</span>
                  ) : (
                    <Button variant="secondary" onPress={() => props.onUseFile(file.source)}>
                      Use<span className="visually-hidden"> {file.source}</span>
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
