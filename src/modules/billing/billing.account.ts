import { isoTimestamp } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { checkCard, isCardExpired, type CardInput } from './billing.cards.ts';
import type { BillingContext } from './billing.context.ts';
import * as repo from './billing.repo.ts';

function cardView(row: repo.CreditCardRow, now: Date) {
  return {
    id: row.id,
    created_at: row.created_at,
    expiry_month: row.expiry_month,
    expiry_year: row.expiry_year,
    last_digit: row.last_digits,
    is_expired: isCardExpired(row.expiry_month, row.expiry_year, now),
    brand: row.brand,
  };
}

const EMPTY_BILLING_INFO = {
  first_name: null,
  last_name: null,
  email: null,
  address: null,
  city: null,
  zip: null,
  state: null,
  country_code: null,
  company: null,
  vat_number: null,
};

function billingInfoView(row: repo.BillingInfoRow | undefined) {
  if (row === undefined) return EMPTY_BILLING_INFO;
  const { organization_id: _organization, updated_at: _updated, ...fields } = row;
  return fields;
}

export interface BillingInfoInput {
  first_name: string;
  last_name: string;
  email: string;
  address: string;
  city: string;
  zip: string;
  state?: string | undefined;
  country_code: string;
  company?: string | undefined;
  vat_number?: string | undefined;
}

/** The organization's billing account: who is billed (billing info, the external customer id) and its cards. */
export function createBillingAccount(context: BillingContext) {
  const { deps } = context;
  const { db, clock } = deps;
  const { requireOrganization } = context;

  async function listOrganizationCreditCards(organizationId: string) {
    await requireOrganization(organizationId);
    const now = clock.now();
    return (await repo.listCreditCards(db, organizationId)).map((row) => cardView(row, now));
  }

  async function addCreditCard(organizationId: string, input: CardInput & { token?: string | null | undefined }) {
    await requireOrganization(organizationId);
    const now = clock.now();
    const card = checkCard(input, now);
    const providerToken =
      (await deps.payments.registerCard({ organizationId, digits: card.digits, cvv: input.cvv, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear })) ??
      input.token ??
      null;
    const row: repo.CreditCardRow = {
      id: newId(),
      organization_id: organizationId,
      brand: card.brand,
      last_digits: card.lastDigits,
      expiry_month: card.expiryMonth,
      expiry_year: card.expiryYear,
      provider_token: providerToken,
      created_at: now.toISOString(),
    };
    await repo.insertCreditCard(db, row);
    return cardView(row, now);
  }

  async function deleteCreditCard(organizationId: string, creditCardId: string): Promise<void> {
    await requireOrganization(organizationId);
    if (!(await repo.deleteCreditCard(db, organizationId, creditCardId))) throw notFound(`credit card ${creditCardId} not found`);
  }

  async function getOrganizationBillingInfo(organizationId: string) {
    await requireOrganization(organizationId);
    return billingInfoView(await repo.findBillingInfo(db, organizationId));
  }

  async function editOrganizationBillingInfo(organizationId: string, input: BillingInfoInput) {
    await requireOrganization(organizationId);
    const row: repo.BillingInfoRow = {
      organization_id: organizationId,
      first_name: input.first_name,
      last_name: input.last_name,
      email: input.email,
      address: input.address,
      city: input.city,
      zip: input.zip,
      state: input.state ?? null,
      country_code: input.country_code.toUpperCase(),
      company: input.company ?? null,
      vat_number: input.vat_number ?? null,
      updated_at: isoTimestamp(clock),
    };
    await repo.upsertBillingInfo(db, row);
    return billingInfoView(row);
  }

  /** Stable for the organization's life and derived, so reading it writes nothing; it reveals nothing of the id. */
  async function getOrganizationBillingExternalId(organizationId: string) {
    await requireOrganization(organizationId);
    return { id: `cus_${sha256Hex(`slipway-billing-customer:${organizationId}`).slice(0, 24)}` };
  }

  return {
    listOrganizationCreditCards,
    addCreditCard,
    deleteCreditCard,
    getOrganizationBillingInfo,
    editOrganizationBillingInfo,
    getOrganizationBillingExternalId,
  };
}
