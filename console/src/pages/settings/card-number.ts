/**
 * A card number as typed (spaces and dashes allowed) checked in the browser before it is sent: 12 to 19 digits whose
 * Luhn checksum holds. The API checks it again (with the network and expiry); this only saves a round trip and says
 * what is wrong while the person types. No DOM: unit-tested in test/console-access-billing.test.ts.
 */
export function cardDigitsOf(typed: string): string | undefined {
  const compact = typed.replace(/[\s-]/g, '');
  return /^\d{12,19}$/.test(compact) ? compact : undefined;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** What is wrong with a typed card number, or undefined when it may be sent (an empty field says nothing yet). */
export function cardNumberProblem(typed: string): string | undefined {
  if (typed.trim() === '') return undefined;
  if (/[^\d\s-]/.test(typed)) return 'A card number has only digits (spaces allowed).';
  const digits = cardDigitsOf(typed);
  if (digits === undefined) return 'A card number has 12 to 19 digits.';
  return luhnValid(digits) ? undefined : 'This is not a valid card number: check the digits.';
}

/** The number in groups of four as typed, for reading it back (digits only, at most 19). */
export function groupedCardNumber(typed: string): string {
  const digits = typed.replace(/\D/g, '').slice(0, 19);
  return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
}
