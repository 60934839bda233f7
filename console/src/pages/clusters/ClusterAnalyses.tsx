import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, RelativeTime, SelectField, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { ClusterCard, SaveFoot } from './ClusterCard.tsx';

type Analysis = components['schemas']['ClusterAnalysisResponse'];
type Kind = Analysis['kind'];
type Format = Analysis['output_format'];

const KINDS: readonly { value: Kind; label: string }[] = [
  { value: 'DEPRECATED_API_CHECK', label: 'Deprecated API check (before an upgrade)' },
  { value: 'COST_RECOMMENDATION', label: 'Cost recommendations' },
];
const FORMATS: readonly { value: Format; label: string }[] = [
  { value: 'TABLE', label: 'Table' },
  { value: 'CSV', label: 'CSV' },
  { value: 'JSON', label: 'JSON lines' },
];
const ACTIVE = new Set<Analysis['status']>(['PENDING', 'RUNNING']);
const CHIP: Record<Analysis['status'], string> = { PENDING: 'QUEUED', RUNNING: 'DEPLOYING', SUCCEEDED: 'DEPLOYED', FAILED: 'DEPLOYMENT_ERROR', TERMINATED: 'CANCELED' };

/** Diagnoses of the cluster Slipway runs from what it knows: start one, follow it, read its findings. */
export function ClusterAnalyses({ organizationId, clusterId }: { organizationId: string; clusterId: string }) {
  const analyses = api.useQuery('get', '/clusters/{clusterId}/analysis', { params: { path: { clusterId } } }, { refetchInterval: (query) => (query.state.data?.results.some((analysis) => ACTIVE.has(analysis.status)) ? 1000 : false) });
  const [openId, setOpenId] = useState<string | undefined>();
  const shown = openId ?? analyses.data?.results[0]?.id;
  return (
    <div className="cluster-tab">
      <StartAnalysis organizationId={organizationId} clusterId={clusterId} onStarted={setOpenId} />
      <ClusterCard id="cluster-analyses" title="Analyses" intro="The last 50, newest first.">
        {analyses.isPending ? <Spinner label="Loading the analyses…" /> : null}
        <ErrorMessage message={analyses.isError ? messageOf(analyses.error) : undefined} />
        {analyses.data?.results.length === 0 ? <p className="muted">No analysis yet.</p> : null}
        {analyses.data === undefined || analyses.data.results.length === 0 ? null : (
          <table className="table" aria-labelledby="cluster-analyses-heading">
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">By</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {analyses.data.results.map((analysis) => (
                <tr key={analysis.id} aria-current={analysis.id === shown ? 'true' : undefined}>
                  <th scope="row" data-label="Kind">
                    {KINDS.find((kind) => kind.value === analysis.kind)?.label ?? analysis.kind}
                  </th>
                  <td data-label="Status">
                    <StatusChip state={CHIP[analysis.status]} label={analysis.status.charAt(0) + analysis.status.slice(1).toLowerCase()} />
                  </td>
                  <td data-label="Started">
                    <RelativeTime at={analysis.created_at} />
                  </td>
                  <td data-label="By">{analysis.triggered_by}</td>
                  <td>
                    <Button variant="secondary" onPress={() => setOpenId(analysis.id)} isDisabled={analysis.id === shown} aria-label={`Show the findings of the analysis started ${new Date(analysis.created_at).toLocaleString('en-GB')}`}>
                      Findings
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ClusterCard>
      {shown === undefined ? null : <AnalysisFindings key={shown} clusterId={clusterId} analysisId={shown} />}
    </div>
  );
}

function StartAnalysis({ organizationId, clusterId, onStarted }: { organizationId: string; clusterId: string; onStarted: (id: string) => void }) {
  const [kind, setKind] = useState<Kind>('DEPRECATED_API_CHECK');
  const [format, setFormat] = useState<Format>('TABLE');
  const [target, setTarget] = useState('');
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const queryClient = useQueryClient();
  const start = api.useMutation('post', '/clusters/{clusterId}/analysis', {
    onSuccess: async (analysis) => {
      onStarted(analysis.id);
      await queryClient.invalidateQueries({ queryKey: ['get', '/clusters/{clusterId}/analysis'] });
    },
  });
  const fields = fieldErrorsOf(start.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (start.isPending) return;
    start.mutate({ params: { path: { clusterId } }, body: { kind, output_format: format, ...(kind === 'DEPRECATED_API_CHECK' && target.trim() !== '' ? { target_kubernetes_version: target.trim() } : {}) } });
  }
  const readOnly = !permissions.can('write');
  return (
    <ClusterCard id="start-analysis" title="Analyse the cluster" intro="Checks the cluster’s state, agent, operator, tasks, workloads and certificates, then the kind’s own checks. One analysis runs at a time.">
      <PermissionNote id={noteId} reason={permissions.reason('write')} />
      <Form className="form" onSubmit={submit}>
        <SelectField id="analysis-kind" label="Kind" value={kind} onChange={(value) => (start.reset(), setKind(value))} options={KINDS} errorMessage={fields.get('kind')} />
        <SelectField id="analysis-format" label="Output" value={format} onChange={(value) => (start.reset(), setFormat(value))} options={FORMATS} errorMessage={fields.get('output_format')} />
        {kind === 'DEPRECATED_API_CHECK' ? <TextField label="Target Kubernetes version (optional)" value={target} onChange={(value) => (start.reset(), setTarget(value))} maxLength={16} placeholder="the next version Slipway deploys" errorMessage={fields.get('target_kubernetes_version')} /> : null}
        <SaveFoot label="Start the analysis" error={start.error} fieldCount={fields.size} saved={false} disabled={readOnly} noteId={readOnly ? noteId : undefined} />
      </Form>
    </ClusterCard>
  );
}

function AnalysisFindings({ clusterId, analysisId }: { clusterId: string; analysisId: string }) {
  const path = { params: { path: { clusterId, analysisId } } };
  const analysis = api.useQuery('get', '/clusters/{clusterId}/analysis/{analysisId}', path, { refetchInterval: (query) => (query.state.data !== undefined && ACTIVE.has(query.state.data.status) ? 1000 : false) });
  const done = analysis.data !== undefined && !ACTIVE.has(analysis.data.status);
  const logs = api.useQuery('get', '/clusters/{clusterId}/analysis/{analysisId}/logs', path, { enabled: done });
  return (
    <ClusterCard id="analysis-findings" title="Findings">
      {analysis.isPending || (done && logs.isPending) ? <Spinner label="Loading the findings…" /> : null}
      <ErrorMessage message={analysis.isError ? messageOf(analysis.error) : logs.isError ? messageOf(logs.error) : undefined} />
      {analysis.data === undefined ? null : (
        <p role="status">
          {KINDS.find((kind) => kind.value === analysis.data.kind)?.label}, {analysis.data.output_format.toLowerCase()}: {analysis.data.status.toLowerCase()}
          {analysis.data.error_message ? ` — ${analysis.data.error_message}` : '.'}
        </p>
      )}
      {logs.data === undefined ? null : (
        <pre className="code-block analysis-output" tabIndex={0} aria-label="Analysis output">
          {logs.data.results.map((line) => line.message).join('\n')}
        </pre>
      )}
    </ClusterCard>
  );
}
