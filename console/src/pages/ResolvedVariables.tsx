import { useQuery } from '@tanstack/react-query';
import { api, apiRequest, messageOf, type components } from '../api/client.ts';
import { ErrorMessage, Spinner } from '../ui/controls.tsx';

type ResolvedVariable = components['schemas']['ResolvedVariable'];
type ResolvedLink = ResolvedVariable['alias_chain'][number];

const SCOPE_LABELS: Record<string, string> = { BUILT_IN: 'Built-in', PROJECT: 'Project', ENVIRONMENT: 'Environment' };

function scopeLabel(scope: string): string {
  return SCOPE_LABELS[scope] ?? 'Service';
}

function linkText(link: ResolvedLink): string {
  return `${link.key} (${scopeLabel(link.scope).toLowerCase()})`;
}

/**
 * What the service receives at its next deployment (`…/resolvedVariables` of the service at `base`, one path per
 * service kind).
 */
export function ServiceResolvedVariables({ base }: { base: string }) {
  const resolved = useQuery({
    queryKey: ['service-resolved-variables', base],
    queryFn: () => apiRequest<{ content_hash: string; results: ResolvedVariable[] }>('GET', `${base}/resolvedVariables`),
  });
  return <ResolvedVariablesTable label="What the service receives" resolved={resolved} />;
}

/** What the environment resolves (listEnvironmentResolvedVariables): what its services receive unless they set a name themselves. */
export function EnvironmentResolvedVariables({ environmentId }: { environmentId: string }) {
  const resolved = api.useQuery('get', '/environment/{environmentId}/resolvedVariables', { params: { path: { environmentId } } });
  return <ResolvedVariablesTable label="What the environment resolves" resolved={resolved} />;
}

/**
 * Each final name with the scope that won, the alias chain that produced its value, and the broader definitions it
 * overrides. Secrets and hidden built-ins show no value (the API answers none); an alias whose target does not exist is
 * said, as the deployment would refuse it.
 */
function ResolvedVariablesTable({ label, resolved }: { label: string; resolved: { isPending: boolean; error: unknown; data?: { results: ResolvedVariable[] } | undefined } }) {
  if (resolved.isPending) return <Spinner label="Resolving the variables…" />;
  if (resolved.data === undefined) return <ErrorMessage message={messageOf(resolved.error)} />;
  const results = [...resolved.data.results].sort((a, b) => a.key.localeCompare(b.key));
  return (
    <table className="table variables-table" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
          <th scope="col">Set by</th>
          <th scope="col">Through</th>
          <th scope="col">Overrides</th>
        </tr>
      </thead>
      <tbody>
        {results.map((variable) => (
          <tr key={variable.key}>
            <th scope="row" data-label="Name">
              <code className="variable-key">{variable.key}</code>
              {variable.is_secret ? <span className="badge">Secret</span> : null}
              {variable.mount_path === null ? null : <span className="badge">File</span>}
            </th>
            <td data-label="Value" className="value-cell">
              {variable.unresolved_alias !== null ? (
                <span className="tag tag-danger">alias of {variable.unresolved_alias}, which does not exist</span>
              ) : variable.hidden || variable.value === undefined ? (
                <span className="muted">{variable.is_secret ? 'hidden (secret)' : 'hidden'}</span>
              ) : (
                <code className="variable-value">{variable.value}</code>
              )}
              {variable.mount_path === null ? null : <span className="muted small"> file at {variable.mount_path}</span>}
            </td>
            <td data-label="Set by">
              <span className={`scope scope-${variable.scope.toLowerCase()}`}>{scopeLabel(variable.scope)}</span>
            </td>
            <td data-label="Through">{variable.alias_chain.length <= 1 ? <span className="muted">its own value</span> : variable.alias_chain.map(linkText).join(' → ')}</td>
            <td data-label="Overrides">{variable.overrides.length === 0 ? <span className="muted">nothing</span> : variable.overrides.map(linkText).join(', ')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
