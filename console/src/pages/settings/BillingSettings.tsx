import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryOf, type components } from '../../api/client.ts';
import { Button, ErrorMessage, SelectField, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { CreditCardsCard, DownloadAllInvoices, InvoiceDialog, UsageReportCard } from './BillingPayments.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type BillingInfo = Record<'first_name' | 'last_name' | 'email' | 'address' | 'city' | 'zip' | 'state' | 'country_code' | 'company' | 'vat_number', string | null>;
type Invoice = components['schemas']['Invoice'];

const PLANS = [
  { value: 'COMMUNITY', label: 'Community: free, 5.00 of usage a month' },
  { value: 'STARTUP', label: 'Startup: 49.00 a month, invoiced, self-managed clusters' },
  { value: 'TEAM', label: 'Team' },
  { value: 'BUSINESS', label: 'Business' },
  { value: 'ENTERPRISE', label: 'Enterprise' },
] as const;

/** The API answers some plans by the reference's name for them (STARTUP as PROFESSIONAL, COMMUNITY as FREE). */
const ALIASES: Record<string, string> = { FREE: 'COMMUNITY', PROFESSIONAL: 'STARTUP' };
function canonicalPlan(plan: string): string {
  return ALIASES[plan] ?? plan;
}
function planName(plan: string): string {
  const canonical = canonicalPlan(plan);
  return canonical.charAt(0) + canonical.slice(1).toLowerCase().replaceAll('_', ' ');
}

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * Billing: plan and its cost so far, billing status with its reason, plan change, credit codes, billing info, cards,
 * invoices (detail, PDF, all by mail) and the usage report.
 */
export function BillingSettings() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const cost = api.useQuery('get', '/organization/{organizationId}/currentCost', path);
  const status = api.useQuery('get', '/organization/{organizationId}/billingStatus', path);
  // The id billing systems know the organization by (for support, or matching payments by hand).
  const customer = api.useQuery('get', '/organization/{organizationId}/billingExternalId', path);
  return (
    <>
      <section aria-labelledby="plan-heading" className="card settings-card">
        <h2 id="plan-heading" className="card-title">
          Plan and cost
        </h2>
        {cost.isPending ? <Spinner label="Loading the plan…" /> : null}
        <ErrorMessage message={cost.isError ? messageOf(cost.error) : undefined} />
        {cost.data === undefined ? null : (
          <dl className="facts">
            <div>
              <dt>Plan</dt>
              <dd>
                <strong className="plan-name">{planName(cost.data.plan)}</strong>
                {cost.data.remaining_trial_day > 0 ? <span className="tag tag-inline">trial: {plural(cost.data.remaining_trial_day, 'day', 'days')} left</span> : null}
              </dd>
            </div>
            <div>
              <dt>This period so far</dt>
              <dd>{money(cost.data.cost.total, cost.data.cost.currency_code)}</dd>
            </div>
            <div>
              <dt>Renews</dt>
              <dd>{cost.data.renewal_at === null ? <span className="muted">not set</span> : new Date(cost.data.renewal_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' })}</dd>
            </div>
            <div>
              <dt>Billing status</dt>
              <dd>
                {status.data === undefined ? (
                  <span className="muted">{status.isError ? messageOf(status.error) : '…'}</span>
                ) : status.data.is_valid ? (
                  <StatusChip state="DEPLOYED" label="In good standing" />
                ) : (
                  <>
                    <StatusChip state="DEPLOYMENT_ERROR" label="Deployments blocked" />
                    <span className="kind-label">{status.data.message}</span>
                  </>
                )}
              </dd>
            </div>
            <div>
              <dt>Billing customer id</dt>
              <dd>
                {customer.data === undefined ? (
                  <span className="muted">{customer.isError ? messageOf(customer.error) : '…'}</span>
                ) : (
                  <span>
                    <code>{customer.data.id}</code> <CopyButton value={customer.data.id} label="Copy the billing customer id" />
                  </span>
                )}
              </dd>
            </div>
          </dl>
        )}
        {cost.data === undefined ? null : <ChangePlanForm organizationId={organizationId} current={cost.data.plan} />}
      </section>
      <CreditCodeCard organizationId={organizationId} />
      <BillingInfoCard organizationId={organizationId} />
      <CreditCardsCard organizationId={organizationId} />
      <InvoicesCard organizationId={organizationId} />
      <UsageReportCard organizationId={organizationId} />
    </>
  );
}

function useRefreshBilling() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all(
      ['/organization/{organizationId}/currentCost', '/organization/{organizationId}/billingStatus', '/organization/{organizationId}', '/organization/{organizationId}/invoice'].map((key) =>
        queryClient.invalidateQueries({ queryKey: ['get', key] }),
      ),
    );
}

function ChangePlanForm({ organizationId, current }: { organizationId: string; current: string }) {
  const currentPlan = canonicalPlan(current);
  const [plan, setPlan] = useState<string>(PLANS.some((entry) => entry.value === currentPlan) ? currentPlan : 'COMMUNITY');
  const [done, setDone] = useState<string | undefined>();
  const refresh = useRefreshBilling();
  const change = api.useMutation('post', '/organization/{organizationId}/changePlan', {
    onSuccess: async (_organization, request) => {
      await refresh();
      // The answer's `plan` is the reference's name for it (STARTUP answers as PROFESSIONAL): say the one chosen.
      setDone(`The plan is now ${(PLANS.find((entry) => entry.value === request.body?.plan)?.label ?? '').split(':')[0]}.`);
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!change.isPending) change.mutate({ params: { path: { organizationId } }, body: { plan } });
  }
  return (
    <Form onSubmit={submit} className="form inline-form">
      <SelectField id="billing-plan" label="Change plan" value={plan} onChange={(value) => (change.reset(), setDone(undefined), setPlan(value))} options={PLANS} />
      <div className="form-actions form-actions-start">
        <Button type="submit" variant="secondary" isDisabled={plan === currentPlan}>
          Change plan
        </Button>
        <span role="status" className="saved-note">
          {done ?? ''}
        </span>
      </div>
      <ErrorMessage message={change.isError ? messageOf(change.error) : undefined} />
    </Form>
  );
}

function CreditCodeCard({ organizationId }: { organizationId: string }) {
  const [code, setCode] = useState('');
  const [done, setDone] = useState(false);
  const refresh = useRefreshBilling();
  const redeem = api.useMutation('post', '/organization/{organizationId}/creditCode', {
    onSuccess: async () => {
      setCode('');
      setDone(true);
      await refresh();
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!redeem.isPending && code.trim() !== '') redeem.mutate({ params: { path: { organizationId } }, body: { code: code.trim() } });
  }
  return (
    <section aria-labelledby="credit-heading" className="card settings-card">
      <h2 id="credit-heading" className="card-title">
        Credit code
      </h2>
      <Form onSubmit={submit} className="form">
        <TextField label="Code" value={code} onChange={(value) => (redeem.reset(), setDone(false), setCode(value))} isRequired maxLength={128} description="A code from your installation’s operator adds credit to this organization, once." />
        <ErrorMessage message={redeem.isError ? summaryOf(redeem.error) : undefined} />
        <div className="form-actions form-actions-start">
          <Button type="submit" variant="secondary">
            Redeem
          </Button>
          <span role="status" className="saved-note">
            {done ? 'Credit added.' : ''}
          </span>
        </div>
      </Form>
    </section>
  );
}

const INFO_FIELDS: readonly { key: keyof BillingInfo; label: string; required: boolean; max: number; autoComplete?: string }[] = [
  { key: 'first_name', label: 'First name', required: true, max: 255, autoComplete: 'given-name' },
  { key: 'last_name', label: 'Last name', required: true, max: 255, autoComplete: 'family-name' },
  { key: 'email', label: 'Invoice e-mail', required: true, max: 320, autoComplete: 'email' },
  { key: 'company', label: 'Company (optional)', required: false, max: 255, autoComplete: 'organization' },
  { key: 'address', label: 'Address', required: true, max: 500, autoComplete: 'street-address' },
  { key: 'city', label: 'City', required: true, max: 255, autoComplete: 'address-level2' },
  { key: 'zip', label: 'Postcode', required: true, max: 20, autoComplete: 'postal-code' },
  { key: 'state', label: 'State or region (optional)', required: false, max: 255, autoComplete: 'address-level1' },
  { key: 'country_code', label: 'Country code', required: true, max: 2, autoComplete: 'country' },
  { key: 'vat_number', label: 'VAT number (optional)', required: false, max: 64 },
];

function BillingInfoCard({ organizationId }: { organizationId: string }) {
  const info = api.useQuery('get', '/organization/{organizationId}/billingInfo', { params: { path: { organizationId } } });
  return (
    <section aria-labelledby="billing-info-heading" className="card settings-card">
      <h2 id="billing-info-heading" className="card-title">
        Billing information
      </h2>
      {info.isPending ? <Spinner label="Loading the billing information…" /> : null}
      <ErrorMessage message={info.isError ? messageOf(info.error) : undefined} />
      {info.data === undefined ? null : <BillingInfoForm organizationId={organizationId} info={info.data} />}
    </section>
  );
}

function BillingInfoForm({ organizationId, info }: { organizationId: string; info: BillingInfo }) {
  const [draft, setDraft] = useState<Record<string, string>>(() => Object.fromEntries(INFO_FIELDS.map((field) => [field.key, info[field.key] ?? ''])));
  const [saved, setSaved] = useState(false);
  const queryClient = useQueryClient();
  const save = api.useMutation('put', '/organization/{organizationId}/billingInfo', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/billingInfo'] });
      setSaved(true);
    },
  });
  const fields = fieldErrorsOf(save.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    const value = (key: string) => (draft[key] ?? '').trim();
    save.mutate({
      params: { path: { organizationId } },
      body: {
        first_name: value('first_name'),
        last_name: value('last_name'),
        email: value('email'),
        address: value('address'),
        city: value('city'),
        zip: value('zip'),
        country_code: value('country_code').toUpperCase(),
        ...(value('state') === '' ? {} : { state: value('state') }),
        ...(value('company') === '' ? {} : { company: value('company') }),
        ...(value('vat_number') === '' ? {} : { vat_number: value('vat_number') }),
      },
    });
  }
  return (
    <Form onSubmit={submit} className="form">
      <div className="field-grid">
        {INFO_FIELDS.map((field) => (
          <TextField
            key={field.key}
            label={field.label}
            value={draft[field.key] ?? ''}
            onChange={(next) => (save.reset(), setSaved(false), setDraft((current) => ({ ...current, [field.key]: next })))}
            isRequired={field.required}
            maxLength={field.max}
            autoComplete={field.autoComplete}
            errorMessage={fields.get(field.key)}
          />
        ))}
      </div>
      <ErrorMessage message={save.isError ? summaryOf(save.error) : undefined} />
      <div className="form-actions form-actions-start">
        <Button type="submit">Save billing information</Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </Form>
  );
}

function InvoicesCard({ organizationId }: { organizationId: string }) {
  const invoices = api.useQuery('get', '/organization/{organizationId}/invoice', { params: { path: { organizationId } } });
  const [downloadError, setDownloadError] = useState<{ id: string; message: string } | undefined>();
  const [shown, setShown] = useState<string | undefined>();
  const list = invoices.data?.results ?? [];
  /** The API answers a signed link valid for an hour; the browser downloads the PDF from it. */
  async function download(invoice: Invoice) {
    setDownloadError(undefined);
    try {
      const { url } = await apiRequest<{ url: string }>('GET', `/organization/${organizationId}/invoice/${invoice.id}/download`);
      const link = document.createElement('a');
      link.href = url;
      link.download = `invoice-${invoice.period}.pdf`;
      document.body.append(link);
      link.click();
      link.remove();
    } catch (error) {
      setDownloadError({ id: invoice.id, message: messageOf(error) });
    }
  }
  return (
    <section aria-labelledby="invoices-heading" className="section settings-card">
      <div className="section-heading">
        <h2 id="invoices-heading" className="section-title">
          Invoices
        </h2>
        {list.length === 0 ? null : <DownloadAllInvoices organizationId={organizationId} />}
      </div>
      {invoices.isPending ? <Spinner label="Loading invoices…" /> : null}
      <ErrorMessage message={invoices.isError ? messageOf(invoices.error) : undefined} />
      {invoices.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3>No invoices yet</h3>
          <p className="muted">An invoice is made after each month, for the month that ended.</p>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table" aria-labelledby="invoices-heading">
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">Total</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="visually-hidden">Download</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((invoice) => (
              <tr key={invoice.id}>
                <th scope="row">
                  {invoice.period}
                  {downloadError?.id === invoice.id ? <ErrorMessage message={downloadError.message} /> : null}
                </th>
                <td data-label="Total">{money(invoice.total, invoice.currency_code)}</td>
                <td data-label="Status">
                  {invoice.status === 'PAID' ? <StatusChip state="DEPLOYED" label="Paid" /> : <StatusChip state="QUEUED" label={invoice.status.charAt(0) + invoice.status.slice(1).toLowerCase().replaceAll('_', ' ')} />}
                  {invoice.paid_at === null ? null : <span className="kind-label">{new Date(invoice.paid_at).toLocaleDateString('en-GB')}</span>}
                </td>
                <td className="actions-cell">
                  <div className="row-actions">
                    <Button variant="secondary" onPress={() => setShown(invoice.id)}>
                      Details<span className="visually-hidden"> of {invoice.period}</span>
                    </Button>
                    <Button variant="secondary" onPress={() => void download(invoice)}>
                      Download PDF<span className="visually-hidden"> of {invoice.period}</span>
                    </Button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown === undefined ? null : <InvoiceDialog organizationId={organizationId} invoiceId={shown} money={money} onClose={() => setShown(undefined)} />}
    </section>
  );
}
