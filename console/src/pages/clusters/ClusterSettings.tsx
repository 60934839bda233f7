import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fetchClient, fieldErrorsOf, messageOf, type components, type paths } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { AdvancedSettingsForm } from '../service-settings/ServiceSettings.tsx';
import type { Settings } from '../service-settings/settings-bodies.ts';
import { ClusterCard, SaveFoot } from './ClusterCard.tsx';

type Cluster = components['schemas']['Cluster'];

/** The cluster runs Karpenter (the API's own test, clusters-settings.service.ts: an AWS cluster with a Karpenter feature). */
export function runsKarpenter(cluster: Cluster): boolean {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
  return (
    cluster.cloud_provider === 'AWS' &&
    (cluster.features ?? []).some((feature) => {
      const value = feature.value;
      const valueObject = feature.value_object;
      return (isObject(value) && 'default_service_architecture' in value && 'platform_node_pools' in value) || (isObject(valueObject) && valueObject.type === 'KARPENTER' && isObject(valueObject.value));
    })
  );
}

export function isEksAnywhere(cluster: Cluster): boolean {
  const parameters = cluster.infrastructure_charts_parameters as { eks_anywhere_parameters?: unknown } | null | undefined;
  return parameters?.eks_anywhere_parameters !== undefined && parameters.eks_anywhere_parameters !== null;
}

/** The cluster's advanced settings, and the EKS Anywhere and Karpenter settings of the clusters of those kinds. */
export function ClusterSettings({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const readOnly = !permissions.can('write');
  const props = { organizationId, cluster, readOnly, noteId: readOnly ? noteId : undefined };
  return (
    <div className="cluster-tab">
      <PermissionNote id={noteId} reason={permissions.reason('write')} />
      <AdvancedSettings {...props} />
      {runsKarpenter(cluster) ? <KarpenterSubnets {...props} /> : null}
      {isEksAnywhere(cluster) ? <EksAnywhere {...props} /> : null}
    </div>
  );
}

interface SectionProps {
  organizationId: string;
  cluster: Cluster;
  readOnly: boolean;
  noteId: string | undefined;
}

function AdvancedSettings({ organizationId, cluster, readOnly, noteId }: SectionProps) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const defaults = api.useQuery('get', '/defaultClusterAdvancedSettings');
  const current = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/advancedSettings', path);
  const queryClient = useQueryClient();
  // The form is not re-keyed on the fresh read: its rows already are what was saved, and its "Saved." must stay.
  async function save(body: Settings) {
    const { error } = await fetchClient.PUT('/organization/{organizationId}/cluster/{clusterId}/advancedSettings', { ...path, body: body as paths['/organization/{organizationId}/cluster/{clusterId}/advancedSettings']['put']['requestBody']['content']['application/json'] });
    if (error !== undefined) throw error;
    await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/advancedSettings'] });
  }
  return (
    <ClusterCard id="cluster-advanced-settings" title="Advanced settings" intro="Settings of the infrastructure around the cluster (its VPC, Loki, the nginx controller, the registry, the load balancer), kept for the tools that provision it; a change marks the cluster out of date until its next deployment.">
      {defaults.isPending || current.isPending ? <Spinner label="Loading the advanced settings…" /> : null}
      <ErrorMessage message={defaults.isError ? messageOf(defaults.error) : current.isError ? messageOf(current.error) : undefined} />
      {defaults.data === undefined || current.data === undefined ? null : <AdvancedSettingsForm save={save} defaults={defaults.data as Settings} current={current.data as Settings} readOnly={readOnly} noteId={noteId} />}
    </ClusterCard>
  );
}

const ZONES = ['a', 'b', 'c'] as const;

/** The API keeps no readable copy of these lists (it answers nothing), so the form starts empty and replaces all three. */
function KarpenterSubnets({ organizationId, cluster, readOnly, noteId }: SectionProps) {
  const [zones, setZones] = useState<Record<(typeof ZONES)[number], string>>({ a: '', b: '', c: '' });
  const edit = api.useMutation('put', '/organization/{organizationId}/cluster/{clusterId}/karpenterPrivateSubnetIds');
  const fields = fieldErrorsOf(edit.error);
  const ids = (text: string) => text.split(/[\s,]+/).filter((id) => id !== '');
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    edit.mutate({
      params: { path: { organizationId, clusterId: cluster.id } },
      body: { eks_karpenter_fargate_subnets_zone_a_ids: ids(zones.a), eks_karpenter_fargate_subnets_zone_b_ids: ids(zones.b), eks_karpenter_fargate_subnets_zone_c_ids: ids(zones.c) },
    });
  }
  const errorOf = (zone: string) => [...fields].filter(([field]) => field.startsWith(`eks_karpenter_fargate_subnets_zone_${zone}_ids`)).map(([, message]) => message)[0];
  return (
    <ClusterCard id="karpenter" title="Karpenter Fargate subnets" intro="The private subnets, per availability zone, where Karpenter’s Fargate profile runs. Saving replaces the three lists; a zone left empty has none.">
      <Form className="form" onSubmit={submit}>
        {ZONES.map((zone) => (
          <TextField key={zone} label={`Zone ${zone.toUpperCase()} subnet ids`} value={zones[zone]} onChange={(value) => (edit.reset(), setZones((previous) => ({ ...previous, [zone]: value })))} placeholder="subnet-0123abcd, subnet-…" errorMessage={errorOf(zone)} />
        ))}
        <SaveFoot label="Save the subnets" error={edit.error} fieldCount={fields.size} saved={edit.isSuccess} disabled={readOnly} noteId={noteId} />
      </Form>
    </ClusterCard>
  );
}

function EksAnywhere({ organizationId, cluster, readOnly, noteId }: SectionProps) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const commits = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/eks-anywhere/commits', path);
  const [commit, setCommit] = useState('');
  const [jwt, setJwt] = useState<string | undefined>();
  const choose = api.useMutation('put', '/organization/{organizationId}/cluster/{clusterId}/eks-anywhere/commit');
  const token = api.useMutation('get', '/organization/{organizationId}/cluster/{clusterId}/eks-anywhere/jwt', { onSuccess: (answer) => setJwt(answer.jwt) });
  const fields = fieldErrorsOf(choose.error);
  const permissions = useOrganizationPermissions(organizationId);
  const adminNote = useId();
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!choose.isPending && commit !== '') choose.mutate({ ...path, body: { commit_id: commit } });
  }
  return (
    <ClusterCard id="eks-anywhere" title="EKS Anywhere" intro="The commit of the cluster’s git repository its EKS Anywhere definition is taken from, and a token that speaks for the cluster (one hour).">
      {commits.isPending ? <Spinner label="Loading the commits…" /> : null}
      <ErrorMessage message={commits.isError ? messageOf(commits.error) : undefined} />
      {commits.data === undefined ? null : (
        <Form className="form" onSubmit={submit}>
          <SelectField
            id="eks-anywhere-commit"
            label="Commit"
            value={commit}
            onChange={(value) => (choose.reset(), setCommit(value))}
            options={[{ value: '', label: commits.data.results.length === 0 ? 'No commits (no repository configured)' : 'Choose a commit' }, ...commits.data.results.map((entry) => ({ value: entry.git_commit_id, label: `${entry.git_commit_id.slice(0, 7)} ${entry.message.split('\n')[0] ?? ''} (${entry.author_name})` }))]}
            errorMessage={fields.get('commit_id')}
          />
          {choose.data === undefined ? null : (
            <p role="status">
              The cluster now follows commit <code>{choose.data.commit_id}</code>.
            </p>
          )}
          <SaveFoot label="Use this commit" error={choose.error} fieldCount={fields.size} saved={false} disabled={readOnly || commit === ''} noteId={noteId} />
        </Form>
      )}
      <PermissionNote id={adminNote} reason={permissions.reason('admin')} />
      {jwt === undefined ? (
        <Button variant="secondary" onPress={() => token.mutate(path)} isDisabled={!permissions.can('admin')} aria-describedby={permissions.can('admin') ? undefined : adminNote}>
          Show a cluster token
        </Button>
      ) : (
        <div className="secret-value">
          <label htmlFor="eks-anywhere-jwt">Cluster token (valid for one hour)</label>
          <div className="secret-value-row">
            <textarea id="eks-anywhere-jwt" readOnly value={jwt} rows={3} spellCheck={false} className="code-block" />
            <CopyButton value={jwt} label="Copy the cluster token" />
          </div>
        </div>
      )}
      <ErrorMessage message={token.isError ? messageOf(token.error) : undefined} />
    </ClusterCard>
  );
}
