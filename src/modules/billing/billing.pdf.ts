
/** What an invoice document shows: everything comes from the stored invoice row, so a re-render is the same document. */
export interface InvoiceDocument {
  invoiceId: string;
  organizationName: string;
  period: string;
  planName: string;
  issuedAt: string;
  status: string;
  currencyCode: string;
  lines: { description: string; amountCents: number }[];
  subtotalCents: number;
  allowanceCents: number;
  creditAppliedCents: number;
  totalCents: number;
  billTo: string[];
}

/** 12345 → "123.45": amounts are integer cents, formatted without floating point. */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const absolute = Math.abs(cents);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')}`;
}

/** Renders an invoice as a PDF (pdfkit, the standard Helvetica font; loaded with the first invoice, not at start). */
export async function renderInvoicePdf(invoice: InvoiceDocument): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const document = new PDFDocument({
    size: 'A4',
    margin: 56,
    info: {
      Title: `Invoice ${invoice.invoiceId}`,
      Author: 'Slipway',
      Subject: `Billing period ${invoice.period}`,
      CreationDate: new Date(invoice.issuedAt),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    document.on('data', (chunk: Buffer) => chunks.push(chunk));
    document.on('end', () => resolve(Buffer.concat(chunks)));
    document.on('error', reject);
  });

  const money = (cents: number) => `${formatCents(cents)} ${invoice.currencyCode}`;
  document.font('Helvetica-Bold').fontSize(20).text('Invoice');
  document.moveDown(0.5).font('Helvetica').fontSize(10);
  document.text(`Invoice number: ${invoice.invoiceId}`);
  document.text(`Issued: ${invoice.issuedAt.slice(0, 10)}`);
  document.text(`Billing period: ${invoice.period}`);
  document.text(`Organization: ${invoice.organizationName}`);
  document.text(`Plan: ${invoice.planName}`);
  document.text(`Status: ${invoice.status}`);
  if (invoice.billTo.length > 0) {
    document.moveDown().font('Helvetica-Bold').text('Bill to');
    document.font('Helvetica');
    for (const line of invoice.billTo) document.text(line);
  }
  document.moveDown().font('Helvetica-Bold').text('Items');
  document.font('Helvetica');
  for (const line of invoice.lines) document.text(`${line.description}: ${money(line.amountCents)}`);
  document.moveDown();
  document.text(`Subtotal: ${money(invoice.subtotalCents)}`);
  if (invoice.allowanceCents > 0) document.text(`Included usage: -${money(invoice.allowanceCents)}`);
  if (invoice.creditAppliedCents > 0) document.text(`Credits applied: -${money(invoice.creditAppliedCents)}`);
  document.moveDown(0.5).font('Helvetica-Bold').fontSize(12).text(`Total due: ${money(invoice.totalCents)}`);
  document.end();
  return done;
}

/** One CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180); formula starts neutralised. */
export function csvField(value: string | number): string {
  let text = String(value);
  // A spreadsheet would run a cell starting with these as a formula.
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvOf(header: string[], rows: (string | number)[][]): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}
