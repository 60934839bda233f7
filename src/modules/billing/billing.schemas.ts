import { Type } from 'typebox';
import { ListOf, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/** Wire shapes of the reference's billing schemas (platform-openapi-subset.yaml); Slipway's additions are marked. */

/** An address line: one line of printable text, not blank (the pattern of http/schema.ts's Name, longer). */
const NAME_PATTERN = '^[^\\S\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$';
const Line = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: NAME_PATTERN });
const OptionalLine = (maxLength: number) => Type.Optional(Type.String({ maxLength, pattern: '^[^\\x00-\\x1f\\x7f]*$' }));

const Cost = {
  total_in_cents: Type.Integer(),
  total: Type.Number(),
  currency_code: Type.String(),
};

export const OrganizationCurrentCost = Type.Object(
  {
    plan: Type.String(),
    remaining_trial_day: Type.Integer(),
    renewal_at: Nullable(Timestamp),
    cost: Type.Object(Cost),
  },
  {
    $id: 'OrganizationCurrentCost',
    examples: [
      {
        plan: 'PROFESSIONAL',
        remaining_trial_day: 0,
        renewal_at: '2026-04-01T00:00:00.000Z',
        cost: { total_in_cents: 6173, total: 61.73, currency_code: 'USD' },
      },
    ],
  },
);

/** SPEC.md: a range; no exact cost is given, so the reference's total fields are left out. */
export const CostRange = Type.Object(
  {
    min_cost_in_cents: Type.Integer(),
    min_cost: Type.Number(),
    max_cost_in_cents: Type.Integer(),
    max_cost: Type.Number(),
    currency_code: Type.String(),
  },
  { $id: 'CostRange' },
);

export const INVOICE_STATUSES = ['NOT_PAID', 'PAID', 'PAYMENT_DUE', 'PENDING', 'POSTED', 'UNKNOWN', 'VOIDED'] as const;
export type InvoiceStatusName = (typeof INVOICE_STATUSES)[number];
export const InvoiceStatus = Type.Enum(INVOICE_STATUSES, { $id: 'InvoiceStatusEnum' });

export const Invoice = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    status: InvoiceStatus,
    ...Cost,
    /** Slipway: the billing month (YYYY-MM) and when the invoice was paid. */
    period: Type.String(),
    paid_at: Nullable(Timestamp),
  },
  { $id: 'Invoice' },
);
export const InvoiceResponseList = ListOf(Invoice, 'InvoiceResponseList');

/** Of the reference's Link only `url` means something for a file; `expires_at` (Slipway) says until when it works. */
export const InvoiceLink = Type.Object({ url: Type.String(), expires_at: Timestamp }, { $id: 'InvoiceLink' });

export const CreditCard = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    expiry_month: Type.Integer(),
    expiry_year: Type.Integer(),
    last_digit: Type.String(),
    is_expired: Type.Boolean(),
    brand: Type.String(),
  },
  { $id: 'CreditCard' },
);
export const CreditCardResponseList = ListOf(CreditCard, 'CreditCardResponseList');

/** Checked in the service (Luhn, network, cvv length, expiry) so every problem is named in one answer. */
export const CreditCardRequest = Type.Object(
  {
    number: Type.String({ minLength: 1, maxLength: 40 }),
    cvv: Type.String({ minLength: 1, maxLength: 8 }),
    expiry_month: Type.Integer({ minimum: 1, maximum: 12 }),
    expiry_year: Type.Integer({ minimum: 1000, maximum: 9999 }),
    token: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' }))),
  },
  {
    $id: 'CreditCardRequest',
    additionalProperties: false,
    // A test card number: it passes the checks, and no network issues it.
    examples: [{ number: '4242424242424242', cvv: '123', expiry_month: 9, expiry_year: 2029 }],
  },
);

const nullableText = Nullable(Type.String());
export const BillingInfo = Type.Object(
  {
    first_name: nullableText,
    last_name: nullableText,
    email: nullableText,
    address: nullableText,
    city: nullableText,
    zip: nullableText,
    state: nullableText,
    country_code: nullableText,
    company: nullableText,
    vat_number: nullableText,
  },
  { $id: 'BillingInfo' },
);

export const BillingInfoRequest = Type.Object(
  {
    first_name: Line(255),
    last_name: Line(255),
    email: Type.String({ format: 'email', maxLength: 320 }),
    address: Line(500),
    city: Line(255),
    zip: Type.String({ minLength: 1, maxLength: 20, pattern: '^[A-Za-z0-9][A-Za-z0-9 -]*$' }),
    state: OptionalLine(255),
    /** ISO 3166-1 alpha-2. */
    country_code: Type.String({ pattern: '^[A-Za-z]{2}$' }),
    company: OptionalLine(255),
    vat_number: Type.Optional(Type.String({ maxLength: 32, pattern: '^[A-Za-z0-9 .-]*$' })),
  },
  {
    $id: 'BillingInfoRequest',
    additionalProperties: false,
    examples: [
      {
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'billing@acme.example',
        address: '12 Harbour Street',
        city: 'Bristol',
        zip: 'BS1 4RN',
        country_code: 'GB',
        company: 'Acme Ltd',
        vat_number: 'GB123456789',
      },
    ],
  },
);

export const BillingStatus = Type.Object({ is_valid: Type.Boolean(), message: Type.String() }, { $id: 'BillingStatus' });
export const BillingExternalId = Type.Object({ id: Type.String() }, { $id: 'BillingExternalId' });

export const OrganizationBillingUsageReportRequest = Type.Object(
  {
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    report_expiration_in_seconds: Type.Integer(),
  },
  { $id: 'OrganizationBillingUsageReportRequest', additionalProperties: false },
);
export const OrganizationBillingUsageReportResponse = Type.Object(
  { report_url: Type.String(), delete_report_url: Type.String() },
  { $id: 'OrganizationBillingUsageReportResponse' },
);

export const OrganizationChangePlanRequest = Type.Object(
  { plan: Type.Optional(Type.String({ maxLength: 64 })) },
  { $id: 'OrganizationChangePlanRequest', additionalProperties: false },
);
export const OrganizationCreditCodeRequest = Type.Object(
  { code: Type.Optional(Type.String({ maxLength: 128 })) },
  { $id: 'OrganizationCreditCodeRequest', additionalProperties: false },
);

export const ClusterCostParams = Type.Object({ organizationId: Uuid, clusterId: Uuid }, { additionalProperties: false });
export const InvoiceParams = Type.Object({ organizationId: Uuid, invoiceId: Uuid }, { additionalProperties: false });
export const CreditCardParams = Type.Object({ organizationId: Uuid, creditCardId: Uuid }, { additionalProperties: false });

/** The signed download routes: a malformed or missing part is the same as a forged one (404), so these are loose. */
export const DownloadParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
export const SignedQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 32 })),
  signature: Type.Optional(Type.String({ maxLength: 128 })),
});
