import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { apiRequest, messageOf, type components } from '../../api/client.ts';
import { Button, CheckboxField, ErrorMessage, ModalDialog, RelativeTime, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, formErrorsOf } from '../../ui/dialogs.tsx';
import type { ServiceContext } from '../ServicePage.tsx';
import { DomainsCheck } from './DomainsCheck.tsx';

type CustomDomain = components['schemas']['CustomDomain'];

const CHECK_WORDS: Record<string, string> = {
  MATCHES_LOAD_BALANCER_HOST: 'the CNAME points at the service',
  RESOLVES_TO_IP: 'resolves to addresses (the TXT record proves it is yours)',
  DOMAIN_NOT_CONFIGURED: 'no DNS record found',
  DOMAIN_LINKED_TO_WRONG_HOST: 'points somewhere else',
  GENERIC_FAILURE: 'the check failed',
};

const STATUS_WORDS: Record<CustomDomain['status'], { label: string; state: string }> = {
  VALIDATED: { label: 'Verified', state: 'DEPLOYED' },
  VALIDATION_PENDING: { label: 'Waiting for DNS', state: 'QUEUED' },
  VALIDATION_FAILED: { label: 'Not verified', state: 'DEPLOYMENT_ERROR' },
};

/**
 * A service's custom domains (application, container): each with the DNS records to create (a CNAME to the service's
 * own host name, or for an apex domain A/AAAA records plus the TXT verification record), its verification state as
 * last checked, its certificate's state; "Check now" asks the API to look in DNS again; add, edit, delete.
 */
export function ServiceDomains({ context }: { context: ServiceContext }) {
  const key = ['custom-domains', context.base];
  const domains = useQuery({ queryKey: key, queryFn: () => apiRequest<{ results: CustomDomain[] }>('GET', `${context.base}/customDomain`) });
  const queryClient = useQueryClient();
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<CustomDomain | undefined>();
  const [editing, setEditing] = useState<CustomDomain | undefined>();
  const [rowError, setRowError] = useState<{ id: string; message: string } | undefined>();
  const [checking, setChecking] = useState<string | undefined>();
  async function check(domain: CustomDomain) {
    if (checking !== undefined) return;
    setChecking(domain.id);
    setRowError(undefined);
    try {
      await apiRequest('GET', `${context.base}/customDomain/${domain.id}/status`);
    } catch (error) {
      setRowError({ id: domain.id, message: messageOf(error) });
    } finally {
      setChecking(undefined);
      await queryClient.invalidateQueries({ queryKey: key });
    }
  }
  const list = domains.data?.results ?? [];
  return (
    <section aria-labelledby="domains-heading" className="section">
      <div className="section-heading with-actions">
        <h2 id="domains-heading">Custom domains</h2>
        {list.length === 0 ? null : <Button onPress={() => setAdding(true)}>Add domain</Button>}
      </div>
      {list.length === 0 ? null : <DomainsCheck context={context} queryKey={key} />}
      {domains.isPending ? <Spinner label="Loading the custom domains…" /> : null}
      <ErrorMessage message={domains.isError ? messageOf(domains.error) : undefined} />
      {domains.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3 className="card-title">No custom domains yet</h3>
          <p className="muted">Serve the service at your own domain: add it, create the DNS record shown, and Slipway verifies it and issues its certificate. The service needs a public port.</p>
          <Button onPress={() => setAdding(true)}>Add domain</Button>
        </div>
      ) : null}
      {list.map((domain) => {
        const words = STATUS_WORDS[domain.status];
        return (
          <article key={domain.id} className="card domain-card" aria-labelledby={`domain-${domain.id}`}>
            <div className="with-actions">
              <h3 id={`domain-${domain.id}`} className="card-title">
                {domain.domain}
              </h3>
              <div className="status-cell">
                <StatusChip state={words.state} label={words.label} />
              </div>
            </div>
            <table className="table dns-records" aria-label={`DNS records for ${domain.domain}`}>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <td data-label="Type">CNAME</td>
                  <td data-label="Name">
                    <code>{domain.domain}</code>
                  </td>
                  <td data-label="Value">
                    <code>{domain.validation_domain}</code>
                  </td>
                </tr>
                <tr>
                  <td data-label="Type">{domain.verification_record.type}</td>
                  <td data-label="Name">
                    <code>{domain.verification_record.name}</code>
                  </td>
                  <td data-label="Value">
                    <code className="break-anywhere">{domain.verification_record.value}</code>
                  </td>
                </tr>
              </tbody>
            </table>
            <p className="muted">A sub-domain needs the CNAME; an apex domain (which cannot hold a CNAME) needs A/AAAA records at the service’s addresses and the TXT record.</p>
            <dl className="facts">
              <div>
                <dt>Last check</dt>
                <dd>
                  {domain.last_check === null ? (
                    <span className="muted">not checked yet</span>
                  ) : (
                    <>
                      {CHECK_WORDS[domain.last_check.status] ?? domain.last_check.status} <RelativeTime at={domain.last_check.checked_at} />
                      {domain.last_check.details ? <span className="kind-label">{domain.last_check.details}</span> : null}
                    </>
                  )}
                </dd>
              </div>
              <div>
                <dt>Certificate</dt>
                <dd>
                  {!domain.generate_certificate ? (
                    <span className="muted">not generated by Slipway</span>
                  ) : domain.certificate_status === null ? (
                    <span className="muted">after verification</span>
                  ) : domain.certificate_status === 'ISSUED' ? (
                    <>Issued{domain.certificate_expires_at === null ? '' : `, until ${new Date(domain.certificate_expires_at).toLocaleDateString('en-GB')}`}</>
                  ) : domain.certificate_status === 'ERROR' ? (
                    <span className="error-text">Error: {domain.certificate_error ?? 'unknown'}</span>
                  ) : (
                    'Pending'
                  )}
                </dd>
              </div>
            </dl>
            <div className="form-actions form-actions-start">
              <Button variant="secondary" onPress={() => void check(domain)} aria-label={`Check ${domain.domain} now`}>
                {checking === domain.id ? 'Checking…' : 'Check now'}
              </Button>
              <Button variant="secondary" onPress={() => setEditing(domain)} aria-label={`Edit ${domain.domain}…`}>
                Edit…
              </Button>
              <Button variant="danger" onPress={() => setDeleting(domain)} aria-label={`Delete ${domain.domain}…`}>
                Delete…
              </Button>
            </div>
            <ErrorMessage message={rowError?.id === domain.id ? rowError.message : undefined} />
          </article>
        );
      })}
      {adding ? <DomainDialog context={context} queryKey={key} onClose={() => setAdding(false)} /> : null}
      {editing === undefined ? null : <DomainDialog context={context} queryKey={key} editing={editing} onClose={() => setEditing(undefined)} />}
      {deleting === undefined ? null : <DeleteDomainDialog context={context} queryKey={key} domain={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

/**
 * Add a domain, or edit one (`editing`): the API replaces it whole, and a changed name starts over, waiting for DNS
 * with a new verification record (said in the dialog).
 */
function DomainDialog({ context, queryKey, editing, onClose }: { context: ServiceContext; queryKey: string[]; editing?: CustomDomain; onClose: () => void }) {
  const [domain, setDomain] = useState(editing?.domain ?? '');
  const [certificate, setCertificate] = useState(editing?.generate_certificate ?? true);
  const queryClient = useQueryClient();
  const [state, setState] = useState<{ isPending: boolean; isError: boolean; error: unknown }>({ isPending: false, isError: false, error: undefined });
  const { fields, summary } = formErrorsOf(state);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (state.isPending) return;
    setState({ isPending: true, isError: false, error: undefined });
    try {
      const body = { domain: domain.trim(), generate_certificate: certificate };
      if (editing === undefined) await apiRequest('POST', `${context.base}/customDomain`, body);
      else await apiRequest('PUT', `${context.base}/customDomain/${editing.id}`, body);
      await queryClient.invalidateQueries({ queryKey });
      onClose();
    } catch (error) {
      setState({ isPending: false, isError: true, error });
    }
  }
  return (
    <ModalDialog title={editing === undefined ? 'Add a custom domain' : `Edit ${editing.domain}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={(event) => void submit(event)} className="form">
        {editing === undefined ? null : <p className="muted">A new name is verified again: its DNS records change, the old ones stop counting.</p>}
        <TextField
          label="Domain"
          value={domain}
          onChange={(value) => (setState({ isPending: false, isError: false, error: undefined }), setDomain(value))}
          isRequired
          autoFocus
          maxLength={255}
          description="A host name such as app.example.com."
          errorMessage={fields.get('domain')}
        />
        <CheckboxField id="domain-certificate" label="Issue a TLS certificate" checked={certificate} onChange={setCertificate} description="Once the domain is verified, Slipway requests its certificate." />
        <div className="form-foot">
          <ErrorMessage message={summary} />
          <div className="form-actions">
            <Button variant="secondary" onPress={onClose}>
              Cancel
            </Button>
            <Button type="submit">{editing === undefined ? 'Add domain' : 'Save domain'}</Button>
          </div>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteDomainDialog({ context, queryKey, domain, onClose }: { context: ServiceContext; queryKey: string[]; domain: CustomDomain; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<{ isPending: boolean; isError: boolean; error: unknown }>({ isPending: false, isError: false, error: undefined });
  async function remove() {
    setState({ isPending: true, isError: false, error: undefined });
    try {
      await apiRequest('DELETE', `${context.base}/customDomain/${domain.id}`);
      await queryClient.invalidateQueries({ queryKey });
      onClose();
    } catch (error) {
      setState({ isPending: false, isError: true, error });
    }
  }
  return (
    <DeleteByNameDialog
      name={domain.domain}
      explanation="The domain stops being routed to the service and its certificate stops being served."
      confirmLabel="Delete domain"
      mutation={state}
      onConfirm={() => void remove()}
      onClose={onClose}
    />
  );
}
