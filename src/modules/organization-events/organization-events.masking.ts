import { TOKEN_PREFIXES } from '../../auth/tokens.ts';

/**
 * The change summary of an event is the request body with every secret replaced by MASK, decided three ways, any of
 * which masks:
 *
 *   by field name   password, secret, token, private/access/api keys, credentials, kubeconfig, certificates, … at any
 *                   depth (names of ids, names and types — `git_token_id`, `token_name` — are not secrets)
 *   by operation    the `value` of a secret (operations on secrets), or of a variable sent with `is_secret: true`;
 *                   the `number` of a credit card
 *   by value        text that is a secret whatever its field: Slipway tokens, PEM blocks, JWTs, card numbers, and
 *                   the user information of URLs (`https://user:password@host`)
 *
 * A summary larger than MAX_CHANGE_CHARS keeps its top-level field names only, and anything nested deeper than
 * MAX_CHANGE_DEPTH is a marker: the log shows what was sent, not megabytes of it.
 */
export const MASK = '********';
export const MAX_CHANGE_CHARS = 16_384;
/** Deeper than this, a summary keeps a marker: no request of the API nests this far, and a hostile one must not cost. */
export const MAX_CHANGE_DEPTH = 32;
const TOO_DEEP = '[too deep]';

const SECRET_NAME =
  /(pass(word|wd|phrase)?|secret|token|api_?key|access_?key|private_?key|ssh_?key|signing_?key|credential|kubeconfig|certificate|cert_?pem|authorization|cookie|cvv|cvc|card_?number|^pin$)/i;
/** Names that only refer to or describe a secret. */
const REFERENCE_NAME = /(_id|_ids|Id|Ids|_name|Name|_type|Type|_kind|_set|_start|_at|_url|_mode)$/;
const SECRET_VALUE = new RegExp(
  [
    `^(${Object.values(TOKEN_PREFIXES).join('|')})[A-Za-z0-9]{20,}`,
    '-----BEGIN [A-Z ]+-----',
    '^eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.',
  ].join('|'),
);

export function isSecretFieldName(name: string): boolean {
  return SECRET_NAME.test(name) && !REFERENCE_NAME.test(name);
}

const CARD_NUMBER = /^[0-9][0-9 -]{11,22}[0-9]$/;

/** A payment card number: 13–19 digits (spaces and dashes aside) that pass the Luhn check. */
function isCardNumber(text: string): boolean {
  if (!CARD_NUMBER.test(text)) return false;
  const digits = text.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * `scheme://user:password@host…` anywhere in a text: the user information is a credential (git and registry URLs).
 * Both parts are bounded so that a long run of letters costs linear time, not a scan to the end from every position.
 */
const URL_USER_INFO = /([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]{0,1024}@/gi;

function maskText(text: string): string {
  if (SECRET_VALUE.test(text) || isCardNumber(text)) return MASK;
  return text.replace(URL_USER_INFO, `$1${MASK}@`);
}

function maskValue(value: unknown, secretValueFields: ReadonlySet<string>, depth: number): unknown {
  if (typeof value === 'string') return maskText(value);
  if (value !== null && typeof value === 'object' && depth >= MAX_CHANGE_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => maskValue(item, secretValueFields, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const valueIsSecret = record.is_secret === true || secretValueFields.has('value');
  const masked: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(record)) {
    const secret = isSecretFieldName(name) || (name === 'value' && valueIsSecret) || (name !== 'value' && secretValueFields.has(name));
    // A flag (`is_secret`, `password_set`) says something about a secret but is none.
    const hidden = secret && field !== null && field !== undefined && typeof field !== 'boolean';
    masked[name] = hidden ? MASK : maskValue(field, secretValueFields, depth + 1);
  }
  return masked;
}

/** Fields that are secrets in an operation's body: secrets' values (createProjectSecret, …), cards' numbers. */
function secretValueFieldsOf(operationId: string): ReadonlySet<string> {
  if (/Secret/.test(operationId)) return new Set(['value']);
  if (/CreditCard/.test(operationId)) return new Set(['number']);
  // The GitHub App's setup code is a one-time credential (exchanged for the installation's access).
  if (operationId === 'organizationGithubAppConnect') return new Set(['code']);
  return new Set();
}

/** The stored change summary of a request body: JSON with secrets masked, or null for a request without one. */
export function changeSummary(operationId: string, body: unknown): string | null {
  if (body === undefined || body === null) return null;
  const masked = maskValue(body, secretValueFieldsOf(operationId), 0);
  const text = JSON.stringify(masked);
  if (text.length <= MAX_CHANGE_CHARS) return text;
  const fields = masked !== null && typeof masked === 'object' && !Array.isArray(masked) ? Object.keys(masked) : [];
  return JSON.stringify({ truncated: true, fields });
}
