import { badRequest, type FieldProblem } from '../../lib/errors.ts';

/**
 * Card checks done before anything is kept. Only the brand, the last four digits and the expiry leave this file;
 * the number and cvv are dropped as soon as they are checked (docs/billing.md).
 */

export interface CardInput {
  number: string;
  cvv: string;
  expiry_month: number;
  expiry_year: number;
}

export interface CheckedCard {
  brand: string;
  lastDigits: string;
  expiryMonth: number;
  expiryYear: number;
  /** The digits, for a payment provider to tokenise; never stored. */
  digits: string;
}

interface BrandRule {
  brand: string;
  prefix: RegExp;
  lengths: number[];
  cvvLength: number;
}

/** Issuer identification number ranges of the common networks. */
const BRANDS: BrandRule[] = [
  { brand: 'AMERICAN_EXPRESS', prefix: /^3[47]/, lengths: [15], cvvLength: 4 },
  { brand: 'VISA', prefix: /^4/, lengths: [13, 16, 19], cvvLength: 3 },
  { brand: 'MASTERCARD', prefix: /^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16], cvvLength: 3 },
  { brand: 'DISCOVER', prefix: /^(6011|65|64[4-9])/, lengths: [16, 19], cvvLength: 3 },
  { brand: 'DINERS_CLUB', prefix: /^(36|38|30[0-5])/, lengths: [14, 16], cvvLength: 3 },
  { brand: 'JCB', prefix: /^35(2[89]|[3-8]\d)/, lengths: [16, 17, 18, 19], cvvLength: 3 },
  { brand: 'UNIONPAY', prefix: /^62/, lengths: [16, 17, 18, 19], cvvLength: 3 },
];

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function brandOf(digits: string): BrandRule | undefined {
  return BRANDS.find((rule) => rule.prefix.test(digits) && rule.lengths.includes(digits.length));
}

/** A card is usable through the last day of its expiry month (UTC). */
export function isCardExpired(expiryMonth: number, expiryYear: number, now: Date): boolean {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  return expiryYear < year || (expiryYear === year && expiryMonth < month);
}

/**
 * Validates a card as given. Spaces and dashes between digit groups are allowed, as people type them. Messages
 * never repeat the number or the cvv.
 */
export function checkCard(input: CardInput, now: Date): CheckedCard {
  const problems: FieldProblem[] = [];
  const digits = input.number.replace(/[\s-]/g, '');
  let rule: BrandRule | undefined;
  if (!/^\d{12,19}$/.test(digits)) {
    problems.push({ field: '/number', message: 'must be 12 to 19 digits' });
  } else if (!passesLuhn(digits)) {
    problems.push({ field: '/number', message: 'is not a valid card number (checksum)' });
  } else {
    rule = brandOf(digits);
    if (rule === undefined) problems.push({ field: '/number', message: 'is not a number of a supported card network' });
  }
  const cvvLength = rule?.cvvLength;
  if (!/^\d{3,4}$/.test(input.cvv) || (cvvLength !== undefined && input.cvv.length !== cvvLength)) {
    problems.push({ field: '/cvv', message: cvvLength === undefined ? 'must be 3 or 4 digits' : `must be ${cvvLength} digits for this card` });
  }
  if (!Number.isInteger(input.expiry_month) || input.expiry_month < 1 || input.expiry_month > 12) {
    problems.push({ field: '/expiry_month', message: 'must be 1 to 12' });
  }
  const thisYear = now.getUTCFullYear();
  if (!Number.isInteger(input.expiry_year) || input.expiry_year > thisYear + 20) {
    problems.push({ field: '/expiry_year', message: `must be a four-digit year no later than ${thisYear + 20}` });
  } else if (problems.every((problem) => problem.field !== '/expiry_month') && isCardExpired(input.expiry_month, input.expiry_year, now)) {
    problems.push({ field: '/expiry_year', message: 'the card has expired' });
  }
  if (problems.length > 0 || rule === undefined) throw badRequest('invalid credit card', problems);
  return { brand: rule.brand, lastDigits: digits.slice(-4), expiryMonth: input.expiry_month, expiryYear: input.expiry_year, digits };
}
