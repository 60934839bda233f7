import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { Button, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListTable } from '../../ui/ListSection.tsx';
import { cardDigitsOf, cardNumberProblem, groupedCardNumber } from './card-number.ts';
import { csvRows } from './usage-report.ts';

type CreditCard = components['schemas']['CreditCard'];

const MONTHS = Array.from({ length: 12 }, (_unused, index) => {
  const value = String(index + 1).padStart(2, '0');
  return { value, label: value };
});

function cardName(card: CreditCard): string {
  return `${card.brand} ending ${card.last_digit}`;
}

/**
 * The organization's cards. The API keeps only brand, last four digits and expiry; the console keeps nothing: the
 * number and CVC live in this form's state only while it is open (never in localStorage or sessionStorage, the
 * fields say `autocomplete="off"` so the browser does not offer to save them), and are cleared once the request
 * answered, whatever it answered.
 */
export function CreditCardsCard({ organizationId }: { organizationId: string }) {
  const cards = api.useQuery('get', '/organization/{organizationId}/creditCard', { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'add' } | { kind: 'delete'; card: CreditCard } | undefined>();
  const list = cards.data?.results ?? [];
  return (
    <section aria-labelledby="cards-heading" className="section settings-card">
      <div className="section-heading">
        <h2 id="cards-heading" className="section-title">
          Credit cards
        </h2>
        <Button onPress={() => setDialog({ kind: 'add' })}>Add a card</Button>
      </div>
      {cards.isPending ? <Spinner label="Loading cards…" /> : null}
      <ErrorMessage message={cards.isError ? messageOf(cards.error) : undefined} />
      {cards.isSuccess && list.length === 0 ? <p className="muted">No card yet. Slipway keeps only a card’s brand, last four digits and expiry.</p> : null}
      {list.length === 0 ? null : (
        <ListTable labelledBy="cards-heading" columns={['Card', 'Expires']}>
          {list.map((card) => (
            <tr key={card.id}>
              <th scope="row">
                {card.brand} <span className="card-digits">•••• {card.last_digit}</span>
              </th>
              <td data-label="Expires">
                {String(card.expiry_month).padStart(2, '0')}/{card.expiry_year}
                {card.is_expired ? <span className="tag tag-warning tag-inline">expired</span> : null}
              </td>
              <td className="actions-cell">
                <Button variant="quiet-danger" aria-label={`Delete ${cardName(card)}`} onPress={() => setDialog({ kind: 'delete', card })}>
                  Delete
                </Button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {dialog?.kind === 'add' ? <AddCardDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteCardDialog organizationId={organizationId} card={dialog.card} onClose={() => setDialog(undefined)} /> : null}
    </section>
  );
}

function AddCardDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const thisYear = new Date().getFullYear();
  const years = Array.from({ length: 16 }, (_unused, index) => ({ value: String(thisYear + index), label: String(thisYear + index) }));
  const [number, setNumber] = useState('');
  const [cvc, setCvc] = useState('');
  const [month, setMonth] = useState('01');
  const [year, setYear] = useState(String(thisYear + 1));
  const [checked, setChecked] = useState(false);
  const add = api.useMutation('post', '/organization/{organizationId}/creditCard', {
    ...useRefreshThenClose(['/organization/{organizationId}/creditCard'], onClose),
    onSettled: () => {
      setNumber('');
      setCvc('');
    },
  });
  const { fields, summary } = formErrorsOf(add);
  const problem = cardNumberProblem(number);
  function submit(event: FormEvent) {
    event.preventDefault();
    setChecked(true);
    const digits = cardDigitsOf(number);
    if (add.isPending || digits === undefined || problem !== undefined) return;
    add.mutate({ params: { path: { organizationId } }, body: { number: digits, cvv: cvc.trim(), expiry_month: Number(month), expiry_year: Number(year) } });
  }
  return (
    <ModalDialog title="Add a card" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form" autoComplete="off">
        <TextField
          label="Card number"
          value={number}
          onChange={(value) => (add.reset(), setNumber(groupedCardNumber(value)))}
          isRequired
          autoFocus
          inputMode="numeric"
          maxLength={23}
          errorMessage={(checked || cardDigitsOf(number) !== undefined ? problem : undefined) ?? fields.get('number')}
          description="Sent to the server once, never kept in this browser."
        />
        <div className="field-grid card-expiry">
          <SelectField id="card-month" label="Expiry month" value={month} onChange={(value) => (add.reset(), setMonth(value))} options={MONTHS} errorMessage={fields.get('expiry_month')} />
          <SelectField id="card-year" label="Expiry year" value={year} onChange={(value) => (add.reset(), setYear(value))} options={years} errorMessage={fields.get('expiry_year')} />
          <TextField label="CVC" value={cvc} onChange={(value) => (add.reset(), setCvc(value.replace(/\D/g, '')))} isRequired inputMode="numeric" maxLength={4} type="password" errorMessage={fields.get('cvv')} />
        </div>
        <FormActions error={summary} onCancel={onClose} submitLabel="Add card" />
      </Form>
    </ModalDialog>
  );
}

function DeleteCardDialog({ organizationId, card, onClose }: { organizationId: string; card: CreditCard; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/creditCard/{creditCardId}', useRefreshThenClose(['/organization/{organizationId}/creditCard'], onClose));
  return (
    <DeleteByNameDialog
      name={card.last_digit}
      explanation={`The ${cardName(card)} is no longer charged. Type its last four digits to confirm.`}
      confirmLabel="Delete card"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, creditCardId: card.id } } })}
      onClose={onClose}
    />
  );
}

/** One invoice's facts (the API serves no invoice lines: period, total, status and payment are what it has). */
export function InvoiceDialog({ organizationId, invoiceId, money, onClose }: { organizationId: string; invoiceId: string; money: (amount: number, currency: string) => string; onClose: () => void }) {
  const invoice = api.useQuery('get', '/organization/{organizationId}/invoice/{invoiceId}', { params: { path: { organizationId, invoiceId } } });
  const data = invoice.data;
  return (
    <ModalDialog title={data === undefined ? 'Invoice' : `Invoice for ${data.period}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <div className="form">
        {invoice.isPending ? <Spinner label="Loading the invoice…" /> : null}
        <ErrorMessage message={invoice.isError ? messageOf(invoice.error) : undefined} />
        {data === undefined ? null : (
          <dl className="facts">
            <div>
              <dt>Period</dt>
              <dd>{data.period}</dd>
            </div>
            <div>
              <dt>Total</dt>
              <dd>{money(data.total, data.currency_code)}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>{data.status.charAt(0) + data.status.slice(1).toLowerCase().replaceAll('_', ' ')}</dd>
            </div>
            <div>
              <dt>Issued</dt>
              <dd>{new Date(data.created_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' })}</dd>
            </div>
            <div>
              <dt>Paid</dt>
              <dd>{data.paid_at === null ? <span className="muted">not yet</span> : new Date(data.paid_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' })}</dd>
            </div>
            <div>
              <dt>Number</dt>
              <dd>
                <code data-volatile>{data.id}</code>
              </dd>
            </div>
          </dl>
        )}
        <div className="form-actions">
          <Button onPress={onClose}>Close</Button>
        </div>
      </div>
    </ModalDialog>
  );
}

/** "Email all invoices": the API mails every invoice as a PDF to the billing e-mail, in the background (202). */
export function DownloadAllInvoices({ organizationId }: { organizationId: string }) {
  const [done, setDone] = useState(false);
  const send = api.useMutation('post', '/organization/{organizationId}/downloadInvoices', { onSuccess: () => setDone(true) });
  return (
    <div className="download-all">
      <Button variant="secondary" onPress={() => (send.isPending ? undefined : (setDone(false), send.mutate({ params: { path: { organizationId } } })))}>
        Email all invoices
      </Button>
      <span role="status" className="saved-note">
        {done ? 'Sent: every invoice is on its way as a PDF to the billing e-mail (or the owner’s).' : ''}
      </span>
      <ErrorMessage message={send.isError ? messageOf(send.error) : undefined} />
    </div>
  );
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** A report lives on the server only as long as the person reads it here. */
const REPORT_LIFETIME_SECONDS = 600;

/**
 * The usage report: the API makes a CSV of metered usage for a date range at a signed link; the console reads that
 * link (rewritten to this origin, which the Content-Security-Policy allows) and shows the CSV as a table, with the
 * link to save the file.
 */
export function UsageReportCard({ organizationId }: { organizationId: string }) {
  const today = new Date();
  const [from, setFrom] = useState(isoDay(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))));
  const [to, setTo] = useState(isoDay(new Date(today.getTime() + 86_400_000)));
  const [report, setReport] = useState<{ rows: string[][]; href: string } | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const generate = api.useMutation('post', '/organization/{organizationId}/billingUsageReport', {
    onSuccess: async (answer) => {
      const link = new URL(answer.report_url, location.origin);
      const href = `${link.pathname}${link.search}`;
      try {
        const response = await fetch(href);
        if (!response.ok) throw new Error(`The report link answered ${response.status}.`);
        setReport({ rows: csvRows(await response.text()), href });
      } catch (error) {
        setLoadError(messageOf(error));
      }
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/currentCost'] });
    },
  });
  const { fields, summary } = formErrorsOf(generate);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (generate.isPending) return;
    setReport(undefined);
    setLoadError(undefined);
    generate.mutate({
      params: { path: { organizationId } },
      body: { from: new Date(`${from}T00:00:00Z`).toISOString(), to: new Date(`${to}T00:00:00Z`).toISOString(), report_expiration_in_seconds: REPORT_LIFETIME_SECONDS },
    });
  }
  const [header, ...rows] = report?.rows ?? [];
  return (
    <section aria-labelledby="usage-heading" className="card settings-card">
      <h2 id="usage-heading" className="card-title">
        Usage report
      </h2>
      <Form onSubmit={submit} className="form">
        <div className="field-grid">
          <DateField id="usage-from" label="From" value={from} onChange={(value) => (generate.reset(), setFrom(value))} errorMessage={fields.get('from')} />
          <DateField id="usage-to" label="To (not included)" value={to} onChange={(value) => (generate.reset(), setTo(value))} errorMessage={fields.get('to')} />
        </div>
        <ErrorMessage message={summary ?? loadError} />
        <div className="form-actions form-actions-start">
          <Button type="submit" variant="secondary">
            Show usage
          </Button>
          {report === undefined ? null : (
            <a className="button button-secondary" href={report.href} download="usage.csv">
              Download CSV
            </a>
          )}
        </div>
      </Form>
      {header === undefined ? null : rows.length === 0 ? (
        <p className="muted" role="status">
          No metered usage in this range.
        </p>
      ) : (
        <div className="table-scroll">
          <table className="table usage-table" aria-labelledby="usage-heading">
            <thead>
              <tr>
                {header.map((column) => (
                  <th key={column} scope="col">
                    {column.replaceAll('_', ' ')}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row, index) => (
                <tr key={index}>
                  {row.map((cell, column) => (
                    <td key={column} data-label={header[column]?.replaceAll('_', ' ')} data-volatile={header[column] === 'resource_id' || header[column] === 'from' || header[column] === 'to' ? true : undefined}>
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function DateField({ id, label, value, onChange, errorMessage }: { id: string; label: string; value: string; onChange: (value: string) => void; errorMessage: string | undefined }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="date"
        value={value}
        required
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={errorMessage === undefined ? undefined : true}
        aria-describedby={errorMessage === undefined ? undefined : `${id}-error`}
      />
      {errorMessage === undefined ? null : (
        <span id={`${id}-error`} className="field-error">
          {errorMessage}
        </span>
      )}
    </div>
  );
}
