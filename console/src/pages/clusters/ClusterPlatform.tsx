import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryWithFieldsOf, type components, type paths } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, ModalDialog, SelectField, Spinner } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { ClusterCard } from './ClusterCard.tsx';
import { configurationOf, EMPTY_CHOICE, PlatformConfigurationFields, platformContextOf, type PlatformChoice } from './PlatformConfigurationFields.tsx';

type Cluster = components['schemas']['Cluster'];
type Configuration = paths['/organization/{organizationId}/cluster/{clusterId}/platformConfiguration']['get']['responses'][200]['content']['application/json'];

/** The stored configuration as the form's choice: layers, settings and inputs as strings (sensitive values are not answered). */
function choiceOf(configuration: Configuration): PlatformChoice {
  const strings = (values: Record<string, Record<string, unknown>> | undefined) =>
    Object.fromEntries(Object.entries(values ?? {}).map(([component, fields]) => [component, Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)]))]));
  return { layers: { ...(configuration.layerSelections ?? {}) }, settings: strings(configuration.managedConfig), inputs: strings(configuration.customerProvidedInputs) };
}

/** The platform template release the cluster is bound to, its layers as resolved, each component's requirements, and its edit. */
export function ClusterPlatform({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const configuration = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/platformConfiguration', path, { retry: false });
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const readOnly = !permissions.can('write');
  const [editing, setEditing] = useState(false);
  const notConfigured = configuration.isError && (configuration.error as { status?: number }).status === 404;
  const data = configuration.data;
  return (
    <div className="cluster-tab">
      <ClusterCard id="platform-configuration" title="Platform configuration" intro="What Slipway installs on the cluster beside your workloads, from a versioned platform template. A change marks the cluster out of date until its next deployment.">
        <PermissionNote id={noteId} reason={permissions.reason('write')} />
        {configuration.isPending ? <Spinner label="Loading the platform configuration…" /> : null}
        {notConfigured ? <p>The cluster has no platform configuration: nothing is installed beside your workloads.</p> : <ErrorMessage message={configuration.isError ? messageOf(configuration.error) : undefined} />}
        {data === undefined ? null : (
          <>
            <p>
              Template <strong>{data.templateKey}</strong> {data.templateVersion}
            </p>
            <table className="table" aria-label="Layers">
              <thead>
                <tr>
                  <th scope="col">Layer</th>
                  <th scope="col">Status</th>
                  <th scope="col">Why</th>
                  <th scope="col">Components</th>
                </tr>
              </thead>
              <tbody>
                {data.layers.map((layer) => (
                  <tr key={layer.key}>
                    <th scope="row" data-label="Layer">
                      {layer.key}
                    </th>
                    <td data-label="Status">{layer.status.charAt(0) + layer.status.slice(1).toLowerCase()}</td>
                    <td data-label="Why">{layer.reason}</td>
                    <td data-label="Components">{layer.componentKeys.join(', ') || <span className="muted">none</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
        {configuration.isPending ? null : (
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => setEditing(true)} isDisabled={readOnly} aria-describedby={readOnly ? noteId : undefined}>
              {data === undefined ? 'Configure…' : 'Edit the configuration…'}
            </Button>
          </div>
        )}
      </ClusterCard>
      {data === undefined ? null : <ComponentRequirements organizationId={organizationId} cluster={cluster} configuration={data} />}
      {editing ? <EditPlatformDialog organizationId={organizationId} cluster={cluster} stored={data} onClose={() => setEditing(false)} /> : null}
    </div>
  );
}

/** Per enabled component, the cluster's own `resolve` preview over what it stores: each requirement READY or MISSING, and the violations. */
function ComponentRequirements({ organizationId, cluster, configuration }: { organizationId: string; cluster: Cluster; configuration: Configuration }) {
  const components = configuration.layers.filter((layer) => layer.status === 'ENABLED').flatMap((layer) => layer.componentKeys);
  const [componentKey, setComponentKey] = useState(components[0] ?? '');
  const resolve = api.useQuery(
    'post',
    '/organization/{organizationId}/cluster/{clusterId}/platformBinding/component/{componentKey}/resolve',
    { params: { path: { organizationId, clusterId: cluster.id, componentKey } }, body: {} },
    { enabled: componentKey !== '' },
  );
  if (components.length === 0) return null;
  return (
    <ClusterCard id="platform-requirements" title="Component requirements" intro="What each installed component needs, with the values the cluster stores: settings of its profile and inputs only the cluster’s owner knows. A sensitive value is never read back, so it shows missing here.">
      <SelectField id="platform-component" label="Component" value={componentKey} onChange={setComponentKey} options={components.map((key) => ({ value: key, label: key }))} />
      {resolve.isPending ? <Spinner label="Resolving the component…" /> : null}
      <ErrorMessage message={resolve.isError ? messageOf(resolve.error) : undefined} />
      {resolve.data === undefined ? null : (
        <>
          {resolve.data.requirements.length === 0 ? <p className="muted">This component needs nothing more.</p> : null}
          {resolve.data.requirements.length === 0 ? null : (
            <table className="table" aria-label={`Requirements of ${componentKey}`}>
              <thead>
                <tr>
                  <th scope="col">Requirement</th>
                  <th scope="col">From</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {resolve.data.requirements.map((requirement) => (
                  <tr key={`${requirement.scope}-${requirement.key}`}>
                    <th scope="row" data-label="Requirement">
                      {requirement.label}
                      {requirement.description === null ? null : <span className="field-description"> {requirement.description}</span>}
                    </th>
                    <td data-label="From">{requirement.scope === 'CLUSTER' ? 'the cluster’s owner' : 'the profile'}</td>
                    <td data-label="Status">{requirement.status === 'READY' ? 'Ready' : <strong className="field-error">Missing</strong>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {resolve.data.violations.map((violation) => (
            <p key={`${violation.fieldPath}-${violation.code}`} className="field-error">
              {violation.fieldPath}: {violation.message}
            </p>
          ))}
        </>
      )}
    </ClusterCard>
  );
}

function EditPlatformDialog({ organizationId, cluster, stored, onClose }: { organizationId: string; cluster: Cluster; stored: Configuration | undefined; onClose: () => void }) {
  const context = platformContextOf(cluster);
  const templates = api.useQuery('get', '/organization/{organizationId}/platformTemplate', { params: { path: { organizationId }, query: { clusterMode: context.mode, cloudProvider: context.provider as 'AWS' } } });
  const storedRelease = stored === undefined ? '' : `${stored.templateKey}@${stored.templateVersion}`;
  const [release, setRelease] = useState('');
  const [choice, setChoice] = useState<PlatformChoice>(stored === undefined ? EMPTY_CHOICE : choiceOf(stored));
  const queryClient = useQueryClient();
  const save = api.useMutation('put', '/organization/{organizationId}/cluster/{clusterId}/platformConfiguration', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/platformConfiguration'] });
      await queryClient.invalidateQueries({ queryKey: ['post', '/organization/{organizationId}/cluster/{clusterId}/platformBinding/component/{componentKey}/resolve'] });
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}'] });
      onClose();
    },
  });
  // A new configuration cannot be on a deprecated release; the cluster may keep the one it has.
  const offered = (templates.data?.results ?? []).filter((entry) => entry.status === 'PUBLISHED' || `${entry.key}@${entry.version}` === storedRelease);
  const chosen = release === '' ? (storedRelease !== '' ? storedRelease : offered[0] === undefined ? '' : `${offered[0].key}@${offered[0].version}`) : release;
  const template = offered.find((entry) => `${entry.key}@${entry.version}` === chosen);
  const fields = fieldErrorsOf(save.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending || template === undefined) return;
    save.mutate({ params: { path: { organizationId, clusterId: cluster.id } }, body: { templateKey: template.key, templateVersion: template.version, ...configurationOf(template, choice, context) } });
  }
  return (
    <ModalDialog title="Platform configuration" isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form className="form" onSubmit={submit}>
        {templates.isPending ? <Spinner label="Loading the templates…" /> : null}
        <ErrorMessage message={templates.isError ? messageOf(templates.error) : undefined} />
        <SelectField
          id="platform-release"
          label="Template release"
          value={chosen}
          onChange={(value) => (save.reset(), setChoice(value === storedRelease && stored !== undefined ? choiceOf(stored) : EMPTY_CHOICE), setRelease(value))}
          options={offered.map((entry) => ({ value: `${entry.key}@${entry.version}`, label: `${entry.key} ${entry.version}${entry.status === 'DEPRECATED' ? ' (deprecated)' : ''}` }))}
          errorMessage={fields.get('templateVersion') ?? fields.get('templateKey')}
        />
        {template === undefined ? null : <PlatformConfigurationFields organizationId={organizationId} template={template} choice={choice} onChange={(next) => (save.reset(), setChoice(next))} context={context} />}
        {fields.size === 0 ? null : (
          <ul className="field-error" aria-label="Problems">
            {[...fields].map(([field, message]) => (
              <li key={field}>
                {field}: {message}
              </li>
            ))}
          </ul>
        )}
        <ErrorMessage message={save.isError ? summaryWithFieldsOf(save.error, 0) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit" isDisabled={template === undefined}>
            Save the configuration
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}
