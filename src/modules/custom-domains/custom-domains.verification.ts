import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import type { DomainResolver } from './custom-domains.dns.ts';

/**
 * What makes a custom domain valid and verified (docs/service-kinds.md, "Custom domains").
 *
 * A domain is a lower-case ASCII host name (an internationalised one is stored in punycode) of at least two labels,
 * optionally a wildcard `*.example.com`; not an IP address, not `localhost`, and not under the installation's own
 * apps domain (those names are the platform's).
 *
 * Verification asks DNS, never trusts the request:
 * - the domain's CNAME points at the service's own host name (`validation_domain`) → MATCHES_LOAD_BALANCER_HOST,
 *   VALIDATED: traffic for it reaches the service, which is what the proxy needs to route it;
 * - the domain resolves to addresses directly (an apex domain cannot hold a CNAME) → RESOLVES_TO_IP, and it is
 *   VALIDATED only if those are the validation domain's own addresses *and* the TXT record
 *   `_slipway-challenge.<domain>` holds `slipway-verification=<token>` (proof of ownership: pointing an A record at
 *   a shared address proves nothing);
 * - a CNAME elsewhere → DOMAIN_LINKED_TO_WRONG_HOST, VALIDATION_FAILED; nothing at all → DOMAIN_NOT_CONFIGURED,
 *   VALIDATION_PENDING;
 * - a DNS failure (timeout, SERVFAIL) → GENERIC_FAILURE with its details, and the status stays what it was: an
 *   unreachable resolver says nothing about the domain.
 * A wildcard is checked through one name it covers (`slipway-wildcard-check.<base>`) and its base's TXT record.
 */

export const CUSTOM_DOMAIN_STATUSES = ['VALIDATION_PENDING', 'VALIDATED', 'VALIDATION_FAILED'] as const;
export type CustomDomainStatus = (typeof CUSTOM_DOMAIN_STATUSES)[number];

export const CHECKED_DOMAIN_STATUSES = ['RESOLVES_TO_IP', 'MATCHES_LOAD_BALANCER_HOST', 'DOMAIN_NOT_CONFIGURED', 'DOMAIN_LINKED_TO_WRONG_HOST', 'GENERIC_FAILURE'] as const;
export type CheckedDomainStatus = (typeof CHECKED_DOMAIN_STATUSES)[number];

export const CHALLENGE_LABEL = '_slipway-challenge';
const WILDCARD_PROBE_LABEL = 'slipway-wildcard-check';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The domain as stored, or the reason it cannot be one. */
export function normaliseDomain(raw: string, appsDomain: string): { domain: string } | { problem: string } {
  const trimmed = raw.trim().replace(/\.$/, '');
  const wildcard = trimmed.startsWith('*.');
  const base = wildcard ? trimmed.slice(2) : trimmed;
  if (base.includes('*')) return { problem: 'a wildcard is only allowed as the whole first label (*.example.com)' };
  if (isIP(base) !== 0 || /^\[.*\]$/.test(base)) return { problem: 'must be a domain name, not an IP address' };
  const ascii = domainToASCII(base);
  if (ascii === '') return { problem: 'is not a valid domain name' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { problem: 'must have at least two labels (example.com)' };
  if (!labels.every((label) => LABEL.test(label))) return { problem: 'labels are letters, digits and inner hyphens, 1 to 63 characters' };
  if (/^\d+$/.test(labels.at(-1) ?? '')) return { problem: 'the top-level label cannot be numeric' };
  const domain = wildcard ? `*.${ascii}` : ascii;
  if (domain.length > 253) return { problem: 'must be at most 253 characters' };
  if (labels.at(-1) === 'localhost' || ascii === appsDomain || ascii.endsWith(`.${appsDomain}`)) {
    return { problem: `names under ${appsDomain} are the platform's own` };
  }
  return { domain };
}

/** Where the ownership TXT record lives, and what it holds. */
export function challengeRecord(domain: string, token: string): { name: string; value: string } {
  return { name: `${CHALLENGE_LABEL}.${domain.replace(/^\*\./, '')}`, value: `slipway-verification=${token}` };
}

export interface DomainCheck {
  checked: CheckedDomainStatus;
  /** The verdict, or undefined for a DNS failure (the stored status is kept). */
  status: CustomDomainStatus | undefined;
  details: string | null;
}

export async function checkDomain(resolver: DomainResolver, domain: string, validationDomain: string, token: string): Promise<DomainCheck> {
  const queried = domain.startsWith('*.') ? `${WILDCARD_PROBE_LABEL}.${domain.slice(2)}` : domain;
  const target = validationDomain.toLowerCase();
  try {
    const cnames = await resolver.cname(queried);
    if (cnames.length > 0) {
      if (cnames.includes(target)) return { checked: 'MATCHES_LOAD_BALANCER_HOST', status: 'VALIDATED', details: null };
      return { checked: 'DOMAIN_LINKED_TO_WRONG_HOST', status: 'VALIDATION_FAILED', details: `${queried} is a CNAME of ${cnames.join(', ')}, not of ${target}` };
    }
    const addresses = await resolver.addresses(queried);
    if (addresses.length === 0) return { checked: 'DOMAIN_NOT_CONFIGURED', status: 'VALIDATION_PENDING', details: `${queried} has no CNAME, A or AAAA record yet` };
    const [expected, records] = await Promise.all([resolver.addresses(target), resolver.txt(challengeRecord(domain, token).name)]);
    const sameAddresses = expected.length > 0 && addresses.every((address) => expected.includes(address));
    const owned = records.includes(challengeRecord(domain, token).value);
    if (sameAddresses && owned) return { checked: 'RESOLVES_TO_IP', status: 'VALIDATED', details: null };
    if (!sameAddresses) {
      return { checked: 'RESOLVES_TO_IP', status: 'VALIDATION_FAILED', details: `${queried} resolves to ${addresses.join(', ')}, not to the addresses of ${target}` };
    }
    return {
      checked: 'RESOLVES_TO_IP',
      status: 'VALIDATION_PENDING',
      details: `${queried} resolves to the right addresses; add the TXT record ${challengeRecord(domain, token).name} to prove ownership`,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { checked: 'GENERIC_FAILURE', status: undefined, details: `DNS lookup failed${code === undefined ? '' : ` (${code})`}` };
  }
}
