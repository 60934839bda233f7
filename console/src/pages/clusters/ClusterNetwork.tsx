import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, type components, type paths } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, CheckboxField, ErrorMessage, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { ClusterCard, SaveFoot } from './ClusterCard.tsx';
import { providerLabel } from './cluster-labels.ts';

type Cluster = components['schemas']['Cluster'];
interface Route {
  destination: string;
  target: string;
  description: string;
}

/** What the cluster's network and provider are bound to: its routing table, its DNS provider, its cloud credentials. */
export function ClusterNetwork({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const readOnly = !permissions.can('write');
  const props = { organizationId, cluster, readOnly, noteId: readOnly ? noteId : undefined };
  return (
    <div className="cluster-tab">
      <PermissionNote id={noteId} reason={permissions.reason('write')} />
      <RoutingTable {...props} />
      <DnsProvider {...props} />
      <CloudProviderBinding {...props} />
    </div>
  );
}

interface SectionProps {
  organizationId: string;
  cluster: Cluster;
  readOnly: boolean;
  noteId: string | undefined;
}

function RoutingTable({ organizationId, cluster, readOnly, noteId }: SectionProps) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const table = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/routingTable', path);
  return (
    <ClusterCard id="routing-table" title="Routing table" intro="The routes of the cluster’s VPC, kept for whatever provisions it: Slipway records them and does not create cloud networks.">
      {table.isPending ? <Spinner label="Loading the routing table…" /> : null}
      <ErrorMessage message={table.isError ? messageOf(table.error) : undefined} />
      {table.data === undefined ? null : <RoutingTableForm key={JSON.stringify(table.data.results)} organizationId={organizationId} cluster={cluster} stored={table.data.results} readOnly={readOnly} noteId={noteId} />}
    </ClusterCard>
  );
}

function RoutingTableForm({ organizationId, cluster, stored, readOnly, noteId }: SectionProps & { stored: readonly Route[] }) {
  const [routes, setRoutes] = useState<Route[]>(() => stored.map((route) => ({ ...route })));
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/organization/{organizationId}/cluster/{clusterId}/routingTable', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/routingTable'] }),
  });
  const fields = fieldErrorsOf(edit.error);
  function update(index: number, change: Partial<Route>) {
    edit.reset();
    setRoutes((previous) => previous.map((route, position) => (position === index ? { ...route, ...change } : route)));
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!edit.isPending) edit.mutate({ params: { path: { organizationId, clusterId: cluster.id } }, body: { routes: routes.map((route) => ({ destination: route.destination.trim(), target: route.target.trim(), description: route.description.trim() })) } });
  }
  return (
    <Form className="form" onSubmit={submit}>
      {routes.length === 0 ? <p className="muted">No routes.</p> : null}
      {routes.map((route, index) => (
        <fieldset key={index} className="fieldset route-row">
          <legend>Route {index + 1}</legend>
          <TextField label="Destination (CIDR)" value={route.destination} onChange={(destination) => update(index, { destination })} isRequired maxLength={64} placeholder="10.0.0.0/16" errorMessage={fields.get(`routes/${index}/destination`)} />
          <TextField label="Target" value={route.target} onChange={(target) => update(index, { target })} isRequired maxLength={64} placeholder="local, igw-…, nat-… or an address" errorMessage={fields.get(`routes/${index}/target`)} />
          <TextField label="Description" value={route.description} onChange={(description) => update(index, { description })} maxLength={255} errorMessage={fields.get(`routes/${index}/description`)} />
          <div>
            <Button variant="quiet-danger" onPress={() => (edit.reset(), setRoutes((previous) => previous.filter((_, position) => position !== index)))} aria-label={`Remove route ${index + 1}`}>
              Remove
            </Button>
          </div>
        </fieldset>
      ))}
      <div>
        <Button variant="secondary" onPress={() => (edit.reset(), setRoutes((previous) => [...previous, { destination: '', target: '', description: '' }]))} isDisabled={routes.length >= 100}>
          Add a route
        </Button>
      </div>
      <SaveFoot label="Save the routing table" error={edit.error} fieldCount={fields.size} saved={edit.isSuccess} disabled={readOnly} noteId={noteId} />
    </Form>
  );
}

type DnsKind = 'PLATFORM' | 'CLOUDFLARE' | 'ROUTE53';
const DNS_KINDS: readonly { value: DnsKind; label: string }[] = [
  { value: 'PLATFORM', label: 'Slipway’s apps domain' },
  { value: 'CLOUDFLARE', label: 'Cloudflare' },
  { value: 'ROUTE53', label: 'Amazon Route 53' },
];

function DnsProvider({ cluster, readOnly, noteId }: SectionProps) {
  const dns = api.useQuery('get', '/cluster/{clusterId}/dnsProvider', { params: { path: { clusterId: cluster.id } } });
  return (
    <ClusterCard id="dns-provider" title="DNS provider" intro="Where the records of the cluster’s public domains are written. Secrets are kept sealed and never shown again.">
      {dns.isPending ? <Spinner label="Loading the DNS provider…" /> : null}
      <ErrorMessage message={dns.isError ? messageOf(dns.error) : undefined} />
      {dns.data === undefined ? null : <DnsProviderForm key={JSON.stringify(dns.data)} cluster={cluster} stored={dns.data.dns_provider} readOnly={readOnly} noteId={noteId} />}
    </ClusterCard>
  );
}

type StoredDns = paths['/cluster/{clusterId}/dnsProvider']['get']['responses'][200]['content']['application/json']['dns_provider'];

function DnsProviderForm({ cluster, stored, readOnly, noteId }: { cluster: Cluster; stored: StoredDns; readOnly: boolean; noteId: string | undefined }) {
  const [kind, setKind] = useState<DnsKind>(stored.provider);
  const [domain, setDomain] = useState(stored.domain);
  const [email, setEmail] = useState('email' in stored ? stored.email : '');
  const [proxied, setProxied] = useState('proxied' in stored ? stored.proxied === true : false);
  const [apiToken, setApiToken] = useState('');
  const [accessKeyId, setAccessKeyId] = useState('credentials' in stored ? stored.credentials.aws_access_key_id : '');
  const [secretAccessKey, setSecretAccessKey] = useState('');
  const [region, setRegion] = useState('aws_region' in stored ? stored.aws_region : '');
  const [hostedZone, setHostedZone] = useState('hosted_zone_id' in stored ? (stored.hosted_zone_id ?? '') : '');
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/cluster/{clusterId}/dnsProvider', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/cluster/{clusterId}/dnsProvider'] }),
  });
  const fields = fieldErrorsOf(edit.error);
  const at = (field: string) => fields.get(`dns_provider/${field}`);
  const change =
    <T,>(set: (value: T) => void) =>
    (value: T) => (edit.reset(), set(value));
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    const name = domain.trim();
    const dnsProvider =
      kind === 'PLATFORM'
        ? { provider: kind, domain: name }
        : kind === 'CLOUDFLARE'
          ? { provider: kind, domain: name, email: email.trim(), api_token: apiToken, proxied }
          : { provider: kind, domain: name, credentials: { type: 'STATIC' as const, aws_access_key_id: accessKeyId.trim(), aws_secret_access_key: secretAccessKey }, aws_region: region.trim(), hosted_zone_id: hostedZone.trim() === '' ? null : hostedZone.trim() };
    edit.mutate({ params: { path: { clusterId: cluster.id } }, body: { dns_provider: dnsProvider } });
  }
  return (
    <Form className="form" onSubmit={submit}>
      <SelectField id="dns-provider-kind" label="Provider" value={kind} onChange={change(setKind)} options={DNS_KINDS} />
      <TextField label="Domain" value={domain} onChange={change(setDomain)} isRequired maxLength={253} errorMessage={at('domain')} />
      {kind === 'CLOUDFLARE' ? (
        <>
          <TextField label="Cloudflare account e-mail" value={email} onChange={change(setEmail)} isRequired maxLength={320} errorMessage={at('email')} />
          <TextField label="API token" type="password" value={apiToken} onChange={change(setApiToken)} isRequired maxLength={4096} errorMessage={at('api_token')} description="Needed on every save: the stored token is never shown." />
          <CheckboxField id="dns-proxied" label="Proxied through Cloudflare" checked={proxied} onChange={change(setProxied)} />
        </>
      ) : null}
      {kind === 'ROUTE53' ? (
        <>
          <TextField label="AWS access key id" value={accessKeyId} onChange={change(setAccessKeyId)} isRequired maxLength={128} errorMessage={at('credentials/aws_access_key_id')} />
          <TextField label="AWS secret access key" type="password" value={secretAccessKey} onChange={change(setSecretAccessKey)} isRequired maxLength={4096} errorMessage={at('credentials/aws_secret_access_key')} description="Needed on every save: the stored key is never shown." />
          <TextField label="AWS region" value={region} onChange={change(setRegion)} isRequired maxLength={32} placeholder="eu-west-3" errorMessage={at('aws_region')} />
          <TextField label="Hosted zone id (optional)" value={hostedZone} onChange={change(setHostedZone)} maxLength={64} errorMessage={at('hosted_zone_id')} />
        </>
      ) : null}
      <SaveFoot label="Save the DNS provider" error={edit.error} fieldCount={[...fields.keys()].filter((field) => field.startsWith('dns_provider/')).length} saved={edit.isSuccess} disabled={readOnly} noteId={noteId} />
    </Form>
  );
}

/** The credentials of the cluster's own provider, from that provider's list (the API binds no other). */
function useProviderCredentials(organizationId: string, provider: string) {
  const path = { params: { path: { organizationId } } };
  const aws = api.useQuery('get', '/organization/{organizationId}/aws/credentials', path, { enabled: provider === 'AWS' });
  const scaleway = api.useQuery('get', '/organization/{organizationId}/scaleway/credentials', path, { enabled: provider === 'SCW' });
  const gcp = api.useQuery('get', '/organization/{organizationId}/gcp/credentials', path, { enabled: provider === 'GCP' });
  const azure = api.useQuery('get', '/organization/{organizationId}/azure/credentials', path, { enabled: provider === 'AZURE' });
  const onPremise = api.useQuery('get', '/organization/{organizationId}/onPremise/credentials', path, { enabled: provider === 'ON_PREMISE' });
  const query = { AWS: aws, SCW: scaleway, GCP: gcp, AZURE: azure, ON_PREMISE: onPremise }[provider];
  return { credentials: (query?.data?.results ?? []) as readonly { id: string; name: string }[], error: query?.isError === true ? messageOf(query.error) : undefined, pending: query?.isPending === true };
}

/** The regions of the provider's catalog (none for ON_PREMISE, whose region is the operator's own name). */
function useProviderRegions(provider: string) {
  const aws = api.useQuery('get', '/aws/region', {}, { enabled: provider === 'AWS' });
  const scaleway = api.useQuery('get', '/scaleway/region', {}, { enabled: provider === 'SCW' });
  const gcp = api.useQuery('get', '/gcp/region', {}, { enabled: provider === 'GCP' });
  const azure = api.useQuery('get', '/azure/region', {}, { enabled: provider === 'AZURE' });
  const query = { AWS: aws, SCW: scaleway, GCP: gcp, AZURE: azure }[provider];
  return query?.data?.results;
}

function CloudProviderBinding({ organizationId, cluster, readOnly, noteId }: SectionProps) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const binding = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/cloudProviderInfo', path);
  const provider = binding.data?.cloud_provider ?? cluster.cloud_provider;
  const { credentials, error } = useProviderCredentials(organizationId, provider);
  const regions = useProviderRegions(provider);
  const [chosen, setChosen] = useState<string | undefined>();
  const [region, setRegion] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const specify = api.useMutation('post', '/organization/{organizationId}/cluster/{clusterId}/cloudProviderInfo', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/cloudProviderInfo'] }),
  });
  const fields = fieldErrorsOf(specify.error);
  const credentialId = chosen ?? binding.data?.credentials?.id ?? '';
  const regionValue = region ?? binding.data?.region ?? cluster.region;
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!specify.isPending) specify.mutate({ ...path, body: { cloud_provider: provider as components['schemas']['CloudVendorEnum'] & ('AWS' | 'SCW' | 'GCP' | 'ON_PREMISE' | 'AZURE'), credentials: { id: credentialId }, region: regionValue.trim() } });
  }
  return (
    <ClusterCard id="cloud-provider" title="Cloud provider binding" intro={`The ${providerLabel(provider)} credentials the cluster works with. Credentials a cluster is bound to cannot be deleted.`}>
      {binding.isPending ? <Spinner label="Loading the binding…" /> : null}
      <ErrorMessage message={binding.isError ? messageOf(binding.error) : error} />
      {binding.data === undefined ? null : (
        <Form className="form" onSubmit={submit}>
          <p>
            Bound to <strong>{binding.data.credentials?.name ?? 'no credentials'}</strong>
            {binding.data.region === undefined ? null : <> in {binding.data.region}</>}.
          </p>
          <SelectField
            id="cloud-provider-credentials"
            label="Credentials"
            value={credentialId}
            onChange={(id) => (specify.reset(), setChosen(id))}
            options={[{ value: '', label: credentials.length === 0 ? 'No credentials of this provider' : 'Choose credentials' }, ...credentials.map((credential) => ({ value: credential.id, label: credential.name }))]}
            errorMessage={fields.get('credentials/id') ?? fields.get('credentials')}
          />
          {regions === undefined ? (
            <TextField label="Region" value={regionValue} onChange={(value) => (specify.reset(), setRegion(value))} maxLength={64} errorMessage={fields.get('region')} />
          ) : (
            <SelectField
              id="cloud-provider-region"
              label="Region"
              value={regionValue}
              onChange={(value) => (specify.reset(), setRegion(value))}
              options={[...(regions.some((entry) => entry.name === regionValue) ? [] : [{ value: regionValue, label: regionValue }]), ...regions.map((entry) => ({ value: entry.name, label: `${entry.name} (${entry.city}, ${entry.country})` }))]}
              errorMessage={fields.get('region')}
            />
          )}
          <SaveFoot label="Bind these credentials" error={specify.error} fieldCount={fields.size} saved={specify.isSuccess} disabled={readOnly || credentialId === ''} noteId={noteId} />
        </Form>
      )}
    </ClusterCard>
  );
}
