/**
 * The API's field messages in words. Schema validation answers what the validator says, and for a pattern or a format
 * that is the rule itself ("must match pattern \"^[a-z0-9][a-z0-9-]*$\""): right for a program, unreadable under a
 * form field. The console says what the rule asks instead ("must start with a lowercase letter or a digit and contain
 * only lowercase letters, digits and hyphens"). Every other message passes through unchanged. No DOM: unit-tested in
 * test/console-field-messages.test.ts.
 */

/** Rules whose shape the general description below would say poorly (alternatives, dotted numbers, fixed prefixes). */
const KNOWN_PATTERNS: Record<string, string> = {
  '^[0-9a-f-]{36}$': 'must be an id (36 characters: hexadecimal digits and hyphens)',
  '^\\d+\\.\\d+$': 'must be a version such as 1.2',
  '^\\d+\\.\\d+(\\.\\d+)?$': 'must be a version such as 1.2 or 1.2.3',
  '^\\d+\\.\\d+(?:\\.\\d+)?(?:-[0-9A-Za-z.]+)?$': 'must be a version such as 1.2, 1.2.3 or 1.2.3-rc.1',
  '^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$': 'must be a semantic version such as 1.2.3',
  '^[0-9a-f]{7,40}$': 'must be a commit hash (7 to 40 lowercase hexadecimal digits)',
  '^[^\\s@]+@[^\\s@]+$': 'must be an e-mail address',
  '^https?://[^\\x00-\\x20\\x7f]+$': 'must be an http:// or https:// URL without spaces',
  '^https?://[^\\s\\x00-\\x1f\\x7f]+$': 'must be an http:// or https:// URL without spaces',
  '^https://': 'must be an https:// URL',
  '^/[^\\x00-\\x20\\x7f]*$': 'must be a path starting with / and without spaces',
  '^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$':
    'must be an image repository name: lowercase letters and digits, parts separated by ".", "_" or "-", and "/" between path components',
  '^[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*)*$':
    'must be an image repository name: lowercase letters and digits, parts separated by ".", "_" or "-", and "/" between path components',
  '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$': 'must be 1 to 63 letters, digits and hyphens, starting and ending with a letter or a digit',
  '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$': 'must be 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or a digit',
  '^[^\\S\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$': 'must not be blank, and must not contain line breaks or other control characters',
  '^[^\\x00]*\\S[^\\x00]*$': 'must not be blank',
  '^[\\x21-\\x7e]+$': 'must not be empty, and must contain only visible ASCII characters (no spaces)',
  '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$': 'must be an id (a UUID such as 0190f6a2-1c3b-7d4e-8f00-123456789abc)',
  '^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$': 'must be an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)',
  '^(//iam\\.googleapis\\.com/)?projects/[0-9]+/locations/[a-z0-9-]+/workloadIdentityPools/[A-Za-z0-9_-]+/providers/[A-Za-z0-9_-]+$':
    'must be a workload identity provider (projects/<number>/locations/<location>/workloadIdentityPools/<pool>/providers/<provider>)',
  '^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}/[0-9]{1,2}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*/[0-9]{1,3})$': 'must be a network in CIDR notation (such as 10.0.0.0/16 or fd00::/8)',
  '^[^\\x00-\\x1f\\x7f]+\\.tfvars(?:\\.json)?$': 'must be a file name ending in .tfvars or .tfvars.json',
  '^/[^\\x00-\\x1f\\x7f]*$': 'must be a path starting with /, without line breaks or other control characters',
  '^-[^\\x00-\\x1f\\x7f]*$': 'must be a command-line option starting with -, without line breaks or other control characters',
  '^[A-Za-z]{2}$': 'must be a two-letter code (such as FR)',
};

const FORMATS: Record<string, string> = {
  email: 'must be an e-mail address',
  uri: 'must be a full URL (such as https://example.com)',
  url: 'must be a full URL (such as https://example.com)',
  uuid: 'must be an id',
  date: 'must be a date (YYYY-MM-DD)',
  'date-time': 'must be a date and time (such as 2026-01-31T12:00:00Z)',
  hostname: 'must be a host name',
  ipv4: 'must be an IPv4 address',
  ipv6: 'must be an IPv6 address',
};

const PUNCTUATION: Record<string, [singular: string, plural: string]> = {
  '-': ['a hyphen', 'hyphens'],
  _: ['an underscore', 'underscores'],
  '.': ['a dot', 'dots'],
  '/': ['a slash', 'slashes'],
  ':': ['a colon', 'colons'],
  '+': ['a plus sign', 'plus signs'],
  '=': ['an equals sign', 'equals signs'],
  ',': ['a comma', 'commas'],
  '@': ['an at sign', 'at signs'],
  ' ': ['a space', 'spaces'],
};

interface CharacterKinds {
  lower: boolean;
  upper: boolean;
  digits: boolean;
  others: string[];
}

/** The kinds of characters a positive character class `[...]` (its body) allows. */
function kindsOfClass(body: string): CharacterKinds {
  const kinds: CharacterKinds = { lower: false, upper: false, digits: false, others: [] };
  let rest = body;
  const has = (range: string): boolean => {
    if (!rest.includes(range)) return false;
    rest = rest.replace(range, '');
    return true;
  };
  kinds.lower = has('a-z');
  kinds.upper = has('A-Z');
  const digitRange = has('0-9');
  const digitClass = has('\\d');
  kinds.digits = digitRange || digitClass;
  const hexLower = has('a-f');
  const hexUpper = has('A-F');
  if (hexLower || hexUpper) kinds.others.push('a-f');
  for (const character of rest.replace(/\\(.)/g, '$1')) {
    if (!kinds.others.includes(character)) kinds.others.push(character);
  }
  return kinds;
}

function joined(words: string[], conjunction: 'and' | 'or'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1] as string}`;
}

/** "lowercase letters, digits and hyphens" (plural), or "a lowercase letter or a digit" (singular). */
function describeKinds(kinds: CharacterKinds, singular: boolean): string {
  const words: string[] = [];
  if (kinds.lower && kinds.upper) words.push(singular ? 'a letter' : 'letters');
  else if (kinds.lower) words.push(singular ? 'a lowercase letter' : 'lowercase letters');
  else if (kinds.upper) words.push(singular ? 'an uppercase letter' : 'uppercase letters');
  if (kinds.digits) words.push(singular ? 'a digit' : 'digits');
  for (const other of kinds.others) {
    const named = other === 'a-f' ? ['a letter from a to f', 'letters a to f'] : PUNCTUATION[other];
    words.push(named === undefined ? `"${other}"` : (named[singular ? 0 : 1] as string));
  }
  return joined(words, singular ? 'or' : 'and');
}

function sameKinds(a: CharacterKinds, b: CharacterKinds): boolean {
  return a.lower === b.lower && a.upper === b.upper && a.digits === b.digits && [...a.others].sort().join('') === [...b.others].sort().join('');
}

/** The words for a pattern this module has no sentence for: what the characters may be, and how it must start. */
function describePattern(pattern: string): string {
  const known = KNOWN_PATTERNS[pattern];
  if (known !== undefined) return known;
  const classes = [...pattern.matchAll(/\[(\^?)((?:\\.|[^\]\\])*)\]/g)].map((match) => ({ negated: match[1] === '^', body: match[2] as string }));
  if (classes.length > 0 && classes.every((entry) => entry.negated)) {
    // The rules that only forbid characters (control characters, NUL, spaces, slashes).
    const forbidden = classes.map((entry) => entry.body).join('');
    const words: string[] = [];
    if (/\\x00-\\x(1f|20)/.test(forbidden)) words.push('line breaks or other control characters');
    else if (forbidden.includes('\\x00')) words.push('NUL characters');
    if (forbidden.includes('\\x20') || forbidden.includes('\\s')) words.unshift('spaces');
    const extra = forbidden.replace(/\\x[0-9a-f]{2}(-\\x[0-9a-f]{2})?|\\s/g, '').replace(/\\(.)/g, '$1');
    for (const character of extra) words.push(`"${character}"`);
    const empty = /\]\+\$$/.test(pattern) ? 'must not be empty, and ' : '';
    return `${empty}must not contain ${joined(words, 'or')}`;
  }
  const positive = classes.filter((entry) => !entry.negated);
  if (positive.length === 0 || classes.some((entry) => entry.negated)) return 'is not in the format this field accepts';
  const all: CharacterKinds = { lower: false, upper: false, digits: false, others: [] };
  for (const kinds of positive.map((entry) => kindsOfClass(entry.body))) {
    all.lower ||= kinds.lower;
    all.upper ||= kinds.upper;
    all.digits ||= kinds.digits;
    for (const other of kinds.others) if (!all.others.includes(other)) all.others.push(other);
  }
  // A literal character between the classes (the "-" of "subnet-", an escaped dot) is allowed too.
  const literals = pattern
    .replace(/\[(?:\\.|[^\]\\])*\]/g, '')
    .replace(/\{\d+(,\d*)?\}|\(\?:|[()^$*+?|]/g, '')
    .replace(/\\(.)/g, '$1');
  for (const character of literals) if (!/[a-z0-9]/i.test(character) && !all.others.includes(character)) all.others.push(character);
  const allowed = `contain only ${describeKinds(all, false)}`;
  const first = /^\^\[((?:\\.|[^\]\\])*)\]/.exec(pattern);
  if (first !== null) {
    const start = kindsOfClass(first[1] as string);
    if (!sameKinds(start, all)) return `must start with ${describeKinds(start, true)} and ${allowed}`;
  }
  return `must ${allowed}`;
}

/** The message to show at a field for the API's detail `message` (unchanged unless it states a pattern or a format). */
export function readableFieldMessage(message: string): string {
  const pattern = /^must match pattern "(.*)"$/s.exec(message);
  if (pattern !== null) return describePattern(pattern[1] as string);
  const format = /^must match format "(.*)"$/.exec(message);
  if (format !== null) return FORMATS[format[1] as string] ?? `must be a valid ${(format[1] as string).replace(/-/g, ' ')}`;
  return message;
}
